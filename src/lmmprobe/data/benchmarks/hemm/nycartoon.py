"""HEMM: New Yorker Caption Contest (is the caption funny?): the ``hemm-nycartoon`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    YES_NO_NOTE,
    Row,
    Rows,
    at,
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_table,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["NY_CARTOON", "NY_CARTOON_BENCHMARK"]

NY_CARTOON = (
    "Given a cartoon image and a caption.\nCaption: {question}. Question: Is the Caption Funny? "
    "Short Answer: "
)

_CARTOONS = "caption-contest-data/cartoons"

_SUMMARIES = "caption-contest-data/summaries"


def _cartoon_rows(root: Path, split: str) -> Rows:
    folder = root / _CARTOONS
    if not folder.is_dir():
        raise DataError(f"{folder} not found: the local copy lacks HEMM's folder {_CARTOONS}")
    for name in sorted(p.name for p in folder.iterdir()):
        yield f"{folder / name}", {"image": name}


def _cartoon_sample(row: Row, ctx: RowContext) -> list[Sample]:
    root = need_root(ctx)
    name = str(row["image"])
    img_id = name.split(".jpg")[0]
    summaries = root / _SUMMARIES
    # HEMM's order of candidates for the contest's ranked captions.
    for candidate in (f"{img_id}.csv", f"{img_id}_LilUCB.csv", f"{img_id}_lil-KLUCB.csv"):
        if (summaries / candidate).is_file():
            try:
                table = read_table(summaries / candidate)
            except DataError as exc:  # this cartoon's table: its row is refused, not the load
                raise RowError("summaries", str(exc)) from None
            break
    else:
        raise RowError(
            "summaries",
            f"no {img_id}.csv, {img_id}_LilUCB.csv or {img_id}_lil-KLUCB.csv in {summaries} "
            "(HEMM would reuse the previous cartoon's captions here)",
        )
    if len(table) < 5 or "caption" not in table.columns:
        raise RowError("summaries", f"{img_id}: needs a caption column and at least 5 rows")
    # The top-ranked caption (funny: yes) and the four ranked last (no).
    captions = [table.iloc[0]["caption"]] + [table.iloc[-i]["caption"] for i in range(1, 5)]
    image = file_image(root, f"{_CARTOONS}/{name}")
    return [
        hemm_sample(
            ctx, f"{img_id}#{k}", [image], str(c), NY_CARTOON, "no" if k else "yes", yes_no=True
        )
        for k, c in enumerate(captions)
    ]


NY_CARTOON_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-nycartoon",
        title="HEMM: New Yorker Caption Contest (is the caption funny?)",
        citation=CITATION,
        license="caption-contest-data repository license (research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(NY_CARTOON, at("hemm/prompts/newyorkercartoon_prompt.py")),
        to_sample=_cartoon_sample,
        split="all",
        splits=("all",),
        read_files=_cartoon_rows,
        hemm="NY Cartoon",
        schema_confirmed=loader_confirmed("hemm/data/newyorkercartoon_dataset.py"),
        notes=(
            "Each cartoon is asked 5 times: with its top-ranked caption (yes) and its 4 "
            "lowest-ranked ones (no).",
            "A cartoon without a summary CSV is a problem here; HEMM's loop would silently reuse "
            "the previous cartoon's captions.",
            YES_NO_NOTE,
        ),
        **release_files(
            "git clone https://github.com/nextml/caption-contest-data "
            '"$LMMPROBE_DATA_DIR"/hemm-nycartoon/caption-contest-data'
        ),
    )
)
