"""HEMM: Memotion 7k (humour): the ``hemm-memotion`` benchmark definition."""

from __future__ import annotations

import os
from pathlib import Path

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    Row,
    Rows,
    at,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    open_copy,
    read_table,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.data.files import broken_xlsx, check_workbook
from lmmprobe.schema import Sample

__all__ = ["MEMOTION", "MEMOTION_BENCHMARK"]

MEMOTION = (
    "Given the Meme and the following caption\nCaption: {question}.\nQuestion: How funny is the "
    "meme? Choose from the following comma separated options: funny, very funny, not funny, "
    "hilarious. Answer: "
)

_MEMOTION = "memotion-dataset-7k/memotion_dataset_7k"


def _memotion_rows(root: Path, split: str) -> Rows:
    import pandas as pd  # type: ignore[import-untyped]

    xlsx = root / _MEMOTION / "labels.xlsx"
    csv = root / _MEMOTION / "labels.csv"
    # Present in any form (a FIFO, a link to a device): opened, and refused as what it is.
    if os.path.lexists(xlsx):
        with open_copy(xlsx) as fh:
            # The checks the prediction readers make (zip directory, streamed XML counts)
            # before pandas hands the workbook to openpyxl, which would take minutes and
            # gigabytes over a row of millions of cells.
            check_workbook(xlsx, fh)
            try:
                table = pd.read_excel(fh)
            except ImportError as exc:
                raise DataError(
                    f"{xlsx}: reading HEMM's labels.xlsx needs openpyxl ({exc}); run: "
                    "pip install openpyxl"
                ) from exc
            except Exception as exc:  # openpyxl's errors on a broken workbook have many types
                raise broken_xlsx(xlsx, exc) from None
        where = xlsx
    elif os.path.lexists(csv):
        table, where = read_table(csv), csv
    else:
        raise DataError(
            f"{xlsx} not found: the local copy lacks HEMM's file {_MEMOTION}/labels.xlsx"
        )
    for i, row in enumerate(table.to_dict("records")):
        yield f"{where}:{i + 2}", row


def _memotion_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"{_MEMOTION}/images/{row['image_name']}")
    # str() of a missing caption is "nan", which is what HEMM's format() writes too.
    return hemm_sample(
        ctx,
        str(row["image_name"]),
        [image],
        str(row["text_corrected"]),
        MEMOTION,
        str(row["humour"]),
    )


MEMOTION_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-memotion",
        title="HEMM: Memotion 7k (humour)",
        citation=CITATION,
        license="Memotion dataset license (research use; Kaggle)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(MEMOTION, at("hemm/prompts/memotion_prompt.py")),
        to_sample=_memotion_sample,
        split="all",
        splits=("all",),
        read_files=_memotion_rows,
        hemm="Memotion",
        schema_confirmed=loader_confirmed("hemm/data/memotion_dataset.py"),
        notes=(
            "Ground truth: the humour label as written (funny, very_funny, not_funny, hilarious).",
            "HEMM reads labels.xlsx (pip install openpyxl); a labels.csv with the same columns is "
            "read when there is no labels.xlsx (the CSV's presence in the release is not "
            "confirmed).",
        ),
        **release_files(
            "kaggle datasets download -d williamscott701/memotion-dataset-7k -p "
            '"$LMMPROBE_DATA_DIR"/hemm-memotion && cd "$LMMPROBE_DATA_DIR"/hemm-memotion && '
            "unzip memotion-dataset-7k.zip -d memotion-dataset-7k"
        ),
    )
)
