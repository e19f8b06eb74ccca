"""Flickr30k (test, all 31,783 images): the ``flickr30k`` benchmark definition."""

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

__all__ = ["FLICKR30K", "FLICKR_REVISION"]


def _flickr(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    return caption_sample(row_id(row, "img_id"), row, ctx, "caption", filename=row.get("filename"))


FLICKR_REVISION = "0d6d9049be2e08261be315e731e0d8054c1d1c03"

FLICKR30K = benchmark(
    Benchmark(
        name="flickr30k",
        title="Flickr30k (test, all 31,783 images)",
        citation="Young et al. 2014, From image descriptions to visual denotations. TACL 2; "
        "Plummer et al. 2015, Flickr30k Entities, arXiv:1505.04870",
        license="unknown (see card)",
        formulation="caption",
        metric="coco_cider",
        prompt=CAPTION_TEMPLATE,
        to_sample=_flickr,
        split="test",
        splits=("test",),
        hub_id="lmms-lab/flickr30k",
        revision=FLICKR_REVISION,
        size=31783,
        hemm="Flickr30K",
        reform="visual description",
        notes=(
            CAPTION_NOTE,
            "lmms-eval's flickr30k_test is all 31,783 images of lmms-lab/flickr30k, not the "
            "1,000-image Karpathy test split.",
            LMMS_ENCODER.format(repo="flickr30k"),
        ),
        schema_confirmed=(
            "lmms-lab/flickr30k card @ 0d6d904 (image Image, caption list of strings, sentids "
            "list of strings, img_id string, filename string; data/test-0000N-of-00009) + "
            "lmms-eval flickr30k/utils.py"
        ),
    )
)
