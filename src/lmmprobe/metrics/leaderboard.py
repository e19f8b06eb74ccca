"""The OpenVLM leaderboard's average, as the leaderboard computes it, over lmmprobe's figures.

The OpenVLM leaderboard (the Hugging Face Space ``opencompass/open_vlm_leaderboard``, mirrored
in open-compass/VLMEvalKit, branch ``leaderboard``, at `OPENVLM_COMMIT`) shows one column per
benchmark and an ``Avg Score``: ``gen_table.py`` ``generate_table`` takes each column's figure
from VLMEvalKit's results, normalizes it to 0-100 and averages:

- ``MMBench_V11`` is the mean of MMBench v1.1's test EN and CN ``Overall`` (CircularEval
  accuracy, percent), rounded to one decimal (``float(f'{val:.1f}')``) before anything else;
- ``MME`` is MME's total (perception + cognition, points out of 2,800), divided by 28;
- ``OCRBench`` is its ``Final Score`` (points out of 1,000), divided by 10;
- ``HallusionBench`` is the mean of aAcc, fAcc and qAcc (percent): the leaderboard's own
  ``Overall`` (VLMEvalKit issues #113 and #133; ``ImageYORNDataset.report_primary_metric``);
- every other column is its benchmark's ``Overall`` in percent as it is (MM-Vet and
  LLaVA-Bench: their judge's score);
- ``Avg Score`` is ``round(np.mean(scores), 1)``, and None as soon as one column is missing.

The columns shown on load are ``DEFAULT_BENCH`` (`OPENVLM_DEFAULT`); ticking more boxes
averages any subset of ``MAIN_FIELDS`` (`OPENVLM_MAIN`) the same way. ``Avg Rank`` needs every
other model's figures and is not computed here.

`Column.unit` puts lmmprobe's figure of a column's benchmark (its official run metric: a share
in [0, 1], or points) in the leaderboard's unit; `column_figure` makes the column as the
leaderboard shows it from those;
`leaderboard_average` is ``generate_table``'s reduction over the columns. An average over fewer
columns than the set's is not the leaderboard's: it is returned as ``partial``, with the missing
columns named, and is labelled as such wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "OPENVLM_COLUMNS",
    "OPENVLM_COMMIT",
    "OPENVLM_DEFAULT",
    "OPENVLM_MAIN",
    "OPENVLM_SOURCE",
    "Column",
    "LeaderboardAverage",
    "column_figure",
    "leaderboard_average",
]

OPENVLM_SOURCE = (
    "open-compass/VLMEvalKit branch leaderboard (the files of the Hugging Face Space "
    "opencompass/open_vlm_leaderboard)"
)
"""Where the leaderboard's code is read; its files: ``gen_table.py`` and ``meta_data.py``."""
OPENVLM_COMMIT = "1e1b41d67c5817047935b5a32d1af9ed0138da35"
"""The leaderboard branch's commit read (2025-01-20, its newest in the mirror)."""


@dataclass(frozen=True)
class Column:
    """One leaderboard column: which benchmarks and run metrics give it, and its normalization.

    Attributes:
        field: The leaderboard's name of it (``MMBench_V11``).
        benchmarks: The lmmprobe benchmarks it is computed from (both MMBench v1.1 tests).
        metrics: The run metrics read from each benchmark's rows (``mme_perception`` and
            ``mme_cognition`` for MME; HallusionBench's three accuracies).
        combine: How the figures make the column: ``one`` (the single figure), ``sum``
            (MME's total), ``mean`` (HallusionBench's ``Overall``), ``mean_1dp`` (MMBench
            v1.1: the mean of EN and CN, rounded to one decimal as ``get_mmbench_v11`` does).
        scale: Turns lmmprobe's figure into the leaderboard's unit: 100 for a share in
            [0, 1], 1 for points (MME, OCRBench) and for scores already in percent.
        divisor: The leaderboard's normalization to 0-100 before averaging (28 for MME, 10
            for OCRBench, else 1).
        judge: The judge protocol (``JUDGE_PROTOCOLS`` name) lmmprobe's figure is judged
            with, where the column rests on a judge; None for rule-read columns.
        leaderboard_judge: The judge model the leaderboard names for the column (its
            ``meta_data.py`` notes), so a figure judged by another says so.
        vlmevalkit: VLMEvalKit's dataset name of each of `benchmarks` (the results file's
            keys, and the suffix of VLMEvalKit's prediction files ``MODEL_DATASET.xlsx``).

    """

    field: str
    benchmarks: tuple[str, ...]
    metrics: tuple[str, ...]
    combine: str = "one"
    scale: float = 100.0
    divisor: float = 1.0
    judge: str | None = None
    leaderboard_judge: str | None = None
    vlmevalkit: tuple[str, ...] = ()

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """Each (benchmark, run metric) figure the column needs."""
        return tuple((b, m) for b in self.benchmarks for m in self.metrics)

    def unit(self, value: float) -> float:
        """The figure lmmprobe gives (a share, or points) in the leaderboard's unit (`scale`)."""
        return value * self.scale if self.scale != 1 else value


