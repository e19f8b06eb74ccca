"""SEED-Bench (image questions): the ``seedbench`` benchmark definition."""

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
    lmms_source,
    required_text,
)
from lmmprobe.data.benchmarks.standard._choice import LETTER_PROMPT, plain
from lmmprobe.schema import Sample

__all__ = ["SEEDBENCH"]


def _seed(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if row.get("data_type") != "image":
        return None  # SEED-Bench's video questions need frames lmmprobe does not read here
    images = row["image"]
    if not isinstance(images, list) or not images:
        raise RowError("image", "expected a list of images (Sequence(Image))")
    choices = [required_text(row, f"choice_{c}") for c in "abcd"]
    return Sample(
        id=str(row["question_id"]),
        images=[image_ref(im, ctx, f"image[{i}]") for i, im in enumerate(images)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        metadata={
            "question_id": str(row["question_id"]),
            "question_type_id": plain(row.get("question_type_id")),
        },
    )


SEEDBENCH = benchmark(
    Benchmark(
        name="seedbench",
        title="SEED-Bench (image questions)",
        citation="Li et al. 2024, SEED-Bench: Benchmarking Multimodal LLMs with Generative "
        "Comprehension, CVPR 2024, arXiv:2307.16125",
        license="cc-by-nc-4.0 (AILab-CVC/SEED-Bench card)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source("seedbench/utils.py (seed_doc_to_text)"),
        ),
        to_sample=_seed,
        splits=("test",),
        hub_id="lmms-lab/SEED-Bench",
        size=14233,
        notes=(
            "Only image questions (data_type 'image', 14,233 of 17,990 rows) are read; video "
            "rows are skipped.",
            "The official score is accuracy (lmms-eval: seed_image); lmms-eval reads the first "
            "character of the answer, lmmprobe its matcher (mark, then option text).",
            "Revision not pinned: the hub shows its main only as 74c4ea0 and no public source "
            "read offline gives the full commit id, so the data is read from main.",
        ),
        schema_confirmed="",
    )
)
