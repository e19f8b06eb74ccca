"""NoCaps (validation): the ``nocaps`` benchmark definition."""

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

__all__ = ["NOCAPS", "NOCAPS_REVISION"]


def _nocaps(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return caption_sample(
        row_id(row, "image_id"),
        row,
        ctx,
        "annotations_captions",
        open_images_id=row.get("image_open_images_id"),
    )


NOCAPS_REVISION = "dad208efd3283d30699ce151cd2035c96ee95a71"

NOCAPS = benchmark(
    Benchmark(
        name="nocaps",
        title="NoCaps (validation)",
        citation="Agrawal et al. 2019, nocaps: novel object captioning at scale. ICCV 2019, "
        "arXiv:1812.08658",
        license="unknown (see card); NoCaps is CC BY 2.0 (HuggingFaceM4/NoCaps card)",
        formulation="caption",
        metric="coco_cider",
        prompt=CAPTION_TEMPLATE,
        to_sample=_nocaps,
        include=("data/validation-*",),
        split="validation",
        splits=("validation", "test"),
        hub_id="lmms-lab/NoCaps",
        revision=NOCAPS_REVISION,
        size=4500,
        hemm="NoCaps",
        reform="visual description",
        notes=(
            CAPTION_NOTE,
            "Pinned to the commit whose card (validation split) was read; the repository has "
            "since added the test split (no references).",
            LMMS_ENCODER.format(repo="NoCaps"),
        ),
        schema_confirmed=(
            "lmms-lab/NoCaps card @ dad208e (image Image, image_coco_url, image_date_captured, "
            "image_file_name, image_height int32, image_width int32, image_id int32, "
            "image_license int8, image_open_images_id, annotations_ids list int32, "
            "annotations_captions list of 10 strings; data/validation-*) + lmms-eval "
            "nocaps/utils.py"
        ),
    )
)
