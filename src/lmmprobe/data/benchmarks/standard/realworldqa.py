"""RealWorldQA: the ``realworldqa`` benchmark definition."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import embedded_sample
from lmmprobe.schema import Sample

__all__ = ["REALWORLDQA"]

_LINE_OPTION = re.compile(r"^([A-Z])\.\s+(.*)$", re.MULTILINE)


def _realworldqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    found = _LINE_OPTION.findall(question)
    return embedded_sample(
        str(ctx.index),
        question,
        [m for m, _ in found],
        [t.strip() for _, t in found],
        str(row["answer"]),
        [image_ref(row["image"], ctx)],
        "{question}",
        {},
    )


REALWORLDQA = benchmark(
    Benchmark(
        name="realworldqa",
        title="RealWorldQA",
        citation="xAI 2024, RealWorldQA (released with Grok-1.5 Vision)",
        license="cc-by-nd-4.0 (xAI); lmms-lab/RealWorldQA card: cc-by-4.0",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source("realworldqa/realworldqa.yaml (empty pre/post prompt) and utils.py"),
        ),
        to_sample=_realworldqa,
        splits=("test",),
        hub_id="lmms-lab/RealWorldQA",
        revision="907c4e5228fd1703c710ed937601cb5f89ab8d5c",
        size=765,
        notes=(
            "Questions carry their options and instruction in the text; rows whose answer is "
            "an option letter are choice samples, the others (numbers, words) open-ended. "
            "The options keep their published order and letters whatever --repeats, "
            "--circular or --marks say (metadata fixed_options): repeats ask the same "
            "text again, and --circular gives identical copies, not rotations.",
            "The official score is exact-match accuracy.",
        ),
        schema_confirmed="",
    )
)
