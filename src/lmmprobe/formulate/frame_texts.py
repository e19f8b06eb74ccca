"""Texts shown between a video's frames (subtitles), placed by LongVideoBench's rule.

A sample's timed texts (`lmmprobe.schema.frame_texts`, ``metadata["frame_texts"]``) are placed
by the formulator among the frames the run sampled (`place`), so the user turn is the frames
with the texts between them, then the question; under ``--frames`` every policy's frames get
their own placement.

The rule is LongVideoBench's ``insert_subtitles_into_frames`` (longvideobench/LongVideoBench @
fc3c553, ``longvideobench/longvideobench_dataset.py``): for each text in order, the frames not
yet shown whose time is at most the text's middle (``(start + end) / 2``) are shown first; the
text is shown when some frame (of all of them) lies strictly inside its span, widened to one
second around its middle when shorter than a second; frames left over come after the last text.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from lmmprobe.schema.frame_texts import FrameText

__all__ = ["place"]


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
