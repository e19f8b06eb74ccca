"""Run-level answer metrics with cluster-bootstrap confidence intervals.

Every metric is a ratio of row counts. Rows whose request failed (errors) are not answers:
they count only in ``error_rate`` and are left out of every other denominator. Unparsed
answers are answers, and wrong ones. A row is an error when it carries an ``error_type`` (or,
defensively, has stage ``"error"``). Confidence intervals resample samples, not rows,
because repeats of one sample are not independent draws.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lmmprobe.metrics.bootstrap import (
    FloatArray,
    GroupRatioMean,
    WeightArray,
    bootstrap_distribution,
    finite_or_none,
    percentile_interval,
    ratio,
)
from lmmprobe.schema import Score

METRIC_NAMES: tuple[str, ...] = (
    "accuracy",
    "balanced_accuracy",
    "abstention_rate",
    "format_hit_rate",
    "unparsed_rate",
    "error_rate",
)
"""Metrics `summarize` reports, in this order."""

MISSING = "(missing)"
"""Breakdown group of rows whose metadata lacks the key."""

# Per-row indicator columns, summed per sample; ratio metrics divide two of them.
_COLUMNS = (
    "answered",
    "correct",
    "offered",
    "abstained",
    "format_hit",
    "unparsed",
    "error",
    "row",
    "judged",
    "choice",
)
_COL = {name: i for i, name in enumerate(_COLUMNS)}
_RATIOS: dict[str, tuple[str, str]] = {
    "accuracy": ("correct", "judged"),
    "abstention_rate": ("abstained", "offered"),
    # Format hits are a property of choice answers (a mark or an option text); unparsed counts
    # among rows that get a verdict, so free-form descriptions and captions dilute neither.
    "format_hit_rate": ("format_hit", "choice"),
    "unparsed_rate": ("unparsed", "judged"),
    "error_rate": ("error", "row"),
}
_RATIO_POS = [METRIC_NAMES.index(name) for name in _RATIOS]
_RATIO_NUM = [_COL[num] for num, _ in _RATIOS.values()]
_RATIO_DEN = [_COL[den] for _, den in _RATIOS.values()]
_BALANCED_POS = METRIC_NAMES.index("balanced_accuracy")


@dataclass(frozen=True, slots=True)
class MetricValue:
    """A metric's point value with its 95% bootstrap confidence interval.

    Attributes:
        value: The metric, or None when undefined (no eligible rows).
        low: 2.5th percentile of the bootstrap distribution; None when ``value`` is None or no
            resampling was done.
        high: 97.5th percentile of the bootstrap distribution, likewise.
        n: Number of rows the metric is computed over (its denominator).

    """

    value: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict[str, float | int | None]:
        """Return the fields as a JSON-ready dictionary."""
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def _is_error(score: Score) -> bool:
    # Either marker means the request failed; such a row must never be scored as an answer.
    return score.error_type is not None or score.stage == "error"


def _is_choice(score: Score) -> bool:
    return isinstance(score.gold, int) and not isinstance(score.gold, bool)


def _indicators(score: Score) -> tuple[bool, ...]:
    """One row's values for `_COLUMNS`."""
    if _is_error(score):
        return (False, False, False, False, False, False, True, True, False, False)
    offered = score.abstain_offered
    return (
        True,
        bool(score.correct),
        offered,
        offered and score.abstained,
        score.format_hit,
        score.stage == "unparsed" and score.correct is not None,
        False,
        True,
        # Captions have no per-answer verdict (they are scored as a corpus): not in accuracy.
        score.correct is not None,
        _is_choice(score),
    )


@dataclass(frozen=True, slots=True)
class _Table:
    """Per-sample sums that every metric and every resample is computed from.

    Attributes:
        totals: ``(n_samples, len(_COLUMNS))`` per-sample sums of the row indicators.
        classes: Balanced accuracy from correct and total rows per (gold class, sample).
        n_class_rows: Rows balanced accuracy is computed over.

    """

    totals: npt.NDArray[np.float32]
    classes: GroupRatioMean
    n_class_rows: int

    @property
    def n_samples(self) -> int:
        return int(self.totals.shape[0])


def _build_table(scores: Sequence[Score]) -> _Table:
    # Samples are indexed in sorted id order so the resampling, and hence the interval, does not
    # depend on the order rows arrive in.
    sample_index = {sid: i for i, sid in enumerate(sorted({s.sample_id for s in scores}))}
    row_sample = np.array([sample_index[s.sample_id] for s in scores], dtype=np.intp)
    flags = np.array([_indicators(s) for s in scores], dtype=np.float64)
    totals = np.stack(
        [np.bincount(row_sample, weights=col, minlength=len(sample_index)) for col in flags.T],
        axis=1,
    )
    row_class = _row_classes(scores)
    row_class[flags[:, _COL["answered"]] == 0] = -1  # errors are not answers of any class
    classes = _class_cells(row_class, row_sample, flags[:, _COL["correct"]], len(sample_index))
    # float32 halves the bytes the resampling product streams; per-sample counts stay exact.
    return _Table(totals.astype(np.float32), classes, int((row_class >= 0).sum()))


def _row_classes(scores: Sequence[Score]) -> npt.NDArray[np.int64]:
    """Integer class of each row (its gold option text), -1 for open-ended rows."""
    index: dict[str, int] = {}
    return np.array(
        [index.setdefault(s.gold_text, len(index)) if _is_choice(s) else -1 for s in scores],
        dtype=np.int64,
    )


