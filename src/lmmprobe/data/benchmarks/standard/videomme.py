"""Video-MME, without and with subtitles: the ``videomme`` and ``videomme-subtitles`` definitions.

Origin: Fu et al. 2025, Video-MME: The First-Ever Comprehensive Evaluation Benchmark of
Multi-modal LLMs in Video Analysis (CVPR 2025, arXiv:2405.21075); 900 videos (300 short, 300
medium, 300 long), 2,700 four-option questions; annotations and videos as lmms-lab/Video-MME
publishes them. The prompt is the README's (MME-Benchmarks/Video-MME @ `README_COMMIT`); the
score is its ``evaluation/eval_your_results.py`` (@ 4e7566d), ``videomme_accuracy``.

The two settings differ only in the subtitles before the instruction: the README says to give
"the subtitles corresponding to the sampled video frames", so ``videomme-subtitles`` gives each
cue shown at the time of a frame the model sees (under the run's policy where ``--frames`` gives
one). Both sample ``linspace=32`` by default: Video-MME fixes no frame count (its leaderboard
lists each model's), and 32 frames by ``numpy.linspace`` over the frame indices is what
lmms-eval's ``videomme_w_subtitle`` task picks its subtitles with (``frame_num: 32``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import plain
from lmmprobe.data.benchmarks.standard._video import (
    clip,
    parquet_rows,
    read_subtitles,
    subtitles_at,
)
from lmmprobe.schema import Sample
from lmmprobe.schema.video import FramePolicy

__all__ = ["POLICY", "README_COMMIT", "VIDEOMME", "VIDEOMME_SUBTITLES"]

README_COMMIT = "06c2315b892f88578f81d73205d07cf576f292b9"
"""The MME-Benchmarks/Video-MME commit whose README prompt is cited."""

POLICY = FramePolicy.parse("linspace=32")
"""The frames each question's video is sampled with, unless the run gives ``--frames``."""

_INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
)
_TEMPLATE = "{context}" + _INSTRUCTION + "{question}\n{options}\nThe best answer is:"
_SUBTITLES = "This video's subtitles are listed below:\n{context}\n"
_NO_SUBTITLES = "No subtitles available"
_LETTERS = "ABCD"
_PARQUET = "videomme/test-00000-of-00001.parquet"
_SUFFIXES = (".mp4", ".MP4", ".mkv")  # lmms-eval's videomme_doc_to_visual tries these


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield from parquet_rows(root / _PARQUET, "Video-MME's questions")


def _options(row: Mapping[str, Any]) -> list[str]:
    """The four option texts, each written ``A. text`` in the release, without the letter."""
    given = row.get("options")
    if not isinstance(given, list | tuple) or len(given) != len(_LETTERS):
        raise RowError("options", f"expected 4 options 'A. ...' to 'D. ...', got {given!r:.200}")
    texts = []
    for letter, option in zip(_LETTERS, given, strict=True):
        if not isinstance(option, str) or not option.startswith(f"{letter}. "):
            raise RowError("options", f"option {letter} does not start {letter + '. '!r}")
        texts.append(option[len(letter) + 2 :])
    return texts


def _video_file(ctx: RowContext, video_id: str) -> str:
    for suffix in _SUFFIXES:
        relative = f"data/{video_id}{suffix}"
        if ctx.root is not None and (ctx.root / relative).is_file():
            return relative
    return f"data/{video_id}.mp4"  # `clip` names it as missing


def _sample(row: Mapping[str, Any], ctx: RowContext, *, subtitles: bool) -> Sample:
    """A row as a sample, with the subtitles of its sampled frames where `subtitles`."""
    video_id = required_text(row, "videoID")
    if "/" in video_id or "\\" in video_id or video_id.startswith("."):
        raise RowError("videoID", f"{video_id!r:.80} is not a video id")
    options = _options(row)
    answer = required_text(row, "answer")
    if answer not in _LETTERS:
        raise RowError("answer", f"{answer!r:.40} is not one of A, B, C, D")
    duration = required_text(row, "duration")
    if duration not in ("short", "medium", "long"):
        raise RowError("duration", f"{duration!r:.40} is not short, medium or long")
    video = clip(ctx, _video_file(ctx, video_id), POLICY, "videoID")
    context = None
    if subtitles:
        path = ctx.root / "subtitle" / f"{video_id}.srt" if ctx.root else None
        context = _NO_SUBTITLES
        if path is not None and path.is_file():
            times = [f.time for f in video.frames or []]
            context = "\n".join(subtitles_at(read_subtitles(path, "subtitle"), times))
    return Sample(
        id=required_text(row, "question_id"),
        question=required_text(row, "question"),
        choices=options,
        answer=_LETTERS.index(answer),
        formulation="single_choice",
        context=context,
        video=video,
        metadata={
            # Video-MME's breakdowns: --by duration (short, medium, long), domain (its six
            # video categories), sub_category (30), task_type (12).
            "duration": duration,
            "domain": plain(row.get("domain")),
            "sub_category": plain(row.get("sub_category")),
            "task_type": plain(row.get("task_type")),
            "video_id": plain(row.get("video_id")),
            "videoID": video_id,
            "answer_letter": answer,
        },
    )


