"""Per-row run metrics: one decorated function of a row, with its interval for free.

A metric that is a mean of one value per row (a verdict, a credit, a flag) needs no
`MetricContext`: `row_metric` registers a function ``f(row) -> float | None`` as a run-level
metric (`RunMetric`). Its value is the mean of ``f`` over the rows it gives a number for (None
leaves a row out, as accuracy leaves out failed requests), computed as a reduction over the
rows' chunks, so a stored run's rows are read a chunk at a time and no `Score` is built. Each
``--by`` group gets its own value, from its own rows; the run's and its groups' sums come from
one pass over the run's rows (`row_sums`).

The interval is the answer rates' (`lmmprobe.metrics.choice.summarize`): per-sample sums of the
values and of the rows counted, samples in sorted id order, every sample of the rows a cluster
(repeats travel together), a 95% percentile cluster bootstrap of ``sum(values) / sum(counts)``
with ``numpy.random.default_rng(spec.seed)`` and ``spec.bootstrap`` resamples, resamples
where nothing is counted dropped, and the resampling drawn per profile (interchangeable samples)
where that pays off. Accuracy written as a row metric is therefore `accuracy`, value and
interval ends, whenever the answer rates draw the same way (see docs/definitions.md).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from lmmprobe.metrics.bootstrap import (
    FloatArray,
    WeightArray,
    bootstrap_distribution,
    cluster_profiles,
    finite_or_none,
    percentile_interval,
    profile_bootstrap_distribution,
    profiles_pay_off,
    ratio,
)
from lmmprobe.metrics.reduction import CachedRows, GroupRows, group_labels
from lmmprobe.metrics.run_metric import PLUGIN_FAMILY, MetricContext, RunMetric, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema.rows import ABSENT, FACT_KEYS, RowChunk, RowSource

__all__ = ["Row", "RowFunction", "RowMeans", "row_metric", "row_metric_value", "row_sums"]

T = TypeVar("T")

_SHARED = "row_metric"
"""Names a row metric's group sums among what a run's rows share (`CachedRows.shared`)."""


class Row:
    """One row (a sample and repeat of one model) as a row metric sees it: read-only fields.

    The fields are those of `lmmprobe.schema.rows.RowChunk` (a `Score`'s, without the answer
    and prompt texts); `metadata` holds the keys the metric asked for (``keys=``) and the few
    every chunk carries (`lmmprobe.schema.rows.FACT_KEYS`); name every key the function reads.
    """

    __slots__ = ("_chunk", "_i", "_keys")

    def __init__(self, chunk: RowChunk, i: int, keys: Sequence[str] = FACT_KEYS) -> None:
        """Row `i` of `chunk`, whose `metadata` shows `keys` (those the chunk carries)."""
        self._chunk = chunk
        self._i = i
        self._keys = keys

    def __repr__(self) -> str:
        return f"Row(sample_id={self.sample_id!r}, repeat={self.repeat!r})"

    @property
    def model(self) -> str:
        """The model spec."""
        return self._chunk.model[self._i]

    @property
    def sample_id(self) -> str:
        """The sample: the cluster the bootstrap resamples."""
        return self._chunk.sample_id[self._i]

    @property
    def repeat(self) -> int:
        """Which repeat of the sample (0 without ``--repeats``)."""
        return self._chunk.repeat[self._i]

    @property
    def stage(self) -> str:
        """How the answer was read (`Score.stage`: mark, text, unparsed, truncated, error...)."""
        return self._chunk.stage[self._i]

    @property
    def correct(self) -> bool | None:
        """The verdict: True, False, or None (no verdict: an error, a caption)."""
        return self._chunk.correct[self._i]

    @property
    def format_hit(self) -> bool:
        """A choice answer read by its mark or option text."""
        return self._chunk.format_hit[self._i]

    @property
    def choice(self) -> bool:
        """A choice sample (its gold is an option), not one scored against references."""
        return self._chunk.choice[self._i]

    @property
    def gold_text(self) -> str:
        """The gold answer's text."""
        return self._chunk.gold_text[self._i]

    @property
    def abstain_offered(self) -> bool:
        """An "unknown" option was shown."""
        return self._chunk.abstain_offered[self._i]

    @property
    def abstained(self) -> bool:
        """The answer chose the "unknown" option."""
        return self._chunk.abstained[self._i]

    @property
    def error_type(self) -> str | None:
        """The failed request's error type, None for an answer."""
        return self._chunk.error_type[self._i]

    @property
    def answered(self) -> bool:
        """The request gave an answer (no error): the rows the answer rates count."""
        return self.error_type is None and self.stage != "error"

    @property
    def prompt_tokens(self) -> int | None:
        """Prompt tokens the backend reported."""
        return self._chunk.prompt_tokens[self._i]

    @property
    def completion_tokens(self) -> int | None:
        """Completion tokens the backend reported."""
        return self._chunk.completion_tokens[self._i]

    @property
    def reasoning_tokens(self) -> int | None:
        """Reasoning tokens the backend reported."""
        return self._chunk.reasoning_tokens[self._i]

    @property
    def judged(self) -> bool:
        """The row carries judges' verdicts."""
        return self._chunk.judged[self._i]

    @property
    def metadata(self) -> dict[str, Any]:
        """The sample's metadata values of the keys the chunk carries (absent keys left out)."""
        i, meta = self._i, self._chunk.meta
        return {k: meta[k][i] for k in self._keys if k in meta and meta[k][i] is not ABSENT}


