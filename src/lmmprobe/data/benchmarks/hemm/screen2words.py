"""HEMM: Screen2Words (test screens): the ``hemm-screen2words`` benchmark definition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
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
    read_table,
    release_files,
    text_lines,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["SCREEN2WORDS", "SCREEN2WORDS_BENCHMARK"]

SCREEN2WORDS = "You are given a phone UI screen. Describe the screen in one sentence."

_S2W_CSV = "screen2words/screen_summaries.csv"

_S2W_TEST = "screen2words/split/test_screens.txt"


def _s2w_rows(root: Path, split: str) -> Rows:
    path = root / _S2W_CSV
    table = read_table(path, _S2W_CSV)
    # HEMM's answer for a screen: the last of its summaries in the CSV.
    last: dict[int, str] = {}
    for column in ("screenId", "summary"):
        if column not in table.columns:
            raise DataError(f"{path}: no {column} column (HEMM reads screenId and summary)")
    for i, (screen, summary) in enumerate(zip(table["screenId"], table["summary"], strict=True)):
        last[_screen(screen, f"{path}:{i + 2}")] = str(summary)
    for n, line in enumerate(text_lines(root, _S2W_TEST), 1):
        name = line.strip()
        where = f"{root / _S2W_TEST}:{n}"
        yield where, {"screen": name, "summary": last.get(_screen(name, where))}


def _screen(value: Any, where: str) -> int:
    """A screen's id as HEMM reads it (``int()``); else a `DataError` naming `where`."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{where}: screenId: {str(value)[:80]!r} is not a screen number") from None


def _s2w_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    if row["summary"] is None:
        raise RowError("screenId", f"screen {row['screen']} has no summary in {_S2W_CSV}")
    image = file_image(root, f"screen2wordsimages/unique_uis/combined/{row['screen']}.jpg")
    return hemm_sample(
        ctx, str(row["screen"]), [image], SCREEN2WORDS, escape(SCREEN2WORDS), row["summary"]
    )


SCREEN2WORDS_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-screen2words",
        title="HEMM: Screen2Words (test screens)",
        citation=CITATION,
        license="CC BY 4.0 (Screen2Words); RICO screenshots",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(SCREEN2WORDS), at("hemm/prompts/screen2words_prompt.py")),
        to_sample=_s2w_sample,
        split="test",
        splits=("test",),
        read_files=_s2w_rows,
        hemm="Screen2Words",
        schema_confirmed=loader_confirmed("hemm/data/screen2words_dataset.py"),
        notes=(
            "Ground truth: the screen's last summary in screen_summaries.csv, as HEMM takes it.",
        ),
        **release_files(
            "kaggle datasets download -d onurgunes1993/rico-dataset -p "
            '"$LMMPROBE_DATA_DIR"/hemm-screen2words && cd "$LMMPROBE_DATA_DIR"/hemm-screen2words && '
            "unzip rico-dataset.zip -d screen2wordsimages && git clone "
            "https://github.com/google-research-datasets/screen2words screen2words"
        ),
    )
)
