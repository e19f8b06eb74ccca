"""AI2D (test): the ``ai2d`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    as_index,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT
from lmmprobe.schema import Sample

__all__ = ["AI2D"]


def _ai2d(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    options = row["options"]
    if not isinstance(options, list) or len(options) < 2:
        raise RowError("options", f"expected a list of at least 2 options, got {options!r}")
    choices = [str(o) for o in options]
    return Sample(
        id=str(ctx.index),
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
    )


AI2D = benchmark(
    Benchmark(
        name="ai2d",
        title="AI2D (test)",
        citation="Kembhavi et al. 2016, A Diagram Is Worth A Dozen Images, ECCV 2016, "
        "arXiv:1603.07396",
        license="apache-2.0 (AI2D release); lmms-lab/ai2d card: unknown",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source("ai2d/utils.py (ai2d_doc_to_text, prompt_format mcq) and ai2d.yaml"),
        ),
        to_sample=_ai2d,
        splits=("test",),
        hub_id="lmms-lab/ai2d",
        revision="c83a9b9692933aff8349157c88a413df9d02c4e5",
        size=3088,
        notes=(
            "The official score is accuracy (lmms-eval: exact match of the letter read by a "
            "regex filter); lmmprobe reads answers with its matcher.",
        ),
        schema_confirmed="lmms-lab/ai2d card @ c83a9b9 (question, options list, answer index "
        "as text, image Image; test 3088) + lmms-eval ai2d/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)