RowFunction = Callable[[Row], float | bool | None]
"""A row metric's function: the row's value, or None for a row it does not count."""


class RowMeans:
    """Per-sample sums of a row function's values and of the rows it counted, chunk by chunk.

    Every sample of the rows is a cluster, counted or not, as in the answer rates' table.
    """

    def __init__(self, name: str, function: RowFunction, *, keys: Sequence[str] = ()) -> None:
        """Sums of `function` (the metric `name`, named in errors) over no rows yet.

        The rows it is given show the metadata keys `keys` and `FACT_KEYS`, whatever else
        their chunk carries (a ``--by`` key), so the function sees the same row everywhere.
        """
        self.name = name
        self.function = function
        self._keys = tuple(dict.fromkeys([*FACT_KEYS, *keys]))
        self._samples: dict[str, int] = {}  # sample id -> index by first appearance
        self._sums = np.zeros((0, 2))  # per sample: sum of values, rows counted

    def add(self, chunk: RowChunk) -> None:
        """Add the rows of one chunk.

        Raises:
            TypeError: The function gave something other than a number, a bool or None.
            ValueError: The function gave NaN or an infinity.

        """
        self.add_values(chunk.sample_id, self.values(chunk))

    def values(self, chunk: RowChunk) -> list[float | None]:
        """The function's value of each row of `chunk` (None: not counted), checked.

        Raises:
            TypeError: The function gave something other than a number, a bool or None.
            ValueError: The function gave NaN or an infinity.

        """
        out: list[float | None] = []
        for i in range(len(chunk)):
            row = Row(chunk, i, self._keys)
            try:
                got = self.function(row)
            except Exception as exc:
                exc.add_note(f"in row metric {self.name!r} on sample {row.sample_id!r}")
                raise
            out.append(None if got is None else self._number(got, row))
        return out

    def add_values(self, sample_ids: Sequence[str], values: Sequence[float | None]) -> None:
        """Add rows by their samples and values (None: a row of the sample, not counted)."""
        index = self._samples
        where = np.fromiter(
            (index.setdefault(sid, len(index)) for sid in sample_ids),
            dtype=np.intp,
            count=len(sample_ids),
        )
        picked = [i for i, v in enumerate(values) if v is not None]
        grown = np.zeros((len(index), 2))
        grown[: self._sums.shape[0]] = self._sums
        rows = where[np.asarray(picked, dtype=np.intp)]
        counted = np.asarray([values[i] for i in picked], dtype=np.float64)
        grown[:, 0] += np.bincount(rows, weights=counted, minlength=len(index))
        grown[:, 1] += np.bincount(rows, minlength=len(index))
        self._sums = grown

    def _number(self, got: object, row: Row) -> float:
        if type(got) is float and math.isfinite(got):  # the common case, checked first
            return got
        where = f"row metric {self.name!r} on sample {row.sample_id!r} repeat {row.repeat}"
        if not isinstance(got, numbers.Real):  # bool and numpy's scalars are numbers too
            raise TypeError(
                f"{where} returned {type(got).__name__} {got!r}: return a number, or None for "
                "a row it does not count"
            )
        value = float(got)
        if not math.isfinite(value):
            raise ValueError(
                f"{where} returned {value}: return a finite number, or None for a row it does "
                "not count"
            )
        return value

    def value(self, *, n_boot: int, seed: int) -> MetricValue | None:
        """The mean over counted rows with its interval; None when no row was counted.

        Args:
            n_boot: Bootstrap resamples (0: no interval).
            seed: Seed of the resampling.

        Raises:
            ValueError: ``n_boot`` is negative.

        """
        if n_boot < 0:
            raise ValueError(f"n_boot must be >= 0, got {n_boot}")
        ids = list(self._samples)
        # Samples in sorted id order, as the answer rates' table: the resampling, hence the
        # interval, does not depend on the order rows arrive in.
        sums = self._sums[np.asarray(sorted(range(len(ids)), key=ids.__getitem__), dtype=np.intp)]
        sums = sums.reshape(len(ids), 2)
        counted = int(sums[:, 1].sum())
        if not counted:
            return None
        point = _mean(np.ones((1, len(ids)), dtype=np.float64), sums)[0, 0]
        low = high = math.nan
        if n_boot:
            rng = np.random.default_rng(seed)
            _, code = np.unique(sums, axis=0, return_inverse=True)
            _, first, sizes = cluster_profiles(code.reshape(-1, 1))
            if profiles_pay_off(sizes.size, len(ids)):
                small = sums[first]
                dist = profile_bootstrap_distribution(lambda w: _mean(w, small), sizes, n_boot, rng)
            else:
                dist = bootstrap_distribution(lambda w: _mean(w, sums), len(ids), n_boot, rng)
            lows, highs = percentile_interval(dist)
            low, high = float(lows[0]), float(highs[0])
        return MetricValue(
            finite_or_none(point), finite_or_none(low), finite_or_none(high), counted
        )