def _class_cells(
    row_class: npt.NDArray[np.int64],
    row_sample: npt.NDArray[np.intp],
    row_correct: FloatArray,
    n_samples: int,
) -> GroupRatioMean:
    """Balanced accuracy over rows with a class >= 0, summed per (class, sample) cell."""
    kept = row_class >= 0
    cells, cell_of_row = np.unique(
        row_class[kept] * n_samples + row_sample[kept], return_inverse=True
    )
    correct = np.bincount(cell_of_row, weights=row_correct[kept], minlength=cells.size)
    rows = np.bincount(cell_of_row, minlength=cells.size)
    return GroupRatioMean(cells % n_samples, cells // n_samples, correct, rows, n_samples)


def _statistics(table: _Table, weights: WeightArray) -> FloatArray:
    """Every metric of `METRIC_NAMES` on each resample of a weight chunk; NaN if undefined."""
    sums = weights @ table.totals
    out = np.empty((weights.shape[0], len(METRIC_NAMES)))
    out[:, _RATIO_POS] = ratio(sums[:, _RATIO_NUM], sums[:, _RATIO_DEN])
    out[:, _BALANCED_POS] = table.classes(weights)
    return out


def _point_values(table: _Table) -> tuple[FloatArray, list[int]]:
    """Point estimate (NaN if undefined) and denominator of every metric."""
    # float64 weights make the products accumulate in float64, so point values are exact.
    ones = np.ones((1, table.n_samples), dtype=np.float64)
    values = _statistics(table, ones)[0]
    sums = table.totals.sum(axis=0, dtype=np.float64)
    counts = [
        table.n_class_rows if name == "balanced_accuracy" else int(sums[_COL[_RATIOS[name][1]]])
        for name in METRIC_NAMES
    ]
    return values, counts


def summarize(
    scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0
) -> dict[str, MetricValue]:
    """Compute the run-level metrics of one model's scores with bootstrap intervals.

    Metrics (see `METRIC_NAMES`): accuracy (correct / answered rows; unparsed rows count as
    wrong), balanced_accuracy (mean over gold option texts of per-class accuracy, choice
    samples only), abstention_rate (abstained / rows offered an "unknown" option),
    format_hit_rate, unparsed_rate (each over answered rows) and error_rate (failed / all rows).
    Failed requests are excluded from every denominator except error_rate's.

    Intervals are 95% percentile intervals of a cluster bootstrap that resamples samples
    (``sample_id``) with all their repeats; resamples where a metric is undefined are dropped.

    Args:
        scores: Rows of one model, one per sample and repeat.
        n_boot: Number of bootstrap resamples; 0 skips the intervals.
        seed: Seed of the ``numpy.random.default_rng`` used for resampling.

    Returns:
        A `MetricValue` for each name of `METRIC_NAMES`, in that order.

    Raises:
        ValueError: ``n_boot`` is negative.

    """
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    if not scores:
        return {name: MetricValue(None, None, None, 0) for name in METRIC_NAMES}
    table = _build_table(scores)
    values, counts = _point_values(table)
    low = high = np.full(len(METRIC_NAMES), np.nan)
    if n_boot:
        dist = bootstrap_distribution(
            lambda w: _statistics(table, w), table.n_samples, n_boot, np.random.default_rng(seed)
        )
        low, high = percentile_interval(dist)
    result: dict[str, MetricValue] = {}
    for j, name in enumerate(METRIC_NAMES):
        value = finite_or_none(values[j])
        defined = value is not None
        result[name] = MetricValue(
            value,
            finite_or_none(low[j]) if defined else None,
            finite_or_none(high[j]) if defined else None,
            counts[j],
        )
    return result


def _sort_key(value: Any) -> tuple[int, float, str]:
    # Numbers sort numerically (2 before 10), then strings, then anything else by its text,
    # so mixed-type metadata still has one stable order.
    if isinstance(value, int | float):
        return (0, float(value), "")
    if isinstance(value, str):
        return (1, 0.0, value)
    return (2, 0.0, str(value))


def _group_by(scores: Sequence[Score], key: str) -> dict[str, list[Score]]:
    """Rows per ``str(metadata[key])``, groups in value order, rows lacking the key last."""
    groups: dict[str, list[Score]] = {}
    order: dict[str, tuple[int, float, str]] = {}
    missing: list[Score] = []
    for s in scores:
        if key not in s.metadata:
            missing.append(s)
            continue
        value = s.metadata[key]
        label = str(value)
        groups.setdefault(label, []).append(s)
        order.setdefault(label, _sort_key(value))
    ordered = {label: groups[label] for label in sorted(groups, key=lambda g: (order[g], g))}
    if missing:
        ordered.setdefault(MISSING, []).extend(missing)
    return ordered


def group_by(scores: Sequence[Score], key: str) -> dict[str, list[Score]]:
    """Rows per ``str(metadata[key])`` in `breakdown`'s group order ("(missing)" last)."""
    return _group_by(scores, key)


def breakdown(
    scores: Sequence[Score],
    keys: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, dict[str, MetricValue]]]:
    """Compute `summarize` separately for each value of some metadata keys.

    Args:
        scores: Rows of one model.
        keys: Metadata keys to break down by, e.g. ``["task", "style"]``.
        n_boot: Number of bootstrap resamples per group; 0 skips the intervals.
        seed: Resampling seed, the same for every group.

    Returns:
        ``{key: {str(value): metrics}}``; groups are ordered by value (numbers numerically),
        and rows whose metadata lacks the key form a last group named ``"(missing)"``.

    """
    return {
        key: {
            label: summarize(rows, n_boot=n_boot, seed=seed)
            for label, rows in _group_by(scores, key).items()
        }
        for key in keys
    }
