"""OK-VQA (val2014): the ``okvqa`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    benchmark,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._open import (
    LMMS_ENCODER,
    SHORT_ANSWER,
    UNANSWERABLE,
    answer_texts,
    open_sample,
    row_id,
)
from lmmprobe.schema import Sample

__all__ = ["OKVQA", "OKVQA_REVISION"]


def _okvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        answer_texts(row, "answers"),
        "open_ended",
        question_type=row.get("question_type"),
        answer_type=row.get("answer_type"),
    )


OKVQA_REVISION = "c9f858961f4095a9aeef615057b0822cce967096"

OKVQA = benchmark(
    Benchmark(
        name="okvqa",
        title="OK-VQA (val2014)",
        citation="Marino et al. 2019, OK-VQA: A Visual Question Answering Benchmark Requiring "
        "External Knowledge. CVPR 2019, arXiv:1906.00067",
        license="unknown (see card)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + UNANSWERABLE + SHORT_ANSWER,
            source=lmms_source(
                "ok_vqa/_default_template_vqa_yaml (post_prompt) + utils.py ok_vqa_doc_to_text"
            ),
        ),
        to_sample=_okvqa,
        split="val2014",
        splits=("val2014",),
        hub_id="lmms-lab/OK-VQA",
        revision=OKVQA_REVISION,
        size=5046,
        hemm="OK-VQA",
        reform="visually grounded reasoning",
        notes=(
            "Scored as lmms-eval's ok_vqa_val2014 scores the model's raw reply (the prompt is "
            "lmms-eval's): EvalAI's answer processor on the reply and every annotator answer, "
            "then the 10-annotator VQA accuracy (ok_vqa/utils.py ok_vqa_process_results). The "
            "official vqaEval.py expects answers its challenge has already cleaned.",
            LMMS_ENCODER.format(repo="OK-VQA"),
        ),
        schema_confirmed=(
            "lmms-lab/OK-VQA card @ c9f8589 (question_id string, image Image, question, answers "
            "list of 10 strings, question_type, answer_type; data/val2014-0000N-of-00002) + "
            "lmms-eval ok_vqa/utils.py"
        ),
    )
)
