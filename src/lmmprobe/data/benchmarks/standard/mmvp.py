"""MMVP (VLMEvalKit's multiple-choice file): the ``mmvp`` benchmark definition.

MMVP asks each question about two images that a CLIP encoder sees as alike, and scores a pair
only when both answers are right. VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0) runs it from
``MMVP.tsv`` with its image-MCQ prompt and reading, and ``report_acc_MMVP``
(``vlmeval/dataset/utils/multiple_choice.py``) pairs the rows two by two in index order: its
``Overall`` is the pair accuracy (``mmvp_pair_accuracy``), its ``Average`` the accuracy over
questions. The pairs are found the same way here: the file's rows in index order, two by two.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks.standard._vlmevalkit import (
    PROMPT,
    SERVER,
    VLMEVALKIT,
    choice_sample,
    fetch_command,
    read_tsv,
    tsv_file,
)
from lmmprobe.schema import Sample
from lmmprobe.schema.text import ascii_integer

__all__ = ["MMVP"]

_DATASET = "MMVP"
_URL = f"{SERVER}/VLMEval/MMVP.tsv"
_MD5 = "8cb732b141a0cba5b42159df2839e557"
_MAX_ROWS = 100_000  # MMVP has 300 questions: the rows are held to be put in index order


def _index(row: Mapping[str, Any]) -> int | None:
    # ASCII digits only: "²" passes isdigit() and int() refuses it, "٣" is no index.
    return ascii_integer(str(row.get("index", "")).strip())


def _pairs(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    # report_acc_MMVP pairs rows 2i and 2i+1 of the scored table, which is in index order.
    rows = []
    for n, item in enumerate(read_tsv(tsv_file(root, _DATASET))):
        if n >= _MAX_ROWS:
            raise OSError(f"{_DATASET}.tsv holds more than {_MAX_ROWS} rows; MMVP has 300")
        rows.append(item)
    numbered = sorted(
        (index, n, item) for n, item in enumerate(rows) if (index := _index(item[1])) is not None
    )
    for rank, (_index_value, _n, (where, row)) in enumerate(numbered):
        yield where, {**row, "_pair": rank // 2}
    for where, row in rows:
        if _index(row) is None:
            yield where, row  # the reader names its bad index


def _mmvp(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if "_pair" not in row:
        raise RowError("index", f"expected an integer, got {row.get('index')!r}")
    return choice_sample(row, ctx, ("category",), {"pair": row["_pair"]})


MMVP = benchmark(
    Benchmark(
        name="mmvp",
        title="MMVP (multiple choice, question pairs)",
        citation="Tong et al. 2024, Eyes Wide Shut? Exploring the Visual Shortcomings of "
        "Multimodal LLMs, CVPR 2024, arXiv:2401.06209",
        license="unknown (see the MMVP release)",
        formulation="single_choice",
        metric="mmvp_pair_accuracy",
        prompt=PROMPT,
        to_sample=_mmvp,
        fetch=fetch_command("mmvp", [(_DATASET, _URL, _MD5)]),
        splits=("test",),
        size=300,
        layout="files",
        read_files=_pairs,
        matcher="vlmevalkit",
        judge="mmbench-choice",
        notes=(
            "The official score is the pair accuracy (VLMEvalKit's report_acc_MMVP 'Overall'): "
            "rows in index order, two by two, a pair right only if both answers are; a pair "
            "missing a question (limit=) is left out. Accuracy over questions is its 'Average'.",
            "Answers are read by VLMEvalKit's rules (matcher vlmevalkit); --judge SPEC adds its "
            "judge where they cannot read a letter (mmbench-choice). MMVP's own release grades "
            "free-form answers with GPT-4; this is VLMEvalKit's multiple-choice version.",
            f"Data: VLMEvalKit's {_DATASET}.tsv, pinned by its md5 {_MD5} (VLMEvalKit's "
            "DATASET_MD5; the server keeps no revisions, the fetch command checks it).",
        ),
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py (MMVP: default build_prompt, "
        "report_acc_MMVP) and image_base.py",
    )
)
