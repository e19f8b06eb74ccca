"""HEMM: NoCaps (val): the ``hemm-nocaps`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
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

__all__ = ["NOCAPS"]

_NOCAPS = "nocaps_images/nocaps_val_4500_captions.json"


def _nocaps_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _NOCAPS)
    annotations = data.get("annotations", [])
    for i, image in enumerate(data.get("images", [])):
        # HEMM takes annotations 10*i .. 10*i+9 as image i's captions (the file's order).
        captions = [a["caption"] for a in annotations[10 * i : 10 * (i + 1)]]
        yield f"{root / _NOCAPS}:images[{i}]", {**image, "captions": captions}


def _nocaps_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"nocaps_images/{row['file_name']}")
    sid = str(row.get("id", row["file_name"]))
    return hemm_sample(
        ctx, sid, [image], PICTURE_OF, escape(PICTURE_OF), row["captions"], multi_ref=True
    )


NOCAPS = benchmark(
    Benchmark(
        name="hemm-nocaps",
        title="HEMM: NoCaps (val)",
        citation=CITATION,
        license="CC BY 2.0 (Open Images); captions CC BY 4.0",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(PICTURE_OF), at("hemm/prompts/nocaps_prompt.py")),
        to_sample=_nocaps_sample,
        split="val",
        splits=("val",),
        size=4500,
        read_files=_nocaps_rows,
        hemm="NoCaps",
        schema_confirmed=loader_confirmed("hemm/data/nocaps_dataset.py"),
        notes=("Ground truth: the image's 10 captions (annotations 10i..10i+9, as HEMM slices).",),
        **release_files(
            "hf download akshayg08/NocapsTest --repo-type dataset --local-dir "
            '"$LMMPROBE_DATA_DIR"/hemm-nocaps/nocaps_images && wget '
            "https://s3.amazonaws.com/nocaps/nocaps_val_4500_captions.json -P "
            '"$LMMPROBE_DATA_DIR"/hemm-nocaps/nocaps_images'
        ),
    )
)
