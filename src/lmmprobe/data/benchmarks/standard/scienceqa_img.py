"""ScienceQA-IMG (test): the ``scienceqa-img`` benchmark definition."""

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
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT, plain, present
from lmmprobe.schema import Sample

__all__ = ["SCIENCEQA"]


def _scienceqa(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if row.get("image") is None:
        return None  # ScienceQA-IMG is the image subset; a row without one is not asked
    choices = row["choices"]
    if not isinstance(choices, list) or len(choices) < 2:
        raise RowError("choices", f"expected a list of at least 2 options, got {choices!r}")
    choices = [str(c) for c in choices]
    hint = row.get("hint")
    return Sample(
        id=f"{ctx.split}-{ctx.index}",  # the hub copy has no question id
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        context=str(hint) if present(hint) else None,
        metadata={
            k: plain(row.get(k)) for k in ("subject", "topic", "category", "skill", "grade", "task")
        },
    )


SCIENCEQA = benchmark(
    Benchmark(
        name="scienceqa-img",
        title="ScienceQA-IMG (test)",
        citation="Lu et al. 2022, Learn to Explain: Multimodal Reasoning via Thought Chains for "
        "Science Question Answering, NeurIPS 2022, arXiv:2209.09513",
        license="cc-by-nc-sa-4.0 (ScienceQA)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{context}{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source(
                "scienceqa/utils.py (sqa_doc_to_text, format default) and "
                "scienceqa_img.yaml (post_prompt)"
            ),
            context_format="Context: {context}\n",
        ),
        to_sample=_scienceqa,
        include=("ScienceQA-IMG/*", "README.md"),
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/ScienceQA",
        revision="df59f11e9fd34bc02e24b4d5314bb1c86dcd21c0",
        config="ScienceQA-IMG",
        size=2017,
        hemm="ScienceQA",
        reform="visually grounded reasoning",
        notes=(
            "The official score is accuracy; lmms-eval reads the answer as the letter alone or "
            "'X.' at its start, lmmprobe uses its matcher (mark, then option text).",
        ),
        schema_confirmed="lmms-lab/ScienceQA card @ df59f11 (config ScienceQA-IMG: image Image, "
        "question, choices list, answer int8, hint, task, grade, subject, topic, category, "
        "skill, lecture, solution; test 2017) + lmms-eval scienceqa/utils.py @ "
        + LMMS_EVAL_COMMIT[:7],
    )
)
