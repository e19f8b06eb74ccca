"""HEMM: Enrico design topics (HEMM's tenth): the ``hemm-enrico`` benchmark definition."""

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
    hemm_tenth,
    loader_confirmed,
    need_root,
    release_files,
    text_lines,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["ENRICO", "ENRICO_BENCHMARK"]

ENRICO = (
    "Given a screenshot of the user interface of a mobile application. Choose the most "
    "appropriate design topic from the following comma separated choices:\nbare, dialer, "
    "camera, chat, editor, form, gallery, list, login, maps, mediaplayer, menu, modal, news, "
    "other, profile, search, settings, terms, tutorial\nAnswer:"
)

_ENRICO = "enrico/design_topics.csv"


def _enrico_rows(root: Path, split: str) -> Rows:
    for line in hemm_tenth(text_lines(root, _ENRICO)):
        yield f"{root / _ENRICO}", {"line": line}


def _enrico_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    parts = str(row["line"]).strip().split(",")
    if len(parts) != 2:
        raise RowError("line", f"expected 'screen_id,topic', got {row['line']!r}")
    img_id, label = parts
    image = file_image(root, f"enrico/screenshots/{img_id}.jpg")
    return hemm_sample(ctx, img_id, [image], ENRICO, escape(ENRICO), label)


ENRICO_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-enrico",
        title="HEMM: Enrico design topics (HEMM's tenth)",
        citation=CITATION,
        license="MIT (Enrico)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(escape(ENRICO), at("hemm/prompts/enrico_prompt.py")),
        to_sample=_enrico_sample,
        split="test",
        splits=("test",),
        read_files=_enrico_rows,
        hemm="Enrico",
        schema_confirmed=loader_confirmed("hemm/data/enrico_dataset.py"),
        notes=(
            "As HEMM: design_topics.csv's rows (header dropped) shuffled with random.seed(0), the "
            "last tenth asked; the gold answer is the topic.",
        ),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-enrico/enrico && cd "$LMMPROBE_DATA_DIR"/hemm-enrico/enrico '
            "&& wget http://userinterfaces.aalto.fi/enrico/resources/screenshots.zip "
            "https://raw.githubusercontent.com/luileito/enrico/master/design_topics.csv && "
            "unzip screenshots.zip"
        ),
    )
)
