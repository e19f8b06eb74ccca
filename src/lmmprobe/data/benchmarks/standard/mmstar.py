"""MMStar (val): the ``mmstar`` benchmark definition."""

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
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT, embedded_sample, plain, struct
from lmmprobe.schema import Sample

__all__ = ["MMSTAR"]

_MMSTAR_OPTION = re.compile(r"(?:^|,\s)([A-D]):\s")


def _mmstar(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    _head, sep, tail = question.partition("Options:")
    marks: list[str] = []
    texts: list[str] = []
    if sep:
        parts = _MMSTAR_OPTION.split(tail.strip())
        marks, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    meta = struct(row.get("meta_info"))
    return embedded_sample(
        str(row["index"]),
        question.strip(),
        marks,
        texts,
        required_text(row, "answer"),
        [image_ref(row["image"], ctx)],
        "{question}\n" + LETTER_PROMPT.rstrip("."),
        {
            "category": plain(row.get("category")),
            "l2_category": plain(row.get("l2_category")),
            "source": plain(meta.get("source")),
        },
    )


MMSTAR = benchmark(
    Benchmark(
        name="mmstar",
        title="MMStar (val)",
        citation="Chen et al. 2024, Are We on the Right Way for Evaluating Large Vision-Language "
        "Models? arXiv:2403.20330",
        license="unknown (see card)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n" + LETTER_PROMPT.rstrip("."),
            source=lmms_source(
                "mmstar/utils.py (mmstar_doc_to_text) and _default_template_yaml "
                "(post_prompt, without a final period)"
            ),
        ),
        to_sample=_mmstar,
        include=("mmstar.parquet", "README.md"),
        split="val",
        splits=("val",),
        hub_id="Lin-Chen/MMStar",
        revision="bc98d668301da7b14f648724866e57302778ab27",
        size=1500,
        notes=(
            "The question text holds its options ('Options: A: ..., B: ...'); the prompt shows "
            "it verbatim, so the options keep their published order and letters whatever "
            "--repeats, --circular or --marks say (metadata fixed_options): repeats ask "
            "the same text again, and --circular gives identical copies, not rotations.",
            "The official score is accuracy (--by category gives MMStar's six capabilities).",
        ),
        schema_confirmed="Lin-Chen/MMStar card @ a9beb09 (mmstar.parquet as split val: index "
        "int64, question, image Image, answer, category, l2_category, meta_info struct(source, "
        "split, image_path)); the options-in-question format from lmms-eval mmstar/utils.py "
        "(question shown verbatim) @ " + LMMS_EVAL_COMMIT[:7] + " and the MMStar paper's examples",
    )
)
