"""HEMM: MM-IMDb (test): the ``hemm-mmimdb`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

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
    read_json,
    read_row_json,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["MMIMDB", "MMIMDB_BENCHMARK"]

MMIMDB = (
    "Given the movie poster and the corresponding plot of the movie, choose the appropriate "
    "genres from the following comma separated genres: drama, comedy, romance, thriller, "
    "crime, action, adventure, horror, documentry, mystery, sci-fi, fantasy, family, "
    "biography, war, history, music, animation, musical, western, sport, short, film-noir.\n"
    "Plot: {question}\nNote that a movie can belong to more than one genres, provide all the "
    "suitable genres seperated by commas. Answer: "
)

_MMIMDB_SPLIT = "mmimdb/split.json"


def _mmimdb_rows(root: Path, split: str) -> Rows:
    ids = read_json(root, _MMIMDB_SPLIT)["test"]
    for i, ann_id in enumerate(ids):
        yield f"{root / _MMIMDB_SPLIT}:test[{i}]", {"id": str(ann_id).strip()}


def _mmimdb_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    ann_id = row["id"]
    data = read_row_json(root / "mmimdb" / "annotations" / f"{ann_id}.json", "annotations")
    image = file_image(root, f"mmimdb/images/{ann_id}.jpeg")
    return hemm_sample(
        ctx, ann_id, [image], str(data["plot"][0]), MMIMDB, ", ".join(data["genres"])
    )


MMIMDB_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-mmimdb",
        title="HEMM: MM-IMDb (test)",
        citation=CITATION,
        license="MM-IMDb: IMDb data for research use",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(MMIMDB, at("hemm/prompts/mmimdb_prompt.py")),
        to_sample=_mmimdb_sample,
        split="test",
        splits=("test",),
        read_files=_mmimdb_rows,
        hemm="MM-IMDb",
        schema_confirmed=loader_confirmed("hemm/data/mmimdb_dataset.py"),
        notes=("Ground truth: the movie's genres joined with ', '; the prompt shows plot[0].",),
        **release_files(
            "hf download akshayg08/mmimdb_test --repo-type dataset --local-dir "
            '"$LMMPROBE_DATA_DIR"/hemm-mmimdb/mmimdb'
        ),
    )
)
