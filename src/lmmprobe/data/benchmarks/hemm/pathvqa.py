"""HEMM: PathVQA (test): the ``hemm-pathvqa`` benchmark definition."""

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
    file_image,
    hemm_sample,
    loader_confirmed,
    need_root,
    read_plain_pickle,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["PATHVQA", "PATHVQA_BENCHMARK"]

PATHVQA = (
    "Given a Radiology Image and a question. Answer the question in a single word.\n"
    "Question: {question} Short Answer: "
)

_PVQA_QA = "pathvqa_images/pvqa/qas/test/test_qa.pkl"


def _pathvqa_rows(root: Path, split: str) -> Rows:
    data = read_plain_pickle(root / _PVQA_QA)
    if not isinstance(data, list):
        raise DataError(f"{root / _PVQA_QA}: expected a list of question dicts")
    for i, row in enumerate(data):
        yield f"{root / _PVQA_QA}:[{i}]", row


def _pathvqa_sample(row: Row, ctx: RowContext) -> Sample:
    root = need_root(ctx)
    image = file_image(root, f"pathvqa_images/pvqa/images/test/{row['image']}.jpg")
    return hemm_sample(
        ctx, str(ctx.index), [image], str(row["question"]), PATHVQA, str(row["answer"])
    )


PATHVQA_BENCHMARK = benchmark(
    Benchmark(
        name="hemm-pathvqa",
        title="HEMM: PathVQA (test)",
        citation=CITATION,
        license="MIT (PathVQA)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(PATHVQA, at("hemm/prompts/pathvqa_prompt.py")),
        to_sample=_pathvqa_sample,
        split="test",
        splits=("test",),
        read_files=_pathvqa_rows,
        hemm="PathVQA",
        schema_confirmed=loader_confirmed("hemm/data/pathvqa_dataset.py"),
        notes=(
            "HEMM reads the release's test_qa.pkl; lmmprobe reads it as plain data only (a pickle "
            "naming any class or function is refused, never run).",
        ),
        **release_files(
            'cd "$LMMPROBE_DATA_DIR" && mkdir -p hemm-pathvqa && cd hemm-pathvqa && gdown '
            "--no-check-certificate --folder "
            "https://drive.google.com/drive/folders/1G2C2_FUCyYQKCkSeCRRiTTsLDvOAjFj5 && "
            "unzip Backup/pvqa.zip -d pathvqa_images/"
        ),
    )
)
