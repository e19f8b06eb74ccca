"""HEMM: GQA (test-dev, all questions): the ``hemm-gqa`` benchmark definition."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    SHORT_ANSWER,
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

__all__ = ["GQA"]

_GQA_QUESTIONS = "gqa_questions/testdev_all_questions.json"


def _gqa_rows(root: Path, split: str) -> Rows:
    data = read_json(root, _GQA_QUESTIONS)
    for qid, q in data.items():
        yield f"{root / _GQA_QUESTIONS}:{qid}", {**q, "_id": qid}


def _gqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"gqa_images/{row['imageId']}.jpg")
    return hemm_sample(
        ctx, str(row["_id"]), [image], str(row["question"]), SHORT_ANSWER, str(row["answer"])
    )


GQA = benchmark(
    Benchmark(
        name="hemm-gqa",
        title="HEMM: GQA (test-dev, all questions)",
        citation=CITATION,
        license="CC BY 4.0 (GQA)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(SHORT_ANSWER, at("hemm/prompts/gqa_prompt.py")),
        to_sample=_gqa_sample,
        split="testdev",
        splits=("testdev",),
        size=172174,
        read_files=_gqa_rows,
        hemm="GQA",
        schema_confirmed=loader_confirmed("hemm/data/gqa_dataset.py"),
        notes=("HEMM asks testdev_all_questions.json (all, not the balanced subset).",),
        **release_files(
            'mkdir -p "$LMMPROBE_DATA_DIR"/hemm-gqa && cd "$LMMPROBE_DATA_DIR"/hemm-gqa && '
            "wget https://downloads.cs.stanford.edu/nlp/data/gqa/questions1.2.zip "
            "https://downloads.cs.stanford.edu/nlp/data/gqa/images.zip && "
            "unzip questions1.2.zip -d gqa_questions && unzip -j images.zip -d gqa_images"
        ),
    )
)
