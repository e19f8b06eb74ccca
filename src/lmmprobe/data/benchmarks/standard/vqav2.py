"""VQAv2 (validation): the ``vqav2`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._open import LMMS_ENCODER, SHORT_ANSWER, open_sample, row_id
from lmmprobe.schema import Sample

__all__ = ["VQAV2", "VQAV2_REVISION"]


def _vqav2(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    raw = row["answers"]
    if not isinstance(raw, list) or not raw:
        raise RowError("answers", f"expected the list of annotator answers, got {raw!r}")
    answers = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("answer"), str):
            raise RowError(f"answers[{i}]", f"expected {{answer, answer_id, ...}}, got {item!r}")
        answers.append(item["answer"])
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        answers,
        "open_ended",
        question_type=row.get("question_type"),
        answer_type=row.get("answer_type"),
        multiple_choice_answer=row.get("multiple_choice_answer"),
        image_id=row.get("image_id"),
    )


VQAV2_REVISION = "32665d35052eb4a6d4414851c3c829a72754915a"

VQAV2 = benchmark(
    Benchmark(
        name="vqav2",
        title="VQAv2 (validation)",
        citation="Goyal et al. 2017, Making the V in VQA Matter. CVPR 2017, arXiv:1612.00837",
        license="cc-by-4.0 (lmms-lab/VQAv2 card)",
        formulation="open_ended",
        metric="vqa_accuracy",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source("vqav2/vqav2_val.yaml (post_prompt) + utils.py vqav2_doc_to_text"),
        ),
        to_sample=_vqav2,
        include=("data/validation-*",),
        split="validation",
        splits=("validation",),
        hub_id="lmms-lab/VQAv2",
        revision=VQAV2_REVISION,
        size=214354,
        hemm="VQA",
        reform="visually grounded reasoning",
        notes=(
            "Scored as lmms-eval's vqav2_val scores the model's raw reply (the prompt is "
            "lmms-eval's): the reply and every annotator answer normalized with VQA's "
            "punctuation, digit, article and contraction rules, then the 10-annotator VQA "
            "accuracy (vqav2/utils.py vqav2_process_results). The official vqaEval.py "
            "normalizes only when the annotators disagree, because the challenge cleans the "
            "submitted answers first.",
            LMMS_ENCODER.format(repo="VQAv2"),
        ),
        schema_confirmed=(
            "lmms-lab/VQAv2 card @ d138bef (question_type, multiple_choice_answer, answers list "
            "of {answer, answer_confidence string, answer_id int64}, image_id int64, "
            "answer_type, question_id int64, question, image Image; data/validation-*) + "
            "lmms-eval vqav2/utils.py"
        ),
    )
)
