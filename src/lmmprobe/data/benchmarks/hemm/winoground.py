"""HEMM: Winoground (each image-caption pair, yes/no): the ``hemm-winoground`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    YES_NO_NOTE,
    Row,
    at,
    hemm_sample,
    image_bytes,
    jpeg_image,
    loader_confirmed,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["WINOGROUND", "WINOGROUND_BENCHMARK"]

WINOGROUND = (
    "Given an image and a text. Answer yes if the text matches the image and no if the text "
    "does not match the image.\nText: {question}\nAnswer: "
)


def _winoground_sample(row: Row, ctx: RowContext) -> list[Sample]:
    samples = []
    # HEMM asks each (image, caption) pair; the answer is yes for matching indices.
    for i, j in ((0, 0), (0, 1), (1, 0), (1, 1)):
        field = f"image_{i}"
        image = jpeg_image(image_bytes(row[field], field, ctx.root), field, convert_rgb=True)
        caption = str(row[f"caption_{j}"])
        sid = f"{row.get('id', ctx.index)}#i{i}c{j}"
        gold = "yes" if i == j else "no"
        samples.append(hemm_sample(ctx, sid, [image], caption, WINOGROUND, gold, yes_no=True))
    return samples


WINOGROUND_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-winoground",
        title="HEMM: Winoground (each image-caption pair, yes/no)",
        citation=CITATION,
        license="Getty Images license (research use; gated on the hub)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(WINOGROUND, at("hemm/prompts/winoground_prompt.py")),
        to_sample=_winoground_sample,
        fetch=(
            "hf download facebook/winoground --repo-type dataset --revision "
            'refs/convert/parquet --local-dir "$LMMPROBE_DATA_DIR"/hemm-winoground'
        ),
        split="test",
        splits=("test",),
        hub_id="facebook/winoground",
        size=1600,
        hemm="Winoground",
        schema_confirmed=loader_confirmed("hemm/data/winogroundVQA_dataset.py"),
        notes=(
            "HEMM loads facebook/winoground without a pinned revision; gated: accept its terms "
            "on the hub and log in first.",
            "As HEMM: each image is converted to RGB and saved as JPEG (Pillow's defaults) "
            "before the model sees it.",
            YES_NO_NOTE,
        ),
    )
)
