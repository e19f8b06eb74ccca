"""LongVideoBench (validation, without subtitles): the ``longvideobench`` definition.

Origin: Wu et al. 2024, LongVideoBench: A Benchmark for Long-context Interleaved Video-Language
Understanding (NeurIPS 2024 Datasets and Benchmarks, arXiv:2407.15754); data
longvideobench/LongVideoBench (``lvb_val.json``, the videos under ``videos/``), 1,337
validation questions with 4 or 5 options on videos of 8 s to an hour. Its own loader
(longvideobench/LongVideoBench @ `LONGVIDEOBENCH_COMMIT`, ``longvideobench_dataset.py``) gives
the frames (``load_video``: ``longvideobench=16``, the 16 frames its README says lmms-eval feeds
by default) and the text: ``Question: ...``, one ``A. ...`` line per candidate, the
instruction, here one a line (with ``insert_text=False``: no subtitles). The answer is read as
lmms-eval reads it (``longvideobench`` matcher), and the score is lmms-eval's
``longvideobench_aggregate_results`` Overall, which weighs every question alike: ``accuracy``.

``longvideobench-subtitles`` is the loader's default (``insert_text=True``): the subtitles
(``subtitles/SUBTITLE_PATH``, read by `subtitle_texts` as the loader reads them) are shown
between the frames by its ``insert_subtitles_into_frames`` (`lmmprobe.formulate.frame_texts`),
then the same question text.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.hemm_common import read_json
from lmmprobe.data.benchmarks.standard._choice import plain
from lmmprobe.data.benchmarks.standard._video import MAX_CUES, MAX_SUBTITLE_BYTES, clip
from lmmprobe.data.files import read_regular
from lmmprobe.data.jsonl import json_document
from lmmprobe.data.rows import outside_folder
from lmmprobe.schema import Sample
from lmmprobe.schema.frame_texts import FRAME_TEXTS
from lmmprobe.schema.video import FramePolicy

__all__ = [
    "LONGVIDEOBENCH",
    "LONGVIDEOBENCH_COMMIT",
    "LONGVIDEOBENCH_SUBTITLES",
    "POLICY",
    "subtitle_texts",
]

LONGVIDEOBENCH_COMMIT = "fc3c553250cfee6853a722f9b181f1b69f478426"
"""The longvideobench/LongVideoBench commit whose loader is reproduced."""

POLICY = FramePolicy.parse("longvideobench=16")
"""``load_video(video, duration, max_num_frames=16)``, over the annotation's duration."""

_FILES = {"validation": "lvb_val.json"}


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    name = _FILES.get(split)
    if name is None:
        raise DataError(f"longvideobench: split {split!r}: only validation has answers")
    rows = read_json(root, name)
    if not isinstance(rows, list):
        raise DataError(f"{root}/{name}: expected a list of questions")
    for n, row in enumerate(rows, 1):
        yield f"{root}/{name}:{n}", row


def _longvideobench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    candidates = row.get("candidates")
    if not isinstance(candidates, list) or not 2 <= len(candidates) <= 5:
        raise RowError("candidates", f"expected 2 to 5 option texts, got {candidates!r:.200}")
    if not all(isinstance(c, str) for c in candidates):
        raise RowError("candidates", "every option must be text")
    gold = row.get("correct_choice")
    if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(candidates):
        raise RowError("correct_choice", f"{gold!r:.40} is not an option's position")
    duration = row.get("duration")
    if isinstance(duration, bool) or not isinstance(duration, int | float) or not duration > 0:
        raise RowError("duration", f"expected the video's length in seconds, got {duration!r:.40}")
    video = clip(
        ctx, f"videos/{required_text(row, 'video_path')}", POLICY, "video_path", end=float(duration)
    )
    return Sample(
        id=required_text(row, "id"),
        question=required_text(row, "question"),
        choices=list(candidates),
        answer=gold,
        formulation="single_choice",
        video=video,
        metadata={
            # lmms-eval's breakdowns: --by duration_group (8-15 s, 15-60 s, 3-10 min, 15-60
            # min), --by question_category (its 17 categories).
            "duration_group": plain(row.get("duration_group")),
            "question_category": plain(row.get("question_category")),
            "topic_category": plain(row.get("topic_category")),
            "level": plain(row.get("level")),
        },
    )