_GPT4_TURBO = "GPT-4-Turbo (gpt-4-1106-preview)"
_GPT35 = "GPT-3.5-Turbo-0613 (when its rules read no answer)"

OPENVLM_COLUMNS: dict[str, Column] = {
    c.field: c
    for c in (
        Column(
            "MMBench_V11",
            ("mmbench-v11-en", "mmbench-v11-cn"),
            ("mmbench_circular",),
            combine="mean_1dp",
            judge="mmbench-choice",
            leaderboard_judge=_GPT35,
            vlmevalkit=("MMBench_TEST_EN_V11", "MMBench_TEST_CN_V11"),
        ),
        Column("MMStar", ("mmstar",), ("accuracy",), vlmevalkit=("MMStar",)),
        Column(
            "MME",
            ("mme",),
            ("mme_perception", "mme_cognition"),
            "sum",
            scale=1,
            divisor=28,
            vlmevalkit=("MME",),
        ),
        Column(
            "MMMU_VAL",
            ("mmmu",),
            ("mmmu_accuracy",),
            leaderboard_judge=_GPT35,
            vlmevalkit=("MMMU_DEV_VAL",),
        ),
        Column(
            "MathVista",
            ("mathvista",),
            ("mathvista_accuracy",),
            judge="mathvista-extract",
            leaderboard_judge="GPT-4-Turbo (1106) (when its rules extract no answer)",
            vlmevalkit=("MathVista_MINI",),
        ),
        Column(
            "OCRBench",
            ("ocrbench",),
            ("ocrbench_score",),
            scale=1,
            divisor=10,
            vlmevalkit=("OCRBench",),
        ),
        Column("AI2D", ("ai2d",), ("accuracy",), vlmevalkit=("AI2D_TEST",)),
        Column(
            "HallusionBench",
            ("hallusionbench",),
            ("hallusionbench_aacc", "hallusionbench_facc", "hallusionbench_qacc"),
            "mean",
            judge="hallusionbench-correct",
            leaderboard_judge=_GPT35,
            vlmevalkit=("HallusionBench",),
        ),
        Column(
            "SEEDBench_IMG",
            ("seedbench",),
            ("accuracy",),
            leaderboard_judge=_GPT35,
            vlmevalkit=("SEEDBench_IMG",),
        ),
        Column(
            "MMVet",
            ("mmvet",),
            ("mmvet_score",),
            scale=1,
            judge="mmvet-grade",
            leaderboard_judge=_GPT4_TURBO,
            vlmevalkit=("MMVet",),
        ),
        Column(
            "LLaVABench",
            ("llava-wild",),
            ("llava_wild_relative",),
            scale=1,
            judge="llava-wild-review",
            leaderboard_judge=_GPT4_TURBO,
            vlmevalkit=("LLaVABench",),
        ),
        Column(
            "CCBench",
            ("ccbench",),
            ("mmbench_circular",),
            leaderboard_judge=_GPT35,
            vlmevalkit=("CCBench",),
        ),
        Column("RealWorldQA", ("realworldqa",), ("accuracy",), vlmevalkit=("RealWorldQA",)),
        Column("POPE", ("pope",), ("pope_f1",), vlmevalkit=("POPE",)),
        Column(
            "ScienceQA_TEST",
            ("scienceqa-img",),
            ("accuracy",),
            leaderboard_judge=_GPT35,
            vlmevalkit=("ScienceQA_TEST",),
        ),
        Column(
            "SEEDBench2_Plus",
            ("seedbench2-plus",),
            ("accuracy",),
            vlmevalkit=("SEEDBench2_Plus",),
        ),
        Column("MMT-Bench_VAL", ("mmt-bench",), ("accuracy",), vlmevalkit=("MMT-Bench_VAL",)),
        Column("BLINK", ("blink",), ("accuracy",), vlmevalkit=("BLINK",)),
    )
}
"""Every column of the leaderboard's ``MAIN_FIELDS``, in its order. A benchmark named here that
lmmprobe does not define yet is a column no run can give (the average says it is missing)."""