def _mean(weights: WeightArray, sums: FloatArray) -> FloatArray:
    """``sum(values) / sum(counts)`` on each resample, ``(b, 1)``; NaN where nothing counted."""
    resampled = weights @ sums
    return ratio(resampled[:, :1], resampled[:, 1:])


def row_metric_value(
    rows: RowSource,
    name: str,
    function: RowFunction,
    *,
    keys: Sequence[str] = (),
    n_boot: int = 1000,
    seed: int = 0,
) -> MetricValue | None:
    """A row function's mean over some rows with its cluster-bootstrap interval.

    Args:
        rows: The rows (a stored run's, or `lmmprobe.schema.ScoreRows` over Scores).
        name: The metric's name (for errors).
        function: The row's value, or None for a row it does not count.
        keys: Metadata keys `Row.metadata` should carry.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Seed of the resampling.

    Returns:
        The value, or None when no row was counted.

    """
    whole, _ = row_sums(rows, name, function, keys=keys)
    return whole.value(n_boot=n_boot, seed=seed)


def row_sums(
    rows: RowSource,
    name: str,
    function: RowFunction,
    *,
    keys: Sequence[str] = (),
    by: Sequence[str] = (),
) -> tuple[RowMeans, dict[str, dict[str, RowMeans]]]:
    """A row function's sums over the rows and every ``--by`` group of them, in one pass.

    The function is called once per row; each group gets the values of its rows in row order
    (a list value puts the row in each of its groups, a row lacking the key in
    ``"(missing)"``), so every group's figure is the one its own rows
    (`lmmprobe.metrics.reduction.GroupRows`) give.

    Args:
        rows: The rows (one model's).
        name: The metric's name (for errors).
        function: The row's value, or None for a row it does not count.
        keys: Metadata keys `Row.metadata` should carry.
        by: The ``--by`` keys whose groups to sum.

    Returns:
        The sums of every row, and per key of `by` each group's (label -> sums).

    """
    whole = RowMeans(name, function, keys=keys)
    groups: dict[str, dict[str, RowMeans]] = {key: {} for key in by}
    labels: dict[tuple[type, Hashable], list[str]] = {}
    for chunk in rows.chunks(list(dict.fromkeys([*keys, *by]))):
        values = whole.values(chunk)
        whole.add_values(chunk.sample_id, values)
        for key in by:
            # Each group's rows of the chunk, as `GroupRows` cuts them.
            members: dict[str, list[int]] = {}
            for i, raw in enumerate(chunk.meta[key]):
                for label in _labels(raw, labels):
                    members.setdefault(label, []).append(i)
            for label, picked in members.items():
                means = groups[key].setdefault(label, RowMeans(name, function, keys=keys))
                means.add_values([chunk.sample_id[i] for i in picked], [values[i] for i in picked])
    return whole, groups


