"""A leaderboard's set of benchmarks as one name: ``--data openvlm`` runs its columns' benchmarks.

The set is a suite (`Benchmark.members`, loaded as HEMM's is: each member in turn, at its own
default split); its run metric is the leaderboard's average
(`lmmprobe.metrics.builtin.leaderboard`), computed from each member's rows with the member's
official metric and shown with every column beside it. The columns and their normalizations are
data in `lmmprobe.metrics.leaderboard`; a set names its columns and takes its members from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, benchmark
from lmmprobe.metrics.leaderboard import OPENVLM_COLUMNS, OPENVLM_COMMIT, OPENVLM_SOURCE
from lmmprobe.schema import Sample

__all__ = ["leaderboard_set"]

CITATION = (
    "Duan et al. 2024, VLMEvalKit: An Open-Source Toolkit for Evaluating Large Multi-Modality "
    "Models. ACM MM 2024, arXiv:2407.11691; the OpenVLM leaderboard "
    "(huggingface.co/spaces/opencompass/open_vlm_leaderboard)"
)

NOTES = (
    "The average is the leaderboard's Avg Score (gen_table.py generate_table, "
    f"{OPENVLM_SOURCE} @ {OPENVLM_COMMIT[:7]}): MMBench_V11 = mean of MMBench v1.1 EN and CN "
    "rounded to 0.1; MME = perception + cognition points / 28; OCRBench = points / 10; "
    "HallusionBench = mean of aAcc, fAcc, qAcc; the others in percent as they are; "
    "round(np.mean(...), 1).",
    "With a column missing (a member not run, not loadable, or not defined in this lmmprobe) "
    "the leaderboard shows no average: the run reports openvlm_avg_partial, the mean of the "
    "present columns, labelled as not the leaderboard's, and its notes name the missing ones.",
    "Each column is its benchmark's official score as lmmprobe computes it (the benchmark's "
    "own scoring code, judged where its protocol judges: pass --judge SPEC). The leaderboard's "
    "own figures come from VLMEvalKit's evaluation of each benchmark, which differs for some "
    "(MMMU: VLMEvalKit turns open questions into choices; judges: GPT-3.5/GPT-4-Turbo, named "
    "per column in the run's notes).",
    "MMBench_V11 on the leaderboard is MMBench v1.1's test split, whose answers MMBench does "
    "not publish; the set loads each member at its default split, which the run's rows record.",
    "path=FOLDER holds one copy per member, FOLDER/MEMBER (as $LMMPROBE_DATA_DIR does).",
)


def _set_row(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # A set has no rows of its own: the loader reads each member.
    raise DataError(
        f"{ctx.benchmark.name} is a leaderboard set: its members are read, not its rows"
    )


def leaderboard_set(name: str, title: str, fields: tuple[str, ...], metric: str) -> Benchmark:
    """Register the set `name`: the benchmarks of the leaderboard columns `fields`.

    Returns:
        The registered definition.

    """
    members = tuple(dict.fromkeys(b for field in fields for b in OPENVLM_COLUMNS[field].benchmarks))
    return benchmark(
        Benchmark(
            name=name,
            title=title,
            citation=CITATION,
            license="each member's own (see lmmprobe data show MEMBER)",
            formulation="single_choice",
            metric=metric,
            prompt=PromptTemplate(
                "{question}", "each member's official prompt (lmmprobe data show MEMBER)"
            ),
            to_sample=_set_row,
            fetch="each member's own: lmmprobe data show MEMBER",
            layout="files",
            members=members,
            groups=("leaderboard",),
            schema_confirmed=f"the columns: meta_data.py, {OPENVLM_SOURCE} @ {OPENVLM_COMMIT[:7]}",
            notes=NOTES,
        )
    )
