"""HEMM: NLVR (dev): the ``hemm-nlvr`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    TRUE_FALSE,
    Row,
    Rows,
    at,
    file_image,
    hemm_sample,
    json_lines,
    loader_confirmed,
    need_root,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["NLVR"]

_NLVR_DEV = "nlvr/nlvr/dev/dev.json"


def _nlvr_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _NLVR_DEV)


def _nlvr_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    relative = f"nlvr/nlvr/dev/images/{row['directory']}/dev-{row['identifier']}-0.png"
    return hemm_sample(
        ctx,
        str(row["identifier"]),
        [file_image(root, relative)],
        str(row["sentence"]),
        TRUE_FALSE,
        str(row["label"]).lower(),
    )


NLVR = benchmark(
    Benchmark(
        name="hemm-nlvr",
        title="HEMM: NLVR (dev)",
        citation=CITATION,
        license="CC BY 4.0 (NLVR)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(TRUE_FALSE, at("hemm/prompts/nlvr_prompt.py")),
        to_sample=_nlvr_sample,
        split="dev",
        splits=("dev",),
        read_files=_nlvr_rows,
        hemm="NLVR",
        schema_confirmed=loader_confirmed("hemm/data/nlvr_dataset.py"),
        notes=("As HEMM: the first of the three renderings (dev-ID-0.png) of each statement.",),
        **release_files(
            'git clone https://github.com/lil-lab/nlvr.git "$LMMPROBE_DATA_DIR"/hemm-nlvr/nlvr'
        ),
    )
)