LONGVIDEOBENCH = benchmark(
    Benchmark(
        name="longvideobench",
        groups=("video",),
        title="LongVideoBench (validation, without subtitles)",
        citation="Wu et al. 2024, LongVideoBench: A Benchmark for Long-context Interleaved "
        "Video-Language Understanding, NeurIPS 2024 Datasets and Benchmarks, arXiv:2407.15754",
        license="cc-by-nc-sa-4.0 (LongVideoBench README)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="Question: {question}\n{options}\nAnswer with the option's letter from "
            "the given choices directly.",
            source=f"longvideobench/LongVideoBench @ {LONGVIDEOBENCH_COMMIT[:7]} "
            "longvideobench/longvideobench_dataset.py (LongVideoBenchDataset.__getitem__ with "
            "insert_text=False: the frames, 'Question: ...', each candidate 'A. ...', the "
            "instruction; the list's texts one a line)",
            option_format="{mark}. {text}",
        ),
        to_sample=_longvideobench,
        hub_id="longvideobench/LongVideoBench",
        include=("lvb_val.json", "videos.tar.part.*"),
        after_download="cat videos.tar.part.* | tar -x",
        split="validation",
        splits=("validation",),
        size=1337,
        layout="files",
        read_files=_rows,
        matcher="longvideobench",
        notes=(
            "accuracy is lmms-eval's longvideobench_aggregate_results Overall (every question "
            "weighs alike); --by duration_group and --by question_category give its subsets. "
            "Answers are read by lmms-eval's parse_multi_choice_response (matcher "
            "longvideobench); where it picks a random option (no capital A-E read), lmmprobe "
            "counts the answer unparsed and wrong.",
            "Frames: longvideobench=16 (the loader's load_video over the annotation's "
            "duration: min(16, int(duration)) frames, evenly stepped from the first). "
            "--frames samples others.",
            "Without subtitles (insert_text=False): the loader's default, the subtitle lines "
            "between the frames, is longvideobench-subtitles.",
            "Revision not pinned: no commit id of longvideobench/LongVideoBench could be read "
            "offline here. The videos come as a split tar archive (videos.tar.part.*).",
        ),
        schema_confirmed=f"longvideobench/LongVideoBench @ {LONGVIDEOBENCH_COMMIT[:7]} "
        "longvideobench_dataset.py and lmms-eval @ 75571cf tasks/longvideobench/utils.py (id, "
        "question, candidates, correct_choice, duration, duration_group, question_category, "
        "video_path)",
    )
)


_MAX_STAMP = 64
"""The longest ``HH:MM:SS.fff`` subtitle time read (its parts go to ``int`` and ``float``)."""


def _seconds(value: Any, where: str) -> float:
    """``timestamp_to_seconds``: ``H:M:S`` as ``int(H) * 3600 + int(M) * 60 + float(S)``."""
    if not isinstance(value, str) or len(value) > _MAX_STAMP:
        raise RowError(
            "subtitle_path", f"{where}: expected a time 'HH:MM:SS.fff', got {value!r:.40}"
        )
    try:
        h, m, sec = value.split(":")
        return int(h) * 3600 + int(m) * 60 + float(sec)
    except ValueError:
        raise RowError("subtitle_path", f"{where}: {value!r} is not 'HH:MM:SS.fff'") from None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _seconds_of(value: Any) -> float | None:
    """A JSON number as seconds; None for anything else, or past what a float holds."""
    if not _number(value):
        return None
    try:
        return float(value)  # an integer of 400 digits overflows
    except OverflowError:
        return None


def subtitle_texts(subtitles: Any, offset: float, duration: float) -> list[dict[str, Any]]:
    """A subtitle file's lines as timed texts (`lmmprobe.schema.frame_texts`), in file order.

    As ``insert_subtitles_into_frames`` reads them: a ``{"timestamp": [start, end], "text"}``
    line whose ``end`` is not a float (an integer, or null) ends at the video's `duration`; a
    ``{"start": "HH:MM:SS.fff", "end", "line"}`` line's times are ``timestamp_to_seconds``'s;
    both less the video's ``starting_timestamp_for_subtitles`` (`offset`).

    Raises:
        RowError: Not a list of such lines, more than `MAX_CUES`, or a time that is not a
            finite number (naming the line).

    """
    if not isinstance(subtitles, list):
        raise RowError("subtitle_path", "expected a list of subtitle lines")
    if len(subtitles) > MAX_CUES:
        raise RowError("subtitle_path", f"{len(subtitles):,} lines, over {MAX_CUES:,}")
    out = []
    for i, line in enumerate(subtitles):
        where = f"line {i + 1}"
        if not isinstance(line, dict):
            raise RowError("subtitle_path", f"{where}: expected an object")
        if "timestamp" in line:
            stamp, text = line["timestamp"], line.get("text")
            first = _seconds_of(stamp[0]) if isinstance(stamp, list) and len(stamp) == 2 else None
            if first is None:
                raise RowError("subtitle_path", f"{where}: timestamp is not [start, end]")
            start = first
            end = stamp[1] if isinstance(stamp[1], float) else duration  # its isinstance check
        else:
            start, end = _seconds(line.get("start"), where), _seconds(line.get("end"), where)
            text = line.get("line")
        if not isinstance(text, str):
            raise RowError("subtitle_path", f"{where}: its text is missing")
        start, end = start - offset, end - offset
        if not (math.isfinite(start) and math.isfinite(end)):
            raise RowError("subtitle_path", f"{where}: its times are not finite")
        out.append({"text": text, "start": start, "end": end})
    return out