def _without_subtitles(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _sample(row, ctx, subtitles=False)


def _with_subtitles(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return _sample(row, ctx, subtitles=True)


def _definition(name: str, subtitles: bool) -> Benchmark:
    setting = "with subtitles" if subtitles else "without subtitles"
    return Benchmark(
        name=name,
        groups=("video",),
        title=f"Video-MME ({setting})",
        citation="Fu et al. 2025, Video-MME: The First-Ever Comprehensive Evaluation Benchmark "
        "of Multi-modal LLMs in Video Analysis, CVPR 2025, arXiv:2405.21075",
        license="research only (Video-MME README: academic use, no redistribution)",
        formulation="single_choice",
        metric="videomme_accuracy",
        prompt=PromptTemplate(
            # With subtitles the heading stays when no cue falls at a sampled frame (lmms-eval
            # writes it over an empty list too): it is part of the template, not the context's.
            template=(_SUBTITLES if subtitles else "{context}")
            + _TEMPLATE.removeprefix("{context}"),
            source=f"MME-Benchmarks/Video-MME @ {README_COMMIT[:7]} README.md (Prompt: "
            + ("the subtitles, then " if subtitles else "")
            + "the instruction, the question, its options 'A. ...', 'The best answer is:')",
            option_format="{mark}. {text}",
            context_format="{context}",
        ),
        to_sample=_with_subtitles if subtitles else _without_subtitles,
        hub_id="lmms-lab/Video-MME",
        # One copy for both settings (`copy`): the subtitles come with the videos.
        include=(_PARQUET, "videos_chunked_*.zip", "subtitle.zip"),
        after_download='for z in videos_chunked_*.zip subtitle.zip; do unzip -qo "$z"; done',
        copy="videomme",
        split="test",
        splits=("test",),
        size=2700,
        layout="files",
        read_files=_rows,
        matcher="videomme",
        notes=(
            "videomme_accuracy is Video-MME's eval_your_results.py (@ 4e7566d): answers read by "
            "its extract_characters_regex (matcher videomme), right answers over the answers "
            "it reads a letter from, as the script counts; accuracy beside it counts every "
            "question. --by duration gives short, medium and long; --by domain, sub_category "
            "and task_type its categories.",
            "Frames: linspace=32 (32 frames by numpy.linspace over the frame indices, "
            "lmms-eval's sampler and its videomme_w_subtitle frame_num); Video-MME fixes no "
            "count. --frames N (or a sweep, --frames 8,16,32) samples others.",
            *(
                (
                    "Subtitles: each cue shown at a sampled frame's time, in file order (the "
                    "README's rule: the subtitles of the sampled frames); a video without "
                    "subtitles gets lmms-eval's 'No subtitles available'. With a --frames sweep "
                    "the subtitles follow the first policy's frames.",
                )
                if subtitles
                else ()
            ),
            "Revision not pinned: no commit id of lmms-lab/Video-MME could be read offline "
            "here; the annotations are one parquet file and the videos its zip archives.",
        ),
        schema_confirmed="lmms-eval @ 75571cf lmms_eval/tasks/videomme/utils.py (videoID, "
        "duration, domain, sub_category, task_type, question_id, question, options 'A. ...', "
        "answer; data/VIDEOID.mp4, subtitle/VIDEOID.srt)",
    )


VIDEOMME = benchmark(_definition("videomme", subtitles=False))
VIDEOMME_SUBTITLES = benchmark(_definition("videomme-subtitles", subtitles=True))
