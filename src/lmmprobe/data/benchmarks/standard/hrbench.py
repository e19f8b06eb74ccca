"""HR-Bench 4K and 8K: one table of two rows (the same reading and score, another file each).

HR-Bench asks about 4K and 8K images: single-instance (FSP) and cross-instance (FCP) perception,
each question in several cycles of its options. VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0,
``vlmeval/dataset/image_mcq.py`` ``HRBenchDataset``) reads ``hr_bench_4k.tsv`` /
``hr_bench_8k.tsv`` from DreamMr/HR-Bench with its image-MCQ prompt and reading, and
``report_acc_hrbench`` (``vlmeval/dataset/utils/hrbench.py``) scores each cycle (its accuracy
over all questions, and per category) and averages the cycles: ``hrbench_accuracy`` is that
average (its ``Average``/``all`` row); ``--by category`` gives FSP and FCP the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.benchmarks import Benchmark, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks.standard._choice import present
from lmmprobe.data.benchmarks.standard._vlmevalkit import (
    PROMPT,
    VLMEVALKIT,
    choice_sample,
    read_tsv,
    tsv_file,
)
from lmmprobe.schema import Sample

__all__ = ["TABLE", "TABLE_DEFINITIONS"]


@dataclass(frozen=True)
class HRBench:
    """A row of the table: one HR-Bench resolution."""

    name: str
    title: str
    dataset: str  # the file's name without .tsv
    md5: str


TABLE: tuple[HRBench, ...] = (
    HRBench("hrbench-4k", "HR-Bench 4K", "hr_bench_4k", "f6b041b03d49543494b8a56d2e35be65"),
    HRBench("hrbench-8k", "HR-Bench 8K", "hr_bench_8k", "274c9c7f89329b804a4723178a00219c"),
)


def _files(entry: HRBench) -> Any:
    def read(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
        yield from read_tsv(tsv_file(root, entry.dataset))

    return read


def _hrbench(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if not present(row.get("cycle_category")):
        raise RowError("cycle_category", "no cycle (the score averages over cycles)")
    return choice_sample(row, ctx, ("category", "cycle_category"))


def _definition(entry: HRBench) -> Benchmark:
    file = f"{entry.dataset}.tsv"
    return Benchmark(
        name=entry.name,
        title=entry.title,
        citation="Wang et al. 2025, Divide, Conquer and Combine: A Training-Free Framework for "
        "High-Resolution Image Perception in Multimodal Large Language Models, AAAI 2025, "
        "arXiv:2408.15556",
        license="unknown (see the DreamMr/HR-Bench card)",
        formulation="single_choice",
        metric="hrbench_accuracy",
        prompt=PROMPT,
        to_sample=_hrbench,
        hub_id="DreamMr/HR-Bench",
        include=(file,),
        after_download=f'echo "{entry.md5}  {file}" | md5sum -c -',
        splits=("test",),
        layout="files",
        read_files=_files(entry),
        matcher="vlmevalkit",
        judge="mmbench-choice",
        notes=(
            "The official score is report_acc_hrbench's: each cycle's accuracy over its "
            "questions, averaged over the cycles (--by category: FSP and FCP, each the same "
            "way; --by cycle_category: each cycle).",
            "Answers are read by VLMEvalKit's rules (matcher vlmevalkit); --judge SPEC adds its "
            "judge where they cannot read a letter (mmbench-choice).",
            f"Revision not pinned: VLMEvalKit downloads {file} from the repository's main and "
            f"checks its md5 {entry.md5} (DATASET_MD5), as the fetch command does; no commit "
            "id of the repository was confirmed offline.",
        ),
        schema_confirmed=VLMEVALKIT[:36] + " image_mcq.py HRBenchDataset and "
        "utils/hrbench.py (category, cycle_category)",
    )


TABLE_DEFINITIONS: tuple[Benchmark, ...] = tuple(benchmark(_definition(e)) for e in TABLE)
"""The registered definitions, one per row of `TABLE`."""
