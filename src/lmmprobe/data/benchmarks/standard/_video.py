"""What the video benchmark definitions share: clips inside the copy, parquet rows, subtitles.

A video benchmark's row names a video file inside its local copy; `clip` checks the path stays
inside the copy's folder and samples the clip's frames with the benchmark's own frame policy
(`lmmprobe.schema.video.FramePolicy`, named on the definition), unless the run gives one
(``--frames``). `parquet_rows` reads a release's parquet file a batch at a time after its
decoded size is checked. `read_subtitles` reads an ``.srt`` file, bounded in size and in the
cues it holds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import RowContext
from lmmprobe.data.files import UnreadableFile, check_parquets, read_regular
from lmmprobe.data.rows import RowError, outside_folder
from lmmprobe.data.video import sample_video
from lmmprobe.schema.video import FramePolicy, VideoRef

__all__ = ["Cue", "clip", "parquet_rows", "read_subtitles", "subtitles_at"]

_BATCH = 1024
"""Rows decoded at a time from a parquet file."""

MAX_SUBTITLE_BYTES = 8 << 20
"""The largest subtitle file read (8 MiB): a two-hour film's subtitles are about 100 KB."""
MAX_CUES = 100_000
"""The most cues one subtitle file may hold (one a second for 27 hours)."""

_TIME = re.compile(
    r"\s*(\d{1,3}):(\d{1,2}):(\d{1,2})[,.](\d{1,3})\s*-->\s*(\d{1,3}):(\d{1,2}):(\d{1,2})[,.](\d{1,3})"
)
# Video-MME's cues wrap their text in <font color="white" size=".72c">...</font>: the text is
# what lies between (the tag's attributes bounded, so no backtracking runs away).
_FONT = re.compile(r"<font[^<>]{0,200}>(.*?)</font>")


def clip(
    ctx: RowContext,
    relative: str,
    policy: FramePolicy,
    field: str,
    *,
    start: float | None = None,
    end: float | None = None,
) -> VideoRef:
    """The video file `relative` of the copy, as a clip sampled with `policy` (or the run's).

    Raises:
        RowError: The path leaves the copy's folder, the file is missing, or it cannot be
            decoded (naming `field` and the file).

    """
    if ctx.root is None:
        raise RowError(field, "a video benchmark is read from a local copy's folder")
    escapes = outside_folder(relative, f"the copy's folder {ctx.root}")
    if escapes:
        raise RowError(field, escapes.replace("image path", "video path"))
    path = ctx.root / relative
    if not path.is_file():
        # One line: a release's id (and so the file's name) may hold a line break.
        shown = relative.replace("\r", "\\r").replace("\n", "\\n")
        raise RowError(field, f"video file not found: {shown} (looked in {ctx.root})")
    try:
        ref = VideoRef(path=str(path.resolve()), start=start, end=end, policy=policy)
    except ValueError as exc:
        raise RowError(field, str(exc).splitlines()[-1]) from None
    return sample_video(ref, field)


def parquet_rows(path: Path, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(PATH:N, row)`` for each row of a parquet file, after its decoded size is checked.

    Raises:
        DataError: The file is missing, not parquet, or decodes past the limits (one line).

    """
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    if not path.is_file():
        raise DataError(f"{path} not found: see `lmmprobe data show` for the fetch command")
    try:
        check_parquets([path], what=what)
        parquet = pq.ParquetFile(path)
        n = 0
        for batch in parquet.iter_batches(batch_size=_BATCH):
            for row in batch.to_pylist():
                n += 1
                yield f"{path}:{n}", row
    except UnreadableFile as exc:
        raise DataError(f"{exc}; fetch it again") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DataError(f"{path}: not a parquet file pyarrow can read ({exc})") from None


@dataclass(frozen=True)
class Cue:
    """One subtitle: shown from `start` to `end` seconds."""

    start: float
    end: float
    text: str


def _seconds(h: str, m: str, s: str, ms: str) -> float:
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def read_subtitles(path: Path, field: str) -> list[Cue]:
    """The cues of an ``.srt`` file, in file order; a cue's ``<font>`` text, else its lines.

    Raises:
        RowError: The file is over `MAX_SUBTITLE_BYTES`, not UTF-8, or holds more than
            `MAX_CUES` cues (naming `field` and the file).

    """
    try:
        raw = read_regular(path, MAX_SUBTITLE_BYTES, what="subtitles")
        text = raw.decode("utf-8-sig")
    except (OSError, DataError, UnicodeDecodeError) as exc:  # missing, too large, not UTF-8
        raise RowError(field, f"subtitles {path}: {str(exc).splitlines()[0]}") from None
    cues: list[Cue] = []
    for block in re.split(r"\r?\n\s*\r?\n", text):
        lines = block.strip("\r\n").splitlines()
        # A cue: its number, its times, its text (a block without times is not a cue).
        timed = next((i for i, line in enumerate(lines[:2]) if _TIME.match(line)), None)
        if timed is None:
            continue
        m = _TIME.match(lines[timed])
        assert m is not None
        body = " ".join(line.strip() for line in lines[timed + 1 :])
        font = _FONT.search(body)
        words = font.group(1) if font else body
        if words.strip():
            cues.append(Cue(_seconds(*m.groups()[:4]), _seconds(*m.groups()[4:]), words.strip()))
        if len(cues) > MAX_CUES:
            raise RowError(field, f"subtitles {path}: more than {MAX_CUES:,} cues")
    return cues


def subtitles_at(cues: list[Cue], times: list[float]) -> list[str]:
    """The cues shown at any of `times` (``start <= t < end``), each once, in file order."""
    ordered = sorted(times)
    shown = []
    for cue in cues:
        first = bisect.bisect_left(ordered, cue.start)  # the first time at or after its start
        if first < len(ordered) and ordered[first] < cue.end:
            shown.append(cue.text)
    return shown
