"""HEMM: Hateful Memes (dev): the ``hemm-hatefulmemes`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    YES_NO_NOTE,
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

__all__ = ["HATEFUL", "HATEFUL_MEMES"]

HATEFUL = "Given a meme with {question} written on it. Is it hateful? Answer: "

_HATEFUL_DEV = "hateful_memes/data/dev.jsonl"


def _hateful_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _HATEFUL_DEV)


def _hateful_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"hateful_memes/data/{row['img']}")
    gold = "yes" if row["label"] else "no"
    sid = str(row.get("id", ctx.index))
    return hemm_sample(ctx, sid, [image], str(row["text"]), HATEFUL, gold, yes_no=True)


HATEFUL_MEMES = benchmark(
    Benchmark(
        name="hemm-hatefulmemes",
        title="HEMM: Hateful Memes (dev)",
        citation=CITATION,
        license="Hateful Memes dataset license (research use)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(HATEFUL, at("hemm/prompts/hateful_memes_prompt.py")),
        to_sample=_hateful_sample,
        split="dev",
        splits=("dev",),
        read_files=_hateful_rows,
        hemm="Hateful Memes",
        schema_confirmed=loader_confirmed("hemm/data/hateful_memes_dataset.py"),
        notes=("Ground truth: yes for label 1, no for 0.", YES_NO_NOTE),
        **release_files(
            "kaggle datasets download -d parthplc/facebook-hateful-meme-dataset -p "
            '"$LMMPROBE_DATA_DIR"/hemm-hatefulmemes && cd "$LMMPROBE_DATA_DIR"/hemm-hatefulmemes && '
            "unzip facebook-hateful-meme-dataset.zip -d hateful_memes/"
        ),
    )
)
