"""MMIU: the ``mmiu`` benchmark definition (multi-image).

Origin: Meng et al. 2024, MMIU: Multimodal Multi-image Understanding for Evaluating Large
Vision-Language Models (ICLR 2025, arXiv:2408.02718); data FanqingM/MMIU-Benchmark (cc-by-4.0):
``all.parquet`` (11,698 multiple-choice questions, 60 stored ``task`` values grouping the
paper's 52 tasks, two to dozens of images each) and seven zip archives, one per image
relationship (``Low-level-semantic`` ... ``3D-spatial``), unpacked into folders of their names,
where each row's ``input_image_path`` (``./2D-spatial/TASK/TASK_0_0.png``) points.

The prompt is the authors' inference scripts' (MMIUBenchmark/MMIU @ 913f5c1
``VLMEvalKit/test_interlvl1.5.py``, OpenGVLab/MMIU @ e8963c2 ``VLMEvalKit/test_qwen3_vl.py``
``process_single_item``): the row's ``context`` (its task description, the question and the
option lines) and its ``question`` joined by a line break, the question first for the tasks of
their ``tasks_exist`` list, then ``Please answer the option directly like A,B,C,D...`` on a line
of its own; the images go before the text, in order. The reading and the score are OpenGVLab/MMIU @ 36c48ec's
(``evaluate.py``, ``evaluate_correct.py``; `lmmprobe.metrics.mmiu`, judge protocol
``mmiu-choice``, metric ``mmiu_accuracy``): the mean over tasks of each task's accuracy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_refs,
)
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.standard._choice import escape_braces, plain
from lmmprobe.data.benchmarks.standard._video import parquet_rows
from lmmprobe.metrics.mmiu import MMIU_COMMIT
from lmmprobe.schema import Sample

__all__ = ["ANSWER_PROMPT", "MMIU", "QUESTION_FIRST", "RELATIONSHIPS", "mmiu_message"]

ANSWER_PROMPT = "\nPlease answer the option directly like A,B,C,D..."
"""What the inference scripts put after every question."""

QUESTION_FIRST = frozenset(
    (
        "person_reid", "multiple_image_captioning", "spot_the_similarity", "face_retrieval",
        "sketch2image_retrieval", "handwritten_retrieval", "spot_the_diff",
        "image2image_retrieval", "vehicle_retrieval", "text2image_retrieval",
        "general_action_recognition", "video_captioning", "next_img_prediction",
        "temporal_ordering", "meme_vedio_understanding", "action_quality_assessment",
        "temporal_localization", "mevis", "ravens_progressive_matrices",
        "threed_indoor_recognition", "point_tracking", "threed_cad_recognition",
        "single_object_tracking",
    )
)  # fmt: skip
"""The inference scripts' ``tasks_exist``: the tasks asked ``question + '\\n' + context``."""

RELATIONSHIPS = (
    "Low-level-semantic",
    "High-level-sub-semantic",
    "High-level-obj-semantic",
    "Continuous-temporal",
    "Discrete-temporal",
    "2D-spatial",
    "3D-spatial",
)
"""The seven image relationships (the release's archives and folders), as the paper orders them."""

_SOURCE = (
    "MMIUBenchmark/MMIU @ 913f5c1 VLMEvalKit/test_interlvl1.5.py and OpenGVLab/MMIU @ e8963c2 "
    "VLMEvalKit/test_qwen3_vl.py (process_single_item: context and question, the question "
    "first for tasks_exist, + '\\nPlease answer the option directly like A,B,C,D...'; the "
    "images before the text)"
)


def mmiu_message(task: str, question: str, context: str) -> str:
    """The text the inference scripts send with a question's images, byte for byte."""
    text = question + "\n" + context if task in QUESTION_FIRST else context + "\n" + question
    return text + ANSWER_PROMPT


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if (root / "all.parquet").is_file() and not any((root / r).is_dir() for r in RELATIONSHIPS):
        # A download of the Hub's files alone (the hub cache) leaves the images in their
        # archives: one line saying so, not a missing image per question.
        raise DataError(
            f"benchmark mmiu: {root} holds no image folder ({', '.join(RELATIONSHIPS)}): unpack "
            f"each archive into the folder of its name, as the fetch command does:\n  {MMIU.fetch}"
        )
    yield from parquet_rows(root / "all.parquet", "MMIU's questions")


