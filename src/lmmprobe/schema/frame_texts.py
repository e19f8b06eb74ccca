"""Timed texts a sample shows between its video's frames: ``metadata["frame_texts"]``.

A sample may carry timed texts (subtitles) in ``metadata["frame_texts"]`` (`FRAME_TEXTS`): a
list of ``{"text", "start", "end"}`` in seconds of the video, in the order they are shown.
`frame_texts` reads and checks them (a sample is validated with it, so a bad value is its
row's one line at load); `lmmprobe.formulate.frame_texts.place` puts them among the frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["FRAME_TEXTS", "MAX_FRAME_TEXTS", "FrameText", "frame_texts"]

FRAME_TEXTS = "frame_texts"
"""The sample metadata key of its timed texts (prompt-only: not copied into scored rows)."""

MAX_FRAME_TEXTS = 100_000
"""The most timed texts a sample carries (as many as a subtitle file's cues)."""


@dataclass(frozen=True)
class FrameText:
    """A text shown from `start` to `end` seconds of the video."""

    text: str
    start: float
    end: float


def _finite(value: Any) -> float | None:
    """A finite number as a float; None for anything else (an integer past a float too)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def frame_texts(metadata: dict[str, Any]) -> list[FrameText]:
    """A sample's timed texts (`FRAME_TEXTS`), in order; none where it has none.

    Raises:
        ValueError: The value is not a list of ``{"text": str, "start": number, "end":
            number}`` with finite times, or holds more than `MAX_FRAME_TEXTS`.

    """
    value = metadata.get(FRAME_TEXTS)
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_FRAME_TEXTS:
        raise ValueError(f"{FRAME_TEXTS}: expected a list of at most {MAX_FRAME_TEXTS} texts")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError(f"{FRAME_TEXTS}[{i}]: expected {{text, start, end}}")
        start, end = _finite(item.get("start")), _finite(item.get("end"))
        if start is None or end is None:
            raise ValueError(f"{FRAME_TEXTS}[{i}]: start and end must be finite numbers")
        out.append(FrameText(item["text"], start, end))
    return out
