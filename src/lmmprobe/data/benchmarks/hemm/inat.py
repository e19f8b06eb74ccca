"""HEMM: iNaturalist 2021 (val): the ``hemm-inat`` benchmark definition."""

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

__all__ = ["INAT", "INAT_BENCHMARK"]

INAT = "The scientific species name of the species present in the image is: "


def _inat_rows(root: Path, split: str) -> Rows:
    folder = root / "inat" / "val"
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder inat/val")
    # HEMM globs inat/val/*/*.jpg.
    for path in sorted(folder.glob("*/*.jpg")):
        yield str(path), {"species": path.parent.name, "image": path.name}


def _inat_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"inat/val/{row['species']}/{row['image']}")
    # The folder name ends with genus_species: HEMM's answer is "genus species", lowercased.
    gold = " ".join(str(row["species"]).split("_")[-2:]).lower()
    return fixed_sample(ctx, f"{row['species']}/{row['image']}", image, INAT, gold)


INAT_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-inat",
        title="HEMM: iNaturalist 2021 (val)",
        citation=CITATION,
        license="iNaturalist 2021 (images under their owners' CC licenses)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(INAT), at("hemm/prompts/inat_prompt.py")),
        to_sample=_inat_sample,
        split="val",
        splits=("val",),
        size=100000,
        read_files=_inat_rows,
        hemm="iNaturalist",
        schema_confirmed=loader_confirmed("hemm/data/inat_dataset.py"),
        notes=("Ground truth: the last two parts of the species folder name (genus species).",),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-inat/inat && cd "$LMMPROBE_DATA_DIR"/hemm-inat/inat && '
            "wget https://ml-inat-competition-datasets.s3.amazonaws.com/2021/val.tar.gz && "
            "tar -xf val.tar.gz"
        ),
    )
)