def _subtitles(row: Mapping[str, Any], ctx: RowContext, duration: float) -> list[dict[str, Any]]:
    """The row's subtitle file read (bounded) into timed texts."""
    relative = f"subtitles/{required_text(row, 'subtitle_path')}"
    given = row.get("starting_timestamp_for_subtitles")
    offset = _seconds_of(given)
    if offset is None or not math.isfinite(offset):
        raise RowError("starting_timestamp_for_subtitles", f"expected seconds, got {given!r:.40}")
    assert ctx.root is not None  # the video was found in it
    escapes = outside_folder(relative, f"the copy's folder {ctx.root}")
    if escapes:
        raise RowError("subtitle_path", escapes.replace("image path", "subtitle path"))
    path = ctx.root / relative
    try:
        raw = read_regular(path, MAX_SUBTITLE_BYTES, what="LongVideoBench subtitle file")
        value = json_document(str(path), raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, DataError) as exc:
        raise RowError("subtitle_path", str(exc).splitlines()[-1][:300]) from None
    return subtitle_texts(value, offset, duration)


def _longvideobench_subtitles(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    sample = _longvideobench(row, ctx)
    texts = _subtitles(row, ctx, float(row["duration"]))
    return sample.model_copy(update={"metadata": {**sample.metadata, FRAME_TEXTS: texts}})


LONGVIDEOBENCH_SUBTITLES = benchmark(
    Benchmark(
        name="longvideobench-subtitles",
        groups=("video",),
        title="LongVideoBench (validation, subtitles between the frames)",
        citation=LONGVIDEOBENCH.citation,
        license=LONGVIDEOBENCH.license,
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template=LONGVIDEOBENCH.prompt.template,
            source=f"longvideobench/LongVideoBench @ {LONGVIDEOBENCH_COMMIT[:7]} "
            "longvideobench/longvideobench_dataset.py (LongVideoBenchDataset.__getitem__ with "
            "insert_text=True, its default: insert_subtitles_into_frames's frames and "
            "subtitle lines, then 'Question: ...', each candidate 'A. ...', the instruction; "
            "the list's texts one a line)",
            option_format="{mark}. {text}",
        ),
        to_sample=_longvideobench_subtitles,
        hub_id=LONGVIDEOBENCH.hub_id,
        include=("lvb_val.json", "videos.tar.part.*", "subtitles.tar"),
        after_download="cat videos.tar.part.* | tar -x && tar -xf subtitles.tar",
        split="validation",
        splits=("validation",),
        size=1337,
        layout="files",
        read_files=_rows,
        matcher="longvideobench",
        notes=(
            "As longvideobench, with the loader's default insert_text=True: each subtitle "
            "line (subtitles/SUBTITLE_PATH, less starting_timestamp_for_subtitles) is shown "
            "after the frames up to its middle time, when some frame lies inside its span "
            "(widened to a second when shorter); frames after the last line follow it. "
            "Consecutive lines are one text part, one a line; the lines after the last frame "
            "begin the question's text. Under --frames each policy's frames get their own "
            "placement.",
            "A model that takes video natively (hf Qwen-VL, LLaVA-OneVision; openai video=url) "
            "gets these frames as images, each in its place, since a video input cannot hold "
            "text between its frames.",
            "Subtitle lines as the loader reads them: a 'timestamp' line whose end is not a "
            "float (an integer or null) ends at the video's duration; an 'HH:MM:SS.fff' line "
            "by timestamp_to_seconds. A line with a non-finite time, or a subtitle file over "
            "8 MiB or 100,000 lines, refuses its question (one line).",
            "Revision not pinned, as longvideobench. The subtitle archive's name "
            "subtitles.tar is from a third party's description of the hub repository, not "
            "confirmed offline here: check the folder holds subtitles/ after the fetch.",
        ),
        schema_confirmed=f"longvideobench/LongVideoBench @ {LONGVIDEOBENCH_COMMIT[:7]} "
        "longvideobench_dataset.py (subtitle_path, starting_timestamp_for_subtitles, the "
        "subtitle lines' two forms)",
    )
)
