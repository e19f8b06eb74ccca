"""BLINK (val, VLMEvalKit's file): the ``blink`` benchmark definition.

BLINK's 14 perception subtasks ask about one to four images each. The questions are read from
the TSV VLMEvalKit publishes (open-compass/VLMEvalKit @ e8e78f0, ``BLINK.tsv``: several images
in a cell, asked in order) with VLMEvalKit's prompt and answer reading; a judge, where the rules
cannot read a letter, gets VLMEvalKit's BLINK prompt (``blink-choice``). The score is BLINK's own
(zeyofu/BLINK_Benchmark @ 0cca9a3, ``eval/evaluate.py`` ``eval_prediction``): the mean of the
subtasks' accuracies (``blink_accuracy``), where VLMEvalKit's ``report_acc`` prints the mean
over questions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, RowContext, benchmark
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

__all__ = ["BLINK"]

_DATASET = "BLINK"
_URL = f"{SERVER}/VLMEval/BLINK.tsv"
_MD5 = "d5e8af148b10ac69f535ff7b23f3f989"


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield from read_tsv(tsv_file(root, _DATASET))


def _blink(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    return choice_sample(row, ctx, ("category",))


BLINK = benchmark(
    Benchmark(
        name="blink",
        groups=("multi-image",),
        title="BLINK (val)",
        citation="Fu et al. 2024, BLINK: Multimodal Large Language Models Can See but Not "
        "Perceive, ECCV 2024, arXiv:2404.12390",
        license="unknown (see the BLINK-Benchmark/BLINK card)",
        formulation="single_choice",
        metric="blink_accuracy",
        prompt=PROMPT,
        to_sample=_blink,
        fetch=fetch_command("blink", [(_DATASET, _URL, _MD5)]),
        split="val",
        splits=("val",),
        size=1901,
        layout="files",
        read_files=_rows,
        matcher="vlmevalkit",
        judge="blink-choice",
        notes=(
            "The official score is BLINK's (eval/evaluate.py): the mean of its subtasks' "
            "accuracies (--by category gives each). VLMEvalKit and the OpenVLM leaderboard "
            "print the mean over questions instead (report_acc's Overall).",
            "Answers are read by VLMEvalKit's rules (matcher vlmevalkit); with --judge SPEC "
            "the judge reads the rest with VLMEvalKit's BLINK prompt (blink-choice). BLINK's "
            "own release extracts the answer with its own GPT prompt.",
            "A question's images (up to four) are asked in order.",
            f"Data: VLMEvalKit's {_DATASET}.tsv, pinned by its md5 {_MD5} (VLMEvalKit's "
            "DATASET_MD5; the server keeps no revisions, the fetch command checks it).",
        ),
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py (BLINK: default build_prompt) and "
        "multiple_choice.py (build_prompt_blink)",
    )
)
