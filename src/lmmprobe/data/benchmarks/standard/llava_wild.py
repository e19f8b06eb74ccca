"""LLaVA-Bench (In-the-Wild): the ``llava-wild`` benchmark definition."""

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
from lmmprobe.data.benchmarks._lmms import lmms_source, required_text
from lmmprobe.data.benchmarks.standard._open import open_sample, row_id
from lmmprobe.schema import Sample

__all__ = ["LLAVA_WILD"]


def _llava_wild(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    caption = row.get("caption")
    if not (isinstance(caption, str) or (isinstance(caption, list) and caption)):
        raise RowError("caption", f"expected the image's caption text, got {caption!r}")
    category = required_text(row, "category")
    if category not in ("conv", "detail", "complex"):
        raise RowError("category", f"expected conv, detail or complex, got {category!r}")
    return open_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        required_text(row, "question"),
        # GPT-4's answer: the reference the judge scores the model's answer against.
        [required_text(row, "gpt_answer")],
        "open_ended",
        caption=caption,
        category=category,
        image_id=row.get("image_id"),
    )


LLAVA_WILD = benchmark(
    Benchmark(
        name="llava-wild",
        title="LLaVA-Bench (In-the-Wild)",
        citation="Liu et al. 2023, Visual Instruction Tuning, NeurIPS 2023, arXiv:2304.08485",
        license="unknown (see card)",
        formulation="open_ended",
        metric="llava_wild_relative",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source(
                "llava-in-the-wild/llava-in-the-wild.yaml + utils.py llava_doc_to_text "
                "(no pre/post prompt)"
            ),
        ),
        to_sample=_llava_wild,
        split="train",
        splits=("train",),
        hub_id="lmms-lab/llava-bench-in-the-wild",
        revision=None,
        size=60,
        judge="llava-wild-review",
        notes=(
            "Scored by a judge only: run with --judge SPEC. llava_wild_relative is LLaVA's "
            "relative score (llava-wild-review: the judge scores GPT-4's reference answer and "
            "the model's, 1-10, from the image's caption; summarize_gpt_review.py's ratio of the "
            "means x 100); --by category gives conv, detail and complex. Without a judge there "
            "is no score.",
            "Revision not pinned: no public source read offline gives the hub commit of "
            "lmms-lab/llava-bench-in-the-wild (lmms-eval's task now loads the identical copy "
            "lmms-lab-encoder/llava-bench-in-the-wild), so the data is read from main.",
        ),
        schema_confirmed="lmms-eval lmms_eval/tasks/llava-in-the-wild/llava-in-the-wild.yaml "
        "+ utils.py @ 75571cf (question_id, question, image, caption, gpt_answer, category; "
        "split train)",
    )
)