def _relationship(paths: list[str]) -> str:
    """The relationship folder every image of the row is in (``./2D-spatial/TASK/...``)."""
    found = set()
    for path in paths:
        parts = [p for p in PurePosixPath(path).parts if p != "."]
        found.add(parts[0] if len(parts) > 1 else "")
    if len(found) != 1 or (kind := found.pop()) not in RELATIONSHIPS:
        raise RowError(
            "input_image_path",
            f"expected the images in one of the folders {', '.join(RELATIONSHIPS)}, got "
            f"{paths[0]!r:.120}",
        )
    return kind


def _mmiu(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    task = required_text(row, "task")
    question = required_text(row, "question")
    context = required_text(row, "context")
    options = required_text(row, "options")
    answer = row["output"]
    if not isinstance(answer, str) or not answer.strip():
        # evaluate_correct.py leaves a row without an answer out of its task's count.
        raise RowError("output", f"expected the answer's letter, got {answer!r:.80}")
    paths = row["input_image_path"]
    if (
        not isinstance(paths, list | tuple)
        or not paths
        or not all(isinstance(p, str) for p in paths)
    ):
        raise RowError("input_image_path", "expected a list of one or more image paths")
    relationship = _relationship(list(paths))
    return Sample(
        id=str(ctx.index),
        images=image_refs(paths, ctx, "input_image_path"),
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata={
            # The breakdowns: evaluate_correct.py's per-task rows (--by task) and the paper's
            # image relationships (--by relationship), each the mean of its tasks' accuracies.
            "task": task,
            "relationship": relationship,
            "mmiu_question": question,
            "options": options,
            "source": plain(row.get("source")),
            "visual_input_component": plain(row.get("visual_input_component")),
        },
        prompt=PromptTemplate(escape_braces(mmiu_message(task, question, context))),
    )


MMIU = benchmark(
    Benchmark(
        name="mmiu",
        groups=("multi-image",),
        title="MMIU (multi-image understanding)",
        citation="Meng et al. 2024, MMIU: Multimodal Multi-image Understanding for Evaluating "
        "Large Vision-Language Models, ICLR 2025, arXiv:2408.02718",
        license="cc-by-4.0 (FanqingM/MMIU-Benchmark card)",
        formulation="open_ended",
        metric="mmiu_accuracy",
        prompt=PromptTemplate(
            template="{context}\n{question}" + escape_braces(ANSWER_PROMPT),
            source=_SOURCE,
        ),
        to_sample=_mmiu,
        after_download='for z in *.zip; do unzip -qo "$z" -d "${z%.zip}"; done',
        split="test",
        splits=("test",),
        hub_id="FanqingM/MMIU-Benchmark",
        revision="03bf7d143d920e97a757f606b6b7baee161b019b",
        include=("all.parquet", "*.zip"),
        size=11698,
        layout="files",
        read_files=_rows,
        judge="mmiu-choice",
        notes=(
            "mmiu_accuracy is evaluate_correct.py's Overall: the mean over the 60 stored task "
            "values of each task's accuracy (--by task gives each, --by relationship the "
            "paper's seven image relationships, each the mean of its tasks').",
            "An answer is read as evaluate.py reads it: a failure text or an empty answer is Z; "
            "one letter a-n (after stripping, no-break spaces and a leading and trailing run of "
            ".,() removed) is the choice; any other goes to the judge (--judge SPEC, protocol "
            "mmiu-choice: its gpt-4o-mini prompt), whose stripped reply is the choice. A choice "
            "is right when it is in the gold letter (choice in gt), so an empty judge reply "
            "counts right, as there.",
            "Without a judge an answer the rule cannot read counts as wrong (the reference "
            "always asks gpt-4o-mini); a judge call that fails leaves the answer unjudged, "
            "counted wrong, where evaluate_correct.py leaves it out of its task "
            "(mmiu_accuracy_judged_only gives that figure).",
            "A question's images (2 to dozens) are asked in order before its text, as the "
            "inference scripts send them (their max_tokens and temperature are left to the run).",
            "Neither lmms-eval (@ 75571cf) nor VLMEvalKit (@ e8e78f0) has an MMIU task: the "
            "prompt and scoring are the authors' own scripts'.",
            "Revision: the commit inspect_evals pins for FanqingM/MMIU-Benchmark; its tree was "
            "not confirmed offline. The fetch command unpacks each archive into the folder of "
            "its name, where input_image_path points.",
        ),
        schema_confirmed=f"OpenGVLab/MMIU @ e8963c2 VLMEvalKit/all.json and results/*/"
        "metadata_info.json (task, visual_input_component, source, options, question, context, "
        "input_image_path as ./RELATIONSHIP/TASK/FILE, output) and fix_image_paths.py; "
        f"evaluate.py @ {MMIU_COMMIT[:7]}",
    )
)
