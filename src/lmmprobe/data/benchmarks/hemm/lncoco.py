"""HEMM: Localized Narratives COCO (val, text to image): the ``hemm-lncoco`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    IMAGE_GENERATION,
    Rows,
    at,
    json_lines,
    loader_confirmed,
    needs_generation,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark

__all__ = ["LNCOCO", "LNCOCO_BENCHMARK"]

LNCOCO = "Generate an Image based on the provided caption.\nCaption: {question}"

_LNCOCO = "ln_coco/coco_val_captions.jsonl"


def _lncoco_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _LNCOCO)


LNCOCO_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-lncoco",
        title="HEMM: Localized Narratives COCO (val, text to image)",
        citation=CITATION,
        license="CC BY 4.0 (Localized Narratives); COCO images under their Flickr licenses",
        formulation="open_ended",
        # No run metric: HEMM scores the generated image against the reference with CLIP-I,
        # and lmmprobe has no image-generation backend to produce one (needs= says so).
        metric=None,
        prompt=PromptTemplate(LNCOCO, at("hemm/prompts/lncoco_prompt.py")),
        to_sample=needs_generation,
        split="val",
        splits=("val",),
        read_files=_lncoco_rows,
        hemm="LNCOCO",
        needs=IMAGE_GENERATION,
        schema_confirmed=loader_confirmed("hemm/data/lncoco_dataset.py"),
        notes=(
            "The model generates the image a narrative describes; HEMM scores it against the COCO "
            "image (val2017/000000{image_id}.jpg) with CLIP-I (and MSE).",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-lncoco/ln_coco && cd "$LMMPROBE_DATA_DIR"/hemm-lncoco/ln_coco && '
            "wget https://storage.googleapis.com/localized-narratives/annotations/coco_val_captions.jsonl "
            "http://images.cocodataset.org/zips/val2017.zip && unzip val2017.zip"
        ),
    )
)
