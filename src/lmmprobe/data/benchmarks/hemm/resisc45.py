"""HEMM: NWPU-RESISC45 (all images): the ``hemm-resisc45`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.base import DataError
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
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["RESISC45", "RESISC45_BENCHMARK"]

_RESISC_CLASSES = (
    "basketball_court, overpass, ground_track_field, church, chaparral, forest, parking_lot, "
    "golf_course, baseball_diamond, meadow, beach, sparse_residential, desert, terrace, palace, "
    "bridge, commercial_area, stadium, runway, lake, railway, tennis_court, ship, intersection, "
    "river, freeway, airplane, industrial_area, mountain, storage_tank, cloud, roundabout, "
    "wetland, mobile_home_park, island, harbor, railway_station, medium_residential, sea_ice, "
    "thermal_power_station, snowberg, circular_farmland, airport, dense_residential, "
    "rectangular_farmland"
)

RESISC45 = (
    "Given a Remote Sensing image scene, Classify the scene in following classes:\n"
    f"{_RESISC_CLASSES}\nChoose a class from the above classes.\nAnswer:"
)

_RESISC = "resisc45/NWPU Data Set/NWPU-RESISC45/NWPU-RESISC45"


def _class_folder_rows(root: Path, relative: str) -> Rows:
    folder = root / relative
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {relative}")
    for label in sorted(p.name for p in folder.iterdir() if p.is_dir()):
        for img in sorted(p.name for p in (folder / label).iterdir()):
            yield f"{folder / label / img}", {"image": img, "label": label}


def _resisc_rows(root: Path, split: str) -> Rows:
    yield from _class_folder_rows(root, _RESISC)


def _resisc_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_RESISC}/{row['label']}/{row['image']}")
    return fixed_sample(ctx, f"{row['label']}/{row['image']}", image, RESISC45, str(row["label"]))


RESISC45_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-resisc45",
        title="HEMM: NWPU-RESISC45 (all images)",
        citation=CITATION,
        license="NWPU-RESISC45 (research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(RESISC45), at("hemm/prompts/resisc45_prompt.py")),
        to_sample=_resisc_sample,
        split="all",
        splits=("all",),
        size=31500,
        read_files=_resisc_rows,
        hemm="Resisc45",
        schema_confirmed=loader_confirmed("hemm/data/resisc45_dataset.py"),
        notes=(
            "HEMM asks every image of the 45 class folders; the gold answer is the folder name.",
        ),
        **release_files(
            'kaggle datasets download -d happyyang/nwpu-data-set -p "$LMMPROBE_DATA_DIR"/hemm-resisc45 '
            '&& cd "$LMMPROBE_DATA_DIR"/hemm-resisc45 && unzip nwpu-data-set.zip -d resisc45'
        ),
    )
)
