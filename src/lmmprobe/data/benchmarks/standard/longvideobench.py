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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.hemm_common import read_json
from lmmprobe.data.benchmarks.standard._choice import plain
from lmmprobe.data.benchmarks.standard._video import clip
from lmmprobe.schema import Sample
from lmmprobe.schema.video import FramePolicy

__all__ = ["LONGVIDEOBENCH", "LONGVIDEOBENCH_COMMIT", "POLICY"]

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
            "Without subtitles only: the loader's default interleaves subtitle lines between "
            "the frames they fall among, which lmmprobe's prompts cannot (its frames come "
            "before the text); that setting is not defined.",
            "Revision not pinned: no commit id of longvideobench/LongVideoBench could be read "
            "offline here. The videos come as a split tar archive (videos.tar.part.*).",
        ),
        schema_confirmed=f"longvideobench/LongVideoBench @ {LONGVIDEOBENCH_COMMIT[:7]} "
        "longvideobench_dataset.py and lmms-eval @ 75571cf tasks/longvideobench/utils.py (id, "
        "question, candidates, correct_choice, duration, duration_group, question_category, "
        "video_path)",
    )
)
