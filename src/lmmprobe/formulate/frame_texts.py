"""Texts shown between a video's frames (subtitles), placed by LongVideoBench's rule.

A sample may carry timed texts in ``metadata["frame_texts"]`` (`FRAME_TEXTS`): a list of
``{"text", "start", "end"}`` in seconds of the video, in the order they are to be shown. The
formulator places them among the frames the run sampled (`place`), so the user turn is the
frames with the texts between them, then the question; under ``--frames`` every policy's frames
get their own placement.

The rule is LongVideoBench's ``insert_subtitles_into_frames`` (longvideobench/LongVideoBench @
fc3c553, ``longvideobench/longvideobench_dataset.py``): for each text in order, the frames not
yet shown whose time is at most the text's middle (``(start + end) / 2``) are shown first; the
text is shown when some frame (of all of them) lies strictly inside its span, widened to one
second around its middle when shorter than a second; frames left over come after the last text.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FRAME_TEXTS", "MAX_FRAME_TEXTS", "FrameText", "frame_texts", "place"]

FRAME_TEXTS = "frame_texts"
"""The sample metadata key of its timed texts (prompt-only: not copied into scored rows)."""

MAX_FRAME_TEXTS = 100_000
"""The most timed texts a sample carries (`lmmprobe.data.benchmarks.standard._video.MAX_CUES`)."""


@dataclass(frozen=True)
class FrameText:
    """A text shown from `start` to `end` seconds of the video."""

    text: str
    start: float
    end: float


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


def _finite(value: Any) -> float | None:
    """A finite number as a float; None for anything else (an integer past a float too)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def place(texts: Sequence[FrameText], times: Sequence[float]) -> list[tuple[int, str]]:
    """Where each shown text goes: (how many frames come before it, its text), in order.

    Args:
        texts: The timed texts, in the order they are shown.
        times: The frames' times in seconds, in the order they are shown (time order).

    Returns:
        The texts shown, each with the number of frames shown before it; the texts whose span
        holds no frame are left out.

    """
    ordered = sorted(times)  # whether a frame lies in a span does not depend on the order
    out: list[tuple[int, str]] = []
    shown = 0
    for t in texts:
        middle = (t.start + t.end) / 2
        while shown < len(times) and times[shown] <= middle:
            shown += 1
        start, end = t.start, t.end
        if end - start < 1:
            start, end = middle - 0.5, middle + 0.5
        first_after = bisect.bisect_right(ordered, start)
        if first_after < len(ordered) and ordered[first_after] < end:
            out.append((shown, t.text))
    return out
