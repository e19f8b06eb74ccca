"""HEMM: DECIMER hand-drawn molecules (HEMM's tenth): the ``hemm-decimer`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    escape,
    file_image,
    fixed_sample,
    hemm_tenth,
    loader_confirmed,
    need_root,
    release_files,
    text_lines,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["DECIMER", "DECIMER_BENCHMARK"]

DECIMER = "Simplified molecular-input line-entry system (SMILES) notation of the given molecule: "

_DECIMER_TSV = "DECIMER/DECIMER_HDM_Dataset_SMILES.tsv"

_DECIMER_IMAGES = "DECIMER/DECIMER_HDM_Dataset_Images/DECIMER_HDM_Dataset_Images"


def _decimer_rows(root: Path, split: str) -> Rows:
    for line in hemm_tenth(text_lines(root, _DECIMER_TSV)):
        yield f"{root / _DECIMER_TSV}", {"line": line}


def _decimer_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split("\t")
    if len(parts) != 2:
        raise RowError("line", f"expected 'id<TAB>SMILES', got {row['line']!r}")
    img_id, smiles = parts
    image = file_image(root, f"{_DECIMER_IMAGES}/{img_id}.png")
    return fixed_sample(ctx, img_id, image, DECIMER, smiles)


DECIMER_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-decimer",
        title="HEMM: DECIMER hand-drawn molecules (HEMM's tenth)",
        citation=CITATION,
        license="CC BY 4.0 (DECIMER hand-drawn dataset)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(DECIMER), at("hemm/prompts/decimer_prompt.py")),
        to_sample=_decimer_sample,
        split="test",
        splits=("test",),
        read_files=_decimer_rows,
        hemm="Decimer",
        schema_confirmed=loader_confirmed("hemm/data/decimer_dataset.py"),
        notes=(
            "As HEMM: the TSV's rows (header dropped) shuffled with random.seed(0), the last tenth "
            "asked; the gold answer is the SMILES string.",
        ),
        **release_files(
            'kaggle datasets download -d juliajakubowska/decimer -p "$LMMPROBE_DATA_DIR"/hemm-decimer/DECIMER '
            '&& cd "$LMMPROBE_DATA_DIR"/hemm-decimer/DECIMER && unzip decimer.zip'
        ),
    )
)