def _labels(raw: Any, known: dict[tuple[type, Hashable], list[str]]) -> list[str]:
    """`group_labels` of `raw`, kept per hashable value (most rows share a few values)."""
    # The type is part of the key: 1, 1.0 and True are equal but name different groups.
    key = (type(raw), raw)
    try:
        found = known.get(key)
    except TypeError:  # unhashable: a list, or a tuple holding one
        return group_labels(raw)
    if found is None:
        found = known[key] = group_labels(raw)
    return found


def _given(value: T) -> Callable[[], T]:
    """A `CachedRows.shared` maker of a value already made."""
    return lambda: value


def row_metric(
    name: str,
    *,
    summary: str | None = None,
    keys: Iterable[str] = (),
    headline: bool = True,
    label: str = "",
    order: int = 0,
    per_group: bool = True,
    family: str = PLUGIN_FAMILY,
    digits: int = 3,
) -> Callable[[RowFunction], RunMetric]:
    """Decorator registering a function of one row as a run-level metric with an interval.

    ``@row_metric("strict_accuracy")`` on ``def f(row: Row) -> float | None`` is the whole
    metric: its value is the mean of ``f`` over the rows it gives a number for, its interval the
    answer rates' cluster bootstrap over samples (see the module docstring).

    Args:
        name: Key in ``results.json``; an earlier metric of that name is replaced.
        summary: One line for listings (default: the first line of the function's docstring).
        keys: Metadata keys the function reads from `Row.metadata`.
        headline: Show it as a column of the result tables.
        label: Short column header (default: the name).
        order: Position within its family.
        per_group: Also compute it for each breakdown group.
        family: The family it belongs to (default: after the built-in ones).
        digits: Decimals shown in tables.

    Returns:
        A decorator turning the function into the registered `RunMetric` (what an entry point
        in the ``lmmprobe.metrics`` group names).

    """
    wanted = tuple(keys)

    def deco(function: RowFunction) -> RunMetric:
        doc = (function.__doc__ or "").strip().splitlines()

        def compute(ctx: MetricContext) -> MetricValue | None:
            rows, n_boot, seed = ctx.rows, ctx.n_boot, ctx.seed
            if isinstance(rows, GroupRows):
                # The groups were summed with the run's rows (below); else one pass a key.
                parent, key = rows.parent, rows.key
                groups = parent.shared(
                    (_SHARED, id(function), key),
                    lambda: row_sums(parent, name, function, keys=wanted, by=[key])[1][key],
                )
                found = groups.get(rows.label)
                return None if found is None else found.value(n_boot=n_boot, seed=seed)
            by = list(ctx.spec.by) if per_group and isinstance(rows, CachedRows) else []
            whole, groups_by = row_sums(rows, name, function, keys=wanted, by=by)
            if isinstance(rows, CachedRows):
                # The run's groups share these rows (`GroupRows.parent`): one pass for all.
                for by_key, summed in groups_by.items():
                    rows.shared((_SHARED, id(function), by_key), _given(summed))
            return whole.value(n_boot=n_boot, seed=seed)

        compute.__doc__ = f"Mean of {getattr(function, '__qualname__', name)} over the rows."
        register = run_metric(
            name,
            summary=summary or (doc[0] if doc else name),
            headline=headline,
            label=label,
            order=order,
            per_group=per_group,
            family=family,
            digits=digits,
        )
        return register(compute)

    return deco
