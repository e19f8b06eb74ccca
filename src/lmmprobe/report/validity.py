"""Validity as Dysca argues it: whether two runs rank the same models alike.

Dysca (Zhang et al., 2025, section "Validity") checks a generated benchmark by the rank
correlation of models' scores on it with their scores on standard benchmarks (Spearman's rho,
Kendall's tau). `run_validity` does that for two stored runs: each model's accuracy (percent of
the answers with a right/wrong verdict; errors left out, unparsed answers wrong, as
`lmmprobe.metrics.synth.accuracy_percent`) on each run, over the models both runs scored, and,
with ``by``, per value of a metadata key (``subtask``) that both runs hold. The statistics are
`lmmprobe.metrics.ranking.rank_correlation` (scipy's, two-sided p-values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lmmprobe.metrics.ranking import rank_correlation
from lmmprobe.metrics.synth import accuracy_percent, scores_by
from lmmprobe.schema import Score
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row

__all__ = ["MIN_MODELS", "GroupValidity", "Validity", "ValidityError", "run_validity"]

MIN_MODELS = 3
"""A rank correlation over fewer models says nothing (and scipy's tau needs 2 at least)."""


class ValidityError(ValueError):
    """The two runs cannot be compared (fewer than `MIN_MODELS` models scored by both)."""


@dataclass
class GroupValidity:
    """The correlation over one group (a subtask), or why there is none.

    Attributes:
        group: The metadata value (``color``).
        models: The models with a score on both runs in this group.
        result: `rank_correlation`'s dict (rho, tau and p-values); None when skipped.
        skipped: Why there is no result (fewer than 3 models); None otherwise.

    """

    group: str
    models: list[str]
    result: dict[str, Any] | None = None
    skipped: str | None = None


@dataclass
class Validity:
    """Rank agreement of the models of two runs.

    Attributes:
        run_a: The first run's id.
        run_b: The second run's id.
        metric: What each model is ranked by (``accuracy``, percent).
        scores_a: Model -> score on run A (models with judged answers).
        scores_b: Model -> score on run B.
        models: The models both runs scored, the correlation's intersection.
        only_a: Models scored only on run A (left out).
        only_b: Models scored only on run B (left out).
        result: `rank_correlation` over `models`.
        by: The metadata key of the per-group correlations, or None.
        groups: One entry per group both runs hold (sorted).
        groups_only_a: Groups only run A holds (left out).
        groups_only_b: Groups only run B holds (left out).

    """

    run_a: str
    run_b: str
    metric: str
    scores_a: dict[str, float]
    scores_b: dict[str, float]
    models: list[str]
    only_a: list[str]
    only_b: list[str]
    result: dict[str, Any]
    by: str | None = None
    groups: list[GroupValidity] = field(default_factory=list)
    groups_only_a: list[str] = field(default_factory=list)
    groups_only_b: list[str] = field(default_factory=list)


def _rows_by_model(store: Store, run_id: str) -> dict[str, list[Score]]:
    rows: dict[str, list[Score]] = {}
    for rec in store.iter_score_rows(run_id):
        rows.setdefault(str(rec["model"]), []).append(score_from_row(rec))
    return rows


def _overall(rows: dict[str, list[Score]]) -> dict[str, float]:
    out = {}
    for model, scores in rows.items():
        acc = accuracy_percent(scores)
        if acc is not None:
            out[model] = acc
    return out


def _by_group(rows: dict[str, list[Score]], key: str) -> dict[str, dict[str, float]]:
    """Group -> model -> accuracy."""
    out: dict[str, dict[str, float]] = {}
    for model, scores in rows.items():
        for group, acc in scores_by(scores, key).items():
            out.setdefault(group, {})[model] = acc
    return out


def _names(models: Sequence[str]) -> str:
    return ", ".join(models) or "none"


def run_validity(store: Store, run_a: str, run_b: str, *, by: str | None = None) -> Validity:
    """Spearman's rho and Kendall's tau between the model rankings of two runs.

    Args:
        store: The store holding both runs.
        run_a: A run id (resolved: `Store.resolve_run`).
        run_b: Another run id: the standard benchmark, say, against a generated set.
        by: A metadata key (``subtask``): also correlate per value both runs hold.

    Returns:
        The models compared (and those left out), the correlation, and per-group ones.

    Raises:
        ValidityError: Fewer than 3 models have judged answers on both runs (the message
            names the models of each run).
        ImportError: scipy is missing.

    """
    rows_a = _rows_by_model(store, run_a)
    rows_b = _rows_by_model(store, run_b)
    scores_a, scores_b = _overall(rows_a), _overall(rows_b)
    models = sorted(set(scores_a) & set(scores_b))
    if len(models) < MIN_MODELS:
        raise ValidityError(
            f"a rank correlation needs at least {MIN_MODELS} models scored on both runs; "
            f"{len(models)} shared ({_names(models)}). Run {run_a} scored: "
            f"{_names(sorted(scores_a))}; run {run_b} scored: {_names(sorted(scores_b))}"
        )
    validity = Validity(
        run_a=run_a,
        run_b=run_b,
        metric="accuracy",
        scores_a=scores_a,
        scores_b=scores_b,
        models=models,
        only_a=sorted(set(scores_a) - set(scores_b)),
        only_b=sorted(set(scores_b) - set(scores_a)),
        result=rank_correlation(scores_a, scores_b),
        by=by,
    )
    if by is None:
        return validity
    groups_a, groups_b = _by_group(rows_a, by), _by_group(rows_b, by)
    validity.groups_only_a = sorted(set(groups_a) - set(groups_b))
    validity.groups_only_b = sorted(set(groups_b) - set(groups_a))
    for group in sorted(set(groups_a) & set(groups_b)):
        a, b = groups_a[group], groups_b[group]
        shared = sorted(set(a) & set(b))
        entry = GroupValidity(group=group, models=shared)
        if len(shared) < MIN_MODELS:
            entry.skipped = f"{len(shared)} model(s) scored on both runs, {MIN_MODELS} needed"
        else:
            entry.result = rank_correlation(a, b)
        validity.groups.append(entry)
    return validity
