"""ChartQA (test, human + augmented): the ``chartqa`` benchmark definition."""

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
from lmmprobe.data.benchmarks.standard._open import LMMS_ENCODER, open_sample
from lmmprobe.schema import Sample

__all__ = ["CHARTQA", "CHARTQA_REVISION"]


def _chartqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # No id column: the row's position in the split names it (human rows come first).
    return open_sample(
        f"{ctx.split}-{ctx.index}",
        row,
        ctx,
        required_text(row, "question"),
        [required_text(row, "answer")],
        "open_ended",
        type=row.get("type"),
    )


CHARTQA_REVISION = "9e63b7df1592a1c2158e735cc1725454aef0d6d9"

CHARTQA = benchmark(
    Benchmark(
        name="chartqa",
        title="ChartQA (test, human + augmented)",
        citation="Masry et al. 2022, ChartQA: A Benchmark for Question Answering about Charts "
        "with Visual and Logical Reasoning. Findings of ACL 2022, arXiv:2203.10244",
        license="unknown (see card); the ChartQA release is GPL-3.0 (ahmed-masry/ChartQA card)",
        formulation="open_ended",
        metric="relaxed_accuracy",
        prompt=PromptTemplate(
            template="{question}\nAnswer the question with a single word.",
            source=lmms_source("chartqa/chartqa.yaml (post_prompt) + utils.py chartqa_doc_to_text"),
        ),
        to_sample=_chartqa,
        split="test",
        splits=("test",),
        hub_id="lmms-lab/ChartQA",
        revision=CHARTQA_REVISION,
        size=2500,
        notes=(
            "Relaxed accuracy: numeric answers within 5% of the gold count, others must match "
            "exactly (case-insensitive). lmms-eval also reports the human_test and "
            "augmented_test halves: run with --by type.",
            LMMS_ENCODER.format(repo="ChartQA"),
        ),
        schema_confirmed=(
            "lmms-eval chartqa/upload_chartqa.py (features type, question, answer strings, image "
            "Image; type human_test/augmented_test) + the same four columns in the copy "
            "qywang1106/chartqa_split_2_2's card; lmms-lab/ChartQA @ 9e63b7d holds data/test-*"
        ),
    )
)