OPENVLM_DEFAULT: tuple[str, ...] = (
    "MMBench_V11",
    "MMStar",
    "MMMU_VAL",
    "MathVista",
    "OCRBench",
    "AI2D",
    "HallusionBench",
    "MMVet",
)
"""``meta_data.DEFAULT_BENCH``: the columns the leaderboard averages on load (``--data openvlm``)."""

OPENVLM_MAIN: tuple[str, ...] = tuple(OPENVLM_COLUMNS)
"""``meta_data.MAIN_FIELDS``: every column a user can tick (``--data openvlm-main``)."""


def column_figure(column: Column, figures: Mapping[tuple[str, str], float]) -> float | None:
    """The column as the leaderboard shows it, from its (benchmark, metric) figures.

    Args:
        column: The column.
        figures: (benchmark, run metric) → the metric's value over that benchmark's rows, in
            the leaderboard's unit (`Column.unit`: percent, or points).

    Returns:
        The column's figure (percent, or MME's and OCRBench's points), or None when one of its
        figures is missing.

    """
    values = [figures.get(key) for key in column.inputs]
    if any(v is None for v in values):
        return None
    scaled = [float(v) for v in values if v is not None]
    if column.combine == "sum":
        return sum(scaled)
    if column.combine == "mean":
        return sum(scaled) / len(scaled)
    if column.combine == "mean_1dp":
        # get_mmbench_v11: (CN + EN) / 2, then float(f'{val:.1f}').
        return float(f"{sum(scaled) / len(scaled):.1f}")
    (value,) = scaled
    return value


@dataclass(frozen=True)
class LeaderboardAverage:
    """The leaderboard's average over a set of columns, and what it rests on.

    Attributes:
        fields: The set's columns, in the leaderboard's order.
        columns: Each column's figure as the leaderboard shows it (None: missing).
        scores: Each present column normalized to 0-100 (what is averaged).
        value: The average, ``round(np.mean(scores), 1)``: over every column when none is
            missing (the leaderboard's ``Avg Score``), else over the present ones (partial).
        missing: The columns without a figure.

    """

    fields: tuple[str, ...]
    columns: dict[str, float | None]
    scores: dict[str, float]
    value: float | None
    missing: tuple[str, ...]

    @property
    def partial(self) -> bool:
        """Whether columns are missing: then `value` is not the leaderboard's ``Avg Score``."""
        return bool(self.missing)


def leaderboard_average(
    fields: Sequence[str], columns: Mapping[str, float | None]
) -> LeaderboardAverage:
    """``generate_table``'s ``Avg Score`` over `fields`, from each column's figure.

    Args:
        fields: The leaderboard's columns to average (`OPENVLM_DEFAULT`, or a subset of
            `OPENVLM_MAIN`).
        columns: Column → its figure as the leaderboard shows it (`column_figure`); a column
            absent or None is missing.

    Returns:
        The average and its parts. With a column missing the leaderboard shows no average
        (None); lmmprobe gives the mean of the present columns as `value` with `partial`
        set, never as the leaderboard's.

    Raises:
        KeyError: A field that is not one of the leaderboard's columns.

    """
    present: dict[str, float | None] = {}
    scores: dict[str, float] = {}
    for field in fields:
        column = OPENVLM_COLUMNS[field]
        value = columns.get(field)
        present[field] = value
        if value is not None:
            # gen_table divides MME and OCRBench and appends the others as they are.
            scores[field] = value / column.divisor if column.divisor != 1 else value
    missing = tuple(f for f in fields if present[f] is None)
    # np.mean of the list then Python's round() of the numpy float: numpy's rounding (scaled
    # by 10, then rint), which the leaderboard's figures come out of, not decimal rounding.
    mean = round(np.mean([scores[f] for f in fields if f in scores]), 1) if scores else None
    return LeaderboardAverage(
        fields=tuple(fields),
        columns=present,
        scores=scores,
        value=None if mean is None else float(mean),
        missing=missing,
    )
