"""What a leaderboard set's run must say beside its average: missing columns, and the judges.

A run of ``--data openvlm`` (or ``openvlm-main``) has the leaderboard's average only when every
column of the set has a figure (`lmmprobe.metrics.builtin.leaderboard`). `leaderboard_notes`
writes, per model, the sentences the figures cannot carry: which columns are missing (and which
benchmarks would give them), that the partial average is therefore not the leaderboard's, and
which columns rest on a judge: the judge lmmprobe's figure was read with (or that its rules read
it alone) beside the one the leaderboard names. ``results.json`` records them with the run's
other notes; results.md, the terminal and the report show them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from lmmprobe.metrics.builtin.leaderboard import (
    LEADERBOARD_SETS,
    column_metric_name,
    leaderboard_of,
)
from lmmprobe.metrics.leaderboard import OPENVLM_COLUMNS, Column
from lmmprobe.schema import RunSpec

__all__ = ["leaderboard_notes"]


class _Judged(Protocol):
    judges: list[str]
    protocols: dict[str, str]


class _Model(Protocol):
    # `lmmprobe.report.model.ModelResults`, as far as the notes read it.
    @property
    def metrics(self) -> Mapping[str, Any]: ...
    @property
    def judge(self) -> Any: ...


def _missing(fields: list[str]) -> str:
    parts = [f"{f} ({', '.join(OPENVLM_COLUMNS[f].benchmarks)})" for f in fields]
    return "; ".join(parts)


def _judged_by(column: Column, judge: _Judged | None) -> str:
    if column.judge is not None and judge is not None and column.judge in judge.protocols:
        return f"judged with {column.judge} by {', '.join(judge.judges)}"
    if column.judge is not None:
        return f"its rules only (no --judge: {column.judge} not run)"
    return "its rules only"


def leaderboard_notes(
    spec: RunSpec, models: Mapping[str, _Model], labels: Mapping[str, str] | None = None
) -> list[str]:
    """The notes of a leaderboard set's run, per model; none for any other run.

    Args:
        spec: The run's spec (its data names the set).
        models: Model spec → its results (`ModelResults`).
        labels: Model spec → the name to give it; the spec itself without one.

    Returns:
        Sentences, one per fact: the missing columns (and that the partial average is not the
        leaderboard's), and how the columns resting on a judge were judged.

    """
    board = leaderboard_of(spec.data)
    if board is None:
        return []
    fields = list(LEADERBOARD_SETS[board])
    notes: list[str] = []
    for model, results in models.items():
        name = (labels or {}).get(model, model)
        present = [f for f in fields if column_metric_name(f) in results.metrics]
        missing = [f for f in fields if f not in present]
        if missing:
            notes.append(
                f"{name}: {len(missing)} of the {len(fields)} {board} columns are missing: "
                f"{_missing(missing)} (not run, not loaded, or not defined in this lmmprobe). "
                + (
                    f"openvlm_avg_partial is the mean of the other {len(present)}: it is not "
                    "the leaderboard's Avg Score, which the leaderboard does not show without "
                    "every column."
                    if present
                    else "No column has a figure, so there is no average."
                )
            )
        judged = [
            f"{f}: {_judged_by(OPENVLM_COLUMNS[f], results.judge)}; the leaderboard: "
            f"{OPENVLM_COLUMNS[f].leaderboard_judge or 'rules'}"
            for f in present
            if OPENVLM_COLUMNS[f].judge is not None or OPENVLM_COLUMNS[f].leaderboard_judge
        ]
        if judged:
            notes.append(f"{name}: {board} columns read by a judge. " + ". ".join(judged) + ".")
    return notes
