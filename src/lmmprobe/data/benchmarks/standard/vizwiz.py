"""VizWiz-VQA (val): the ``vizwiz`` benchmark definition."""

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

__all__ = ["VIZWIZ", "VIZWIZ_REVISION"]


def _vizwiz(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question").capitalize(),
        answer_texts(row, "answers"),
        "open_ended",
        category=row.get("category"),
    )


VIZWIZ_REVISION = "d428a2dae984f79cf1b9d99467dfa883e0c30686"

VIZWIZ = benchmark(
    Benchmark(
        name="vizwiz",
        title="VizWiz-VQA (val)",
        citation="Gurari et al. 2018, VizWiz Grand Challenge: Answering Visual Questions from "
        "Blind People. CVPR 2018, arXiv:1802.08218",
        license="unknown (see card); VizWiz is CC BY 4.0 (vizwiz.org)",
        formulation="open_ended",
        metric="vqa_accuracy_evalai",
        prompt=PromptTemplate(
            template="{question}" + UNANSWERABLE + SHORT_ANSWER,
            source=lmms_source(
                "vizwiz_vqa/_default_template_vqa_yaml (post_prompt) + utils.py "
                "vizwiz_vqa_doc_to_text (question.capitalize())"
            ),
        ),
        to_sample=_vizwiz,
        include=("data/val-*",),
        split="val",
        splits=("val", "test"),
        hub_id="lmms-lab/VizWiz-VQA",
        revision=VIZWIZ_REVISION,
        size=4319,
        reform="visually grounded reasoning",
        notes=(
            "10-annotator VQA accuracy with EvalAI's answer processor, as lmms-eval's "
            "vizwiz_vqa_val computes it; 'unanswerable' is an ordinary answer. VizWiz's own "
            "evaluation script (vizwiz.org, adapted from VQA's) could not be read here, so "
            "agreement with it is not checked. The question is shown capitalized as lmms-eval "
            "shows it.",
            LMMS_ENCODER.format(repo="VizWiz-VQA"),
        ),
        schema_confirmed=(
            "lmms-lab/VizWiz-VQA card @ d428a2d (question_id string, image Image, question, "
            "answers list of strings, category string; data/val-0000N-of-00005-<hash>.parquet) "
            "+ lmms-eval vizwiz_vqa/utils.py"
        ),
    )
)
