"""CV-Bench (2D and 3D, VLMEvalKit's files): the ``cv-bench`` benchmark definition.

CV-Bench (Cambrian-1) asks 2D questions (spatial relation, counting; ADE20K and COCO images) and
3D ones (depth order, relative distance; Omni3D). VLMEvalKit (open-compass/VLMEvalKit @
e8e78f0, ``vlmeval/dataset/image_mcq.py`` ``CVBench``) publishes them as two TSVs and asks each
row's own ``prompt`` (the question with its options, as the benchmark words it), reading the
answer by its rules. The score is the benchmark's own (nyu-visionx/CV-Bench card, "Accuracy"):
``((ADE20K + COCO) / 2 + Omni3D) / 2`` over the sources' accuracies (``cvbench_accuracy``);
VLMEvalKit's ``CVBench.report_accuracy`` gives the 2D half the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks.standard._choice import present
from lmmprobe.data.benchmarks.standard._vlmevalkit import (
    SERVER,
    VLMEVALKIT,
    choice_sample,
    fetch_command,
    read_tsv,
    tsv_file,
)
from lmmprobe.schema import Sample

__all__ = ["CVBENCH"]

_FILES = (
    ("CV-Bench-2D", f"{SERVER}/VLMEval/CV-Bench-2D.tsv", "a7cff4cc2857cc237ee2b89e62bccb2d"),
    ("CV-Bench-3D", f"{SERVER}/VLMEval/CV-Bench-3D.tsv", "bb94c0d568d652d15b60e001ac40a170"),
)
_ROW_PROMPT = PromptTemplate("{question}")  # the row's own prompt, cited as the definition's


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for dataset, _url, _md5 in _FILES:
        kind = dataset.rsplit("-", 1)[1]  # 2D or 3D: which half of the score a row counts in
        for where, row in read_tsv(tsv_file(root, dataset)):
            yield where, {**row, "_kind": kind}


def _cvbench(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    sample = choice_sample(row, ctx, ("source", "category"), {"type": row["_kind"]})
    if sample is None:
        return None
    if not present(row.get("prompt")):
        raise RowError("prompt", "no prompt (CV-Bench asks each row's own prompt)")
    if not present(row.get("source")):
        raise RowError("source", "no source (the score averages per source)")
    # The prompt holds the options as published: they keep their order and letters whatever
    # --circular or --marks say (fixed_options), or the reading would map a letter elsewhere.
    return sample.model_copy(
        update={
            "id": f"{row['_kind']}/{sample.id}",
            "question": str(row["prompt"]),
            "context": None,
            "prompt": _ROW_PROMPT,
            "metadata": {**sample.metadata, "fixed_options": True},
        }
    )


CVBENCH = benchmark(
    Benchmark(
        name="cv-bench",
        title="CV-Bench (2D and 3D)",
        citation="Tong et al. 2024, Cambrian-1: A Fully Open, Vision-Centric Exploration of "
        "Multimodal LLMs, NeurIPS 2024, arXiv:2406.16860",
        license="apache-2.0 (nyu-visionx/CV-Bench card)",
        formulation="single_choice",
        metric="cvbench_accuracy",
        prompt=PromptTemplate(
            "{question}",
            source=VLMEVALKIT + ":vlmeval/dataset/image_mcq.py (CVBench.build_prompt: the "
            "row's prompt)",
        ),
        to_sample=_cvbench,
        fetch=fetch_command("cv-bench", _FILES),
        splits=("test",),
        size=2638,
        layout="files",
        read_files=_rows,
        matcher="vlmevalkit",
        judge="mmbench-choice",
        notes=(
            "The official score is the card's: the mean of 2D (the mean of ADE20K's and "
            "COCO's accuracies) and 3D (Omni3D's accuracy). --by type gives 2D and 3D as "
            "questions' means; --by source each source's accuracy.",
            "Answers are read by VLMEvalKit's rules (matcher vlmevalkit); --judge SPEC adds "
            "its judge where they cannot read a letter (mmbench-choice).",
            "Data: VLMEvalKit's CV-Bench-2D.tsv and CV-Bench-3D.tsv in one folder, pinned by "
            "their md5s (VLMEvalKit's DATASET_MD5; the fetch command checks them).",
        ),
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py CVBench (prompt, split, source "
        "columns) and the nyu-visionx/CV-Bench card's fields",
    )
)
