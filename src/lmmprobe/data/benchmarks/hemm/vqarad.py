"""HEMM: VQA-RAD (test): the ``hemm-vqarad`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    at,
    hemm_sample,
    image_bytes,
    jpeg_image,
    loader_confirmed,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["VQARAD", "VQARAD_BENCHMARK"]

VQARAD = (
    "Given a Radiology image and a Question. Answer the question in a single word.\n"
    "Question: {question}\nAnswer: "
)


def _vqarad_sample(row: Row, ctx: RowContext) -> Sample:
    image = jpeg_image(image_bytes(row["image"], "image", ctx.root), "image", convert_rgb=False)
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), VQARAD, str(row["answer"])
    )


VQARAD_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-vqarad",
        title="HEMM: VQA-RAD (test)",
        citation=CITATION,
        license="CC0 1.0 (VQA-RAD)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(VQARAD, at("hemm/prompts/vqarad_prompt.py")),
        to_sample=_vqarad_sample,
        split="test",
        splits=("test",),
        hub_id="flaviagiammarino/vqa-rad",
        size=451,
        hemm="VQARAD",
        schema_confirmed=loader_confirmed("hemm/data/vqarad_dataset.py"),
        notes=(
            "HEMM loads flaviagiammarino/vqa-rad without a pinned revision.",
            "As HEMM: the image is saved as JPEG (Pillow's defaults) before the model sees it.",
        ),
    )
)
