"""HEMM: OpenPath (PLIP's Kather colon tissue test): the ``hemm-openpath`` benchmark definition."""

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
    hemm_sample,
    loader_confirmed,
    need_root,
    release_files,
    text_lines,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["KATHER", "OPENPATH"]

KATHER = (
    "Answer the Question from the below Options.\nQuestion: Given Pathalogy image is a "
    "hematoxylin and eosin image of:\nOptions: cancer-associated stroma, adipose tissue, debris, "
    "lymphocytes, mucus, background, normal colon mucosa, colorectal adenocarcinoma epithelium, "
    "smooth muscle\nAnswer:"
)

_KATHER_CSV = "open_path/Kather_test/Kather_test.csv"


def _kather_rows(root: Path, split: str) -> Rows:
    lines = text_lines(root, _KATHER_CSV)
    for n, line in enumerate(lines[1:], 2):
        yield f"{root / _KATHER_CSV}:{n}", {"line": line}


def _kather_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split(",")
    if len(parts) != 4:
        raise RowError("line", f"HEMM splits each row into 4 fields at ',', got {len(parts)}")
    _, fn, lb, caption = parts
    # HEMM's label: the caption from its 6th word on, without its last character (a period).
    label = " ".join(caption.split()[5:])[:-1]
    image = file_image(root, f"open_path/{lb}/{fn}")
    return hemm_sample(ctx, f"{lb}/{fn}", [image], KATHER, escape(KATHER), label)


OPENPATH = benchmark(
    Benchmark(
        name="hemm-openpath",
        title="HEMM: OpenPath (PLIP's Kather colon tissue test)",
        citation=CITATION,
        license="CC BY 4.0 (Kather et al. 2019 colon tissue images)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(KATHER), at("hemm/prompts/plip_kather_prompt.py")),
        to_sample=_kather_sample,
        split="test",
        splits=("test",),
        read_files=_kather_rows,
        hemm="OpenPath",
        schema_confirmed=loader_confirmed("hemm/data/open_path_dataset.py"),
        notes=(
            "Ground truth: the caption column from its 6th word on, last character dropped, as "
            "HEMM cuts it (the tissue name).",
        ),
        **release_files(
            "hf download akshayg08/OpenPath --repo-type dataset --local-dir "
            '"$LMMPROBE_DATA_DIR"/hemm-openpath/open_path'
        ),
    )
)
