"""TextVQA (validation): the ``textvqa`` benchmark definition."""

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

__all__ = ["TEXTVQA", "TEXTVQA_REVISION"]


def _textvqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # lmms-eval asks doc["question"].capitalize(): first letter upper, every other lowered.
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question").capitalize(),
        answer_texts(row, "answers"),
        "open_ended",
        question_id=row["question_id"],
        image_id=row.get("image_id"),
        ocr_tokens=row.get("ocr_tokens"),
    )


TEXTVQA_REVISION = "9c0699cd19768ac5ab97568f6b3cbac4c0062884"

TEXTVQA = benchmark(
    Benchmark(
        name="textvqa",
        title="TextVQA (validation)",
        citation="Singh et al. 2019, Towards VQA Models That Can Read. CVPR 2019, arXiv:1904.08920",
        license="unknown (see card); TextVQA's annotations are CC BY 4.0 (textvqa.org)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + SHORT_ANSWER,
            source=lmms_source(
                "textvqa/_default_template_textvqa_yaml (post_prompt) + utils.py "
                "textvqa_doc_to_text (question.capitalize())"
            ),
        ),
        to_sample=_textvqa,
        include=("data/validation-*",),
        split="validation",
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/textvqa",
        revision=TEXTVQA_REVISION,
        size=5000,
        reform="scene text perception",
        notes=(
            "Scored with EvalAI's answer processor and the 10-annotator VQA accuracy, as "
            "lmms-eval's textvqa_val computes it (the TextVQA evaluation's formula, mmf); the "
            "question is shown capitalized as lmms-eval shows it. lmms-eval's optional "
            "OCR-token hint is off by default and not added.",
            "The pinned revision is the repository's current main (9c0699c on the hub's commit "
            "list; the full id as public evaluation code pins it, read offline).",
            LMMS_ENCODER.format(repo="textvqa"),
        ),
        schema_confirmed=(
            "lmms-lab/textvqa card (copy pppop7/textvqa @ 21253e8): image_id string, question_id "
            "int32, question, question_tokens list, image Image, image_width/height int32, "
            "flickr_original_url, flickr_300k_url, answers list of 10 strings, image_classes "
            "list, set_name, ocr_tokens list; files data/validation-0000N-of-00003.parquet; "
            "+ lmms-eval textvqa/utils.py"
        ),
    )
)
