"""HEMM: SLAKE (test, English closed-ended): the ``hemm-slake`` benchmark definition."""

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
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["SLAKE", "SLAKE_BENCHMARK"]

SLAKE = (
    "Given a Radiology Image. Answer the question in a single word, Question: {question} "
    "Short Answer: "
)

_SLAKE = "Slake1.0/test.json"


def _slake_rows(root: Path, split: str) -> Rows:
    for i, row in enumerate(read_json(root, _SLAKE)):
        # HEMM keeps the English closed-ended questions only.
        if row.get("q_lang") == "en" and row.get("answer_type") == "CLOSED":
            yield f"{root / _SLAKE}:[{i}]", row


def _slake_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"Slake1.0/imgs/{row['img_name']}")
    sid = str(row.get("qid", ctx.index))
    return hemm_sample(ctx, sid, [image], str(row["question"]), SLAKE, str(row["answer"]))


SLAKE_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-slake",
        title="HEMM: SLAKE (test, English closed-ended)",
        citation=CITATION,
        license="CC BY 4.0 (SLAKE)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(SLAKE, at("hemm/prompts/slake_prompt.py")),
        to_sample=_slake_sample,
        split="test",
        splits=("test",),
        read_files=_slake_rows,
        hemm="Slake",
        schema_confirmed=loader_confirmed("hemm/data/slake_dataset.py"),
        notes=("As HEMM: only questions with q_lang 'en' and answer_type 'CLOSED'.",),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-slake/Slake1.0 && cd "$LMMPROBE_DATA_DIR"/hemm-slake/Slake1.0 '
            "&& wget https://huggingface.co/datasets/BoKelvin/SLAKE/raw/main/test.json "
            "https://huggingface.co/datasets/BoKelvin/SLAKE/resolve/main/imgs.zip && unzip imgs.zip"
        ),
    )
)
