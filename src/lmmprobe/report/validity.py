"""Validity as Dysca argues it: whether two runs rank the same models alike.

Dysca (Zhang et al., 2025, section "Validity") checks a generated benchmark by the rank
correlation of models' scores on it with their scores on standard benchmarks (Spearman's rho,
Kendall's tau). `run_validity` does that for two stored runs: each model's value of a run
metric on each run (``accuracy`` by default; any registered run metric, e.g. the official one
of a benchmark, ``dysca_average`` against ``mmbench_circular``), computed from the stored rows
by the metric itself (so a stored run's answers are read as a fresh report would read them),
over the models both runs scored, and, with ``by``, per value of a metadata key (``subtask``)
that both runs hold. The statistics are `lmmprobe.metrics.ranking.rank_correlation` (scipy's,
two-sided p-values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lmmprobe.metrics.ranking import rank_correlation
from lmmprobe.metrics.run_metric import RUN_METRICS, MetricContext, RunMetric
from lmmprobe.registry import RegistryError
from lmmprobe.schema import RunSpec, Score
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
        metric_a: The run metric ranking the models of run A (``accuracy``).
        metric_b: The run metric ranking the models of run B.
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
    metric_a: str
    metric_b: str
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


def _metric(name: str) -> RunMetric:
    try:
        return RUN_METRICS.get(name)
    except RegistryError as exc:
        raise ValidityError(str(exc)) from exc


def _spec(store: Store, run_id: str) -> RunSpec:
    spec = RunSpec.model_validate(store.get_run(run_id).get("spec") or {})
    # Intervals are not ranked: skip the bootstrap.
    return spec.model_copy(update={"bootstrap": 0})


def _value(
    metric: RunMetric, rows: Sequence[Score], spec: RunSpec, group: str | None
) -> float | None:
    value = metric.compute(MetricContext(rows, spec, group))
    if value is None or value.value is None:
        return None
    return float(value.value)


def _overall(rows: dict[str, list[Score]], metric: RunMetric, spec: RunSpec) -> dict[str, float]:
    out = {}
    for model, scores in rows.items():
        value = _value(metric, scores, spec, None)
        if value is not None:
            out[model] = value
    return out


def _by_group(
    rows: dict[str, list[Score]], key: str, metric: RunMetric, spec: RunSpec
) -> dict[str, dict[str, float]]:
    """Group -> model -> the metric's value (rows lacking the key belong to no group)."""
    out: dict[str, dict[str, float]] = {}
    for model, scores in rows.items():
        groups: dict[str, list[Score]] = {}
        for s in scores:
            if key in s.metadata:
                groups.setdefault(str(s.metadata[key]), []).append(s)
        for group, members in groups.items():
            value = _value(metric, members, spec, f"{key}={group}")
            if value is not None:
                out.setdefault(group, {})[model] = value
    return out


def _names(models: Sequence[str]) -> str:
    return ", ".join(models) or "none"


def run_validity(
    store: Store,
    run_a: str,
    run_b: str,
    *,
    by: str | None = None,
    metric_a: str = "accuracy",
    metric_b: str | None = None,
) -> Validity:
    """Spearman's rho and Kendall's tau between the model rankings of two runs.

    Args:
        store: The store holding both runs.
        run_a: A run id (resolved: `Store.resolve_run`).
        run_b: Another run id: the standard benchmark, say, against a generated set.
        by: A metadata key (``subtask``): also correlate per value both runs hold.
        metric_a: The run metric ranking run A's models (``lmmprobe list metrics``).
        metric_b: The run metric ranking run B's models; None: `metric_a`.

    Returns:
        The models compared (and those left out), the correlation, and per-group ones.

    Raises:
        ValidityError: Fewer than 3 models have a value of the metric on both runs (the
            message names the models of each run), a metric is not registered, or ``by`` is
            given with a metric computed for whole runs only.
        ImportError: scipy is missing.

    """
    name_b = metric_a if metric_b is None else metric_b
    ma, mb = _metric(metric_a), _metric(name_b)
    if by is not None:
        for m in (ma, mb):
            if not m.per_group:
                raise ValidityError(f"metric {m.name} is computed for whole runs only: no --by")
    spec_a, spec_b = _spec(store, run_a), _spec(store, run_b)
    rows_a = _rows_by_model(store, run_a)
    rows_b = _rows_by_model(store, run_b)
    scores_a, scores_b = _overall(rows_a, ma, spec_a), _overall(rows_b, mb, spec_b)
    models = sorted(set(scores_a) & set(scores_b))
    if len(models) < MIN_MODELS:
        raise ValidityError(
            f"a rank correlation needs at least {MIN_MODELS} models scored on both runs "
            f"({metric_a} on {run_a}, {name_b} on {run_b}); "
            f"{len(models)} shared ({_names(models)}). Run {run_a} scored: "
            f"{_names(sorted(scores_a))}; run {run_b} scored: {_names(sorted(scores_b))}"
        )
    validity = Validity(
        run_a=run_a,
        run_b=run_b,
        metric_a=metric_a,
        metric_b=name_b,
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
    groups_a, groups_b = _by_group(rows_a, by, ma, spec_a), _by_group(rows_b, by, mb, spec_b)
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
