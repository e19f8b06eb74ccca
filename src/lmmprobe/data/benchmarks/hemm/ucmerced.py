"""HEMM: UC Merced Land Use (validation): the ``hemm-ucmerced`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    escape,
    file_image,
    fixed_sample,
    loader_confirmed,
    need_root,
    read_table,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["UCMERCED", "UCMERCED_BENCHMARK"]

UCMERCED = (
    "Classify the given land image into the following classes: mediumresidential, buildings, "
    "tenniscourt, denseresidential, baseballdiamond, intersection, harbor, parkinglot, river, "
    "overpass, mobilehomepark, runway, forest, beach, freeway, airplane, storagetanks, "
    "chaparral, golfcourse, sparseresidential, agricultural.\nChoose a class from the above "
    "classes: "
)

_UCM_CSV = "ucmercedimages/validation.csv"


def _ucm_rows(root: Path, split: str) -> Rows:
    path = root / _UCM_CSV
    for i, row in enumerate(read_table(path, _UCM_CSV).to_dict("records")):
        yield f"{path}:{i + 2}", row


def _ucm_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"ucmercedimages/images_train_test_val/validation/{row['Filename']}")
    return fixed_sample(ctx, str(row["Filename"]), image, UCMERCED, str(row["ClassName"]))


UCMERCED_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-ucmerced",
        title="HEMM: UC Merced Land Use (validation)",
        citation=CITATION,
        license="UC Merced Land Use (research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(UCMERCED), at("hemm/prompts/ucmerced_prompt.py")),
        to_sample=_ucm_sample,
        split="validation",
        splits=("validation",),
        read_files=_ucm_rows,
        hemm="UCMerced",
        schema_confirmed=loader_confirmed("hemm/data/ucmerced_dataset.py"),
        notes=("Ground truth: validation.csv's ClassName.",),
        **release_files(
            "kaggle datasets download -d apollo2506/landuse-scene-classification -p "
            '"$LMMPROBE_DATA_DIR"/hemm-ucmerced && cd "$LMMPROBE_DATA_DIR"/hemm-ucmerced && '
            "unzip landuse-scene-classification.zip -d ucmercedimages/"
        ),
    )
)
