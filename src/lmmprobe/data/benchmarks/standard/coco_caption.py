"""COCO Caption (2017 val): the ``coco-caption`` benchmark definition."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    RowContext,
    benchmark,
)
from lmmprobe.data.benchmarks.standard._open import (
    CAPTION_NOTE,
    CAPTION_TEMPLATE,
    LMMS_ENCODER,
    caption_sample,
    row_id,
)
from lmmprobe.schema import Sample

__all__ = ["COCO_CAPTION", "COCO_REVISION"]


def _coco(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return caption_sample(
        row_id(row, "question_id"),
        row,
        ctx,
        "answer",
        coco_id=row.get("id"),
        file_name=row.get("file_name"),
    )


COCO_REVISION = "3bdd5827e243cc3084ac69a1111e69c3ab9193ff"

COCO_CAPTION = benchmark(
    Benchmark(
        name="coco-caption",
        title="COCO Caption (2017 val)",
        citation="Chen et al. 2015, Microsoft COCO Captions: Data Collection and Evaluation "
        "Server. arXiv:1504.00325",
        license="unknown (see card); COCO annotations are CC BY 4.0 (cocodataset.org)",
        formulation="caption",
        metric="coco_cider",
        prompt=CAPTION_TEMPLATE,
        to_sample=_coco,
        include=("data/val-*",),
        split="val",
        splits=("val", "test"),
        hub_id="lmms-lab/COCO-Caption2017",
        revision=COCO_REVISION,
        size=5000,
        reform="visual description",
        notes=(
            CAPTION_NOTE,
            "This is lmms-eval's coco2017_cap_val (5,000 images, five references each); "
            "lmms-eval's coco_karpathy_val reads yerevann/coco-karpathy, whose images are URLs "
            "fetched at run time, which lmmprobe does not do.",
            LMMS_ENCODER.format(repo="COCO-Caption2017"),
        ),
        schema_confirmed=(
            "lmms-lab/COCO-Caption2017 card @ main (question_id string, image Image, question, "
            "answer list of strings, id int64, license int8, file_name, coco_url, height int32, "
            "width int32, date_captured; data/val-0000N-of-00002) + lmms-eval coco_cap/utils.py"
        ),
    )
)
