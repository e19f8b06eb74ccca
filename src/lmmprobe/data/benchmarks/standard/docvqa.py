"""DocVQA (validation): the ``docvqa`` benchmark definition."""

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
    answer_texts,
    open_sample,
    row_id,
)
from lmmprobe.schema import Sample

__all__ = ["DOCVQA", "DOCVQA_REVISION"]


def _docvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return open_sample(
        row_id(row, "questionId"),
        row,
        ctx,
        required_text(row, "question"),
        answer_texts(row, "answers"),
        "open_ended",
        question_types=row.get("question_types"),
        docId=row.get("docId"),
    )


DOCVQA_REVISION = "59fed3cdc38662abeef8f363171b2ec7c95c165c"

DOCVQA = benchmark(
    Benchmark(
        name="docvqa",
        title="DocVQA (validation)",
        citation="Mathew et al. 2021, DocVQA: A Dataset for VQA on Document Images. WACV 2021, "
        "arXiv:2007.00398",
        license="apache-2.0 (lmms-lab/DocVQA card)",
        formulation="open_ended",
        metric="anls",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source(
                "docvqa/_default_template_docvqa_yaml (post_prompt) + utils.py docvqa_doc_to_text"
            ),
        ),
        to_sample=_docvqa,
        include=("DocVQA/validation-*",),
        split="validation",
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/DocVQA",
        revision=DOCVQA_REVISION,
        config="DocVQA",
        size=5349,
        reform="scene text perception",
        notes=(
            "ANLS with threshold 0.5 over all reference answers, as the DocVQA (RRC) evaluation "
            "script computes it; the test split has no answers (submit to the RRC server).",
            LMMS_ENCODER.format(repo="DocVQA"),
        ),
        schema_confirmed=(
            "lmms-lab/DocVQA card @ 59fed3c (config DocVQA: questionId string, question, "
            "question_types list, image Image, docId int64, ucsf_document_id, "
            "ucsf_document_page_no, answers list of strings, data_split; files "
            "DocVQA/validation-*) + lmms-eval docvqa/utils.py"
        ),
    )
)
