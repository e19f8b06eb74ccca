"""HEMM: Flickr30K (Karpathy test): the ``hemm-flickr30k`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    PICTURE_OF,
    Row,
    Rows,
    at,
    escape,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["FLICKR30K"]

_FLICKR = "flickr30k_images/flickr30k_test.json"


def _flickr_rows(root: Path, split: str) -> Rows:
    for i, ann in enumerate(read_json(root, _FLICKR)):
        yield f"{root / _FLICKR}:[{i}]", ann


def _flickr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    name = str(row["image"]).split("/")[-1]
    image = file_image(root, f"flickr30k_images/flickr30k_images/{name}")
    captions = row["caption"]
    if not captions:
        raise RowError("caption", "no caption")
    return hemm_sample(ctx, name, [image], PICTURE_OF, escape(PICTURE_OF), str(captions[0]))


FLICKR30K = benchmark(
    Benchmark(
        name="hemm-flickr30k",
        title="HEMM: Flickr30K (Karpathy test)",
        citation=CITATION,
        license="Flickr terms of use (images); captions for research use",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(PICTURE_OF), at("hemm/prompts/flickr30k_prompt.py")),
        to_sample=_flickr_sample,
        split="test",
        splits=("test",),
        size=1000,
        read_files=_flickr_rows,
        hemm="Flickr30K",
        schema_confirmed=loader_confirmed("hemm/data/flickr30k_dataset.py"),
        notes=(
            "Ground truth: the first caption, as HEMM's evaluate_dataset (its batched variant "
            "passes all five).",
        ),
        **release_files(
            "kaggle datasets download -d hsankesara/flickr-image-dataset -p "
            '"$LMMPROBE_DATA_DIR"/hemm-flickr30k && cd "$LMMPROBE_DATA_DIR"/hemm-flickr30k && '
            "unzip flickr-image-dataset.zip && wget "
            "https://huggingface.co/datasets/akshayg08/Flickr30k_test/raw/main/flickr30k_test.json "
            "-P flickr30k_images/"
        ),
    )
)
