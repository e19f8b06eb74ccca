"""HEMM: VQA (abstract scenes, v2 val): the ``hemm-vqa`` benchmark definition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    SHORT_ANSWER,
    Row,
    Rows,
    at,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["VQA"]

_VQA_QUESTIONS = "vqa_questions/OpenEnded_abstract_v002_val2015_questions.json"

_VQA_ANNOTATIONS = "vqa_annotations/abstract_v002_val2015_annotations.json"


def _vqa_rows(root: Path, split: str) -> Rows:
    questions = read_json(root, _VQA_QUESTIONS)
    annotations = read_json(root, _VQA_ANNOTATIONS)
    # HEMM's get_ground_truth_answer: the first annotation with the question's id.
    answers: dict[Any, Any] = {}
    for ann in annotations.get("annotations", []):
        answers.setdefault(ann.get("question_id"), ann.get("multiple_choice_answer"))
    for i, q in enumerate(questions.get("questions", [])):
        yield (
            f"{root / _VQA_QUESTIONS}:questions[{i}]",
            {
                **q,
                "multiple_choice_answer": answers.get(q.get("question_id")),
            },
        )


def _vqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    answer = row.get("multiple_choice_answer")
    if not isinstance(answer, str):
        raise RowError("multiple_choice_answer", "no annotation for this question_id")
    # HEMM's file name: seven zeros then the id (abstract scene ids have five digits).
    image = file_image(root, f"vqa_images/abstract_v002_val2015_0000000{row['image_id']}.png")
    return hemm_sample(
        ctx, str(row["question_id"]), [image], str(row["question"]), SHORT_ANSWER, answer
    )


VQA = benchmark(
    Benchmark(
        name="hemm-vqa",
        title="HEMM: VQA (abstract scenes, v2 val)",
        citation=CITATION,
        license="CC BY 4.0 (VQA abstract scenes)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/vqa_prompt.py")),
        to_sample=_vqa_sample,
        split="val",
        splits=("val",),
        size=30000,
        read_files=_vqa_rows,
        hemm="VQA",
        schema_confirmed=loader_confirmed("hemm/data/vqa_dataset.py"),
        notes=(
            "HEMM's VQA is VQA v2's abstract-scene val split (not the COCO photographs).",
            "Ground truth: the question's multiple_choice_answer (one reference).",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-vqa && cd "$LMMPROBE_DATA_DIR"/hemm-vqa && '
            "wget https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/vqa/Annotations_Val_abstract_v002.zip "
            "https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/vqa/Questions_Val_abstract_v002.zip "
            "https://s3.amazonaws.com/cvmlp/vqa/abstract_v002/scene_img/scene_img_abstract_v002_val2015.zip && "
            "unzip scene_img_abstract_v002_val2015.zip -d vqa_images && "
            "unzip Annotations_Val_abstract_v002.zip -d vqa_annotations && "
            "unzip Questions_Val_abstract_v002.zip -d vqa_questions"
        ),
    )
)
