"""Run-level metrics as registry entries: one file and a decorator per metric.

Every number under ``metrics`` (and each ``breakdown`` group) of ``results.json`` is computed by
an entry of `RUN_METRICS`. An entry says what it is (name, one-line summary, column label),
whether it is a headline column (the terminal table, results.md and the HTML leaderboard show
headline metrics), and how to compute it from a model's scores and the run spec: a function of
a `MetricContext` returning a `MetricValue`, or None when the metric does not apply to those
rows (then it is left out, not written as null).

Built-in metrics live in `lmmprobe.metrics.builtin` (one module per family); third-party
packages announce theirs as entry points in the ``lmmprobe.metrics`` group, ``name =
package.module:attribute`` naming the `RunMetric` the decorator returned. A metric in a script
or notebook only has to be defined (imported) before the run's results are built.

Metrics computed together share work through `MetricContext.shared`: the six answer rates come
from one bootstrap pass, the caption metrics from one pycocoevalcap call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lmmprobe.metrics.reduction import CachedRows, GroupRows, RowSummary, summarize_rows
from lmmprobe.metrics.value import MetricValue
from lmmprobe.registry import Registry, RegistryError
from lmmprobe.schema import RowSource, RunSpec, Score, ScoreRows

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "PLUGIN_FAMILY",
    "RUN_METRICS",
    "MetricContext",
    "RunMetric",
    "compute_metrics",
    "headline_metrics",
    "metric_digits",
    "run_metric",
    "run_metrics",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

ENTRY_POINT_GROUP = "lmmprobe.metrics"
"""Entry-point group third-party packages register run-level metrics in."""

FAMILIES: tuple[str, ...] = (
    "answers",  # accuracy and the other answer rates (metrics.builtin.answers)
    "leaderboard",  # a leaderboard set's average and columns (metrics.builtin.leaderboard)
    "repeats",  # prompt stability over repeats
    "captions",  # corpus caption metrics of lmmprobe's own
    "free_form",  # free-form descriptions (embedding similarity)
    "hemm",  # HEMM's BARTScore
    "benchmark_choice",  # official scores of multiple-choice and yes/no benchmarks
    "benchmark_open",  # official scores of open-ended, OCR and caption benchmarks
    "judges",  # judged figures and their coverage (metrics.builtin.judges)
    "tokens",  # tokens generated and what they cost
)
"""The built-in metric families, in the order their columns come; a metric's `RunMetric.order`
places it within its family."""

PLUGIN_FAMILY = "plugin"
"""The family of metrics that name none. Families not in `FAMILIES` come after every built-in
one, in the order of their names."""


class MetricContext:
    """What a run-level metric is computed from: one model's rows (of a run or a group) and the spec.

    The rows come from a `RowSource` (a stored run's rows read in chunks, or Scores held in
    memory). Built-in metrics read `summary`, one pass over the rows; a metric that needs the
    rows as Scores reads `scores`, built on first use (and kept for the context), so a metric
    written against a list of Scores, a plugin's say, keeps working.

    Attributes:
        rows: The rows, one per (sample, repeat).
        spec: The run's spec (bootstrap resamples, seed, formulation settings).
        group: The breakdown group the rows belong to (``"subtask=color"``), None for the run.

    """

    def __init__(
        self,
        rows: RowSource | Sequence[Score],
        spec: RunSpec,
        group: str | None = None,
        *,
        summary: RowSummary | None = None,
    ) -> None:
        """A context over `rows` (a source, or Scores).

        Args:
            rows: The rows.
            spec: The run's spec.
            group: The breakdown group, None for the whole run.
            summary: The rows' summary when already made (`summarize_rows` makes a run's and
                its groups' in one pass); made from the rows on first use otherwise.

        """
        self.rows: RowSource = ScoreRows(rows) if isinstance(rows, Sequence) else rows
        self.spec = spec
        self.group = group
        self._summary = summary
        self._scores: Sequence[Score] | None = rows if isinstance(rows, Sequence) else None
        self._shared: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"MetricContext(rows={self.rows!r}, group={self.group!r})"

    @property
    def scores(self) -> Sequence[Score]:
        """The rows as Scores, built on first use (one per (sample, repeat))."""
        if self._scores is None:
            self._scores = self.rows.scores()
        return self._scores

    @property
    def summary(self) -> RowSummary:
        """One pass over the rows: answer sums, outcome counts, tokens, which rows exist."""
        if self._summary is None:
            self._summary, _ = summarize_rows(self.rows, track_cost=bool(self.spec.prices))
        return self._summary

    @property
    def n_boot(self) -> int:
        """Bootstrap resamples of the intervals (``spec.bootstrap``; 0: no intervals)."""
        return self.spec.bootstrap

    @property
    def seed(self) -> int:
        """Seed of the resampling (``spec.seed``)."""
        return self.spec.seed

    def records(self, name: str) -> list[Any]:
        """The records extract `name` (`lmmprobe.metrics.reduction.RowExtract`) gives the rows.

        One pass over the model's Scores, built one at a time and dropped, gives the records
        of every extract that applies, for the run and each of its ``--by`` groups; the rows
        are never held as Scores (unless a metric asked for `scores`, then those are read).
        """
        rows = self.rows
        if isinstance(rows, GroupRows):
            return rows.records(name, self.spec)
        if not isinstance(rows, CachedRows):
            plain = rows
            held = self._scores
            rows = self.shared(
                "cached_rows",
                lambda: CachedRows(plain if held is None else ScoreRows(held), self.summary),
            )
        if rows.summary is None:
            rows.summary = self.summary
        return rows.records(name, self.spec)

    def tagged(self, metric: str) -> list[Score]:
        """The rows whose `Score.official_metric` is `metric` (benchmarks loaded by name).

        Which tags the rows hold is known from `summary`, so a run of no benchmark loaded by
        name builds no Score here; otherwise the rows are grouped by tag once per context, so
        the official metrics of many benchmarks cost one pass over the rows, not one each.
        """
        if metric not in self.summary.tags:
            return []

        def group() -> dict[Any, list[Score]]:
            by_tag: dict[Any, list[Score]] = {}
            for s in self.scores:
                tag = s.official_metric
                if tag is not None:
                    by_tag.setdefault(tag, []).append(s)
            return by_tag

        return list(self.shared("rows_by_metric_tag", group).get(metric, ()))

    def shared(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per context, so metrics computed together pay for it once.

        Args:
            key: Names the shared result; metrics using the same key get the same object.
            compute: Makes it on first use.

        """
        if key not in self._shared:
            self._shared[key] = compute()
        value: T = self._shared[key]
        return value


@dataclass(frozen=True)
class RunMetric:
    """A run-level metric: what it is, where it shows, and how it is computed.

    Attributes:
        name: Key in ``results.json`` (``metrics`` and each breakdown group).
        summary: One line for listings (``lmmprobe list metrics``) and help texts.
        compute: Context → value, or None when the metric does not apply to the rows.
        headline: Shown as a column of the terminal table, results.md and the HTML leaderboard.
        label: Short column header (default: the name).
        order: Position within its family (ties: by name).
        per_group: Also computed for each breakdown group (``--by``), not only the whole run.
        digits: Decimals shown in tables (3 for rates and scores; fewer for token counts, more
            for dollar amounts that are fractions of a cent).
        family: Which family of metrics it belongs to: its columns sit with the family's,
            families in the order of `FAMILIES` (others after, by name).

    """

    name: str
    summary: str
    compute: Callable[[MetricContext], MetricValue | None]
    headline: bool = True
    label: str = ""
    order: int = 0
    per_group: bool = True
    family: str = PLUGIN_FAMILY
    digits: int = 3

    @property
    def column(self) -> str:
        """The column header: `label`, else the name."""
        return self.label or self.name

    @property
    def position(self) -> tuple[int, str, int, str]:
        """Sort key of its column: family (`FAMILIES` first), order within it, then name."""
        if self.family in FAMILIES:
            return FAMILIES.index(self.family), "", self.order, self.name
        return len(FAMILIES), self.family, self.order, self.name


RUN_METRICS: Registry[RunMetric] = Registry(
    "metric", entry_point_group=ENTRY_POINT_GROUP, discover=("lmmprobe.metrics.builtin",)
)
"""Every run-level metric, by name: the built-ins, then plugins of the ``lmmprobe.metrics`` group."""


def run_metric(
    name: str,
    *,
    summary: str,
    headline: bool = True,
    label: str = "",
    order: int = 0,
    per_group: bool = True,
    family: str = PLUGIN_FAMILY,
    digits: int = 3,
) -> Callable[[Callable[[MetricContext], MetricValue | None]], RunMetric]:
    """Decorator registering a function of a `MetricContext` as a run-level metric.

    Args:
        name: Key in ``results.json``; an earlier metric of that name is replaced.
        summary: One line for listings.
        headline: Show it as a column of the result tables.
        label: Short column header (default: the name).
        order: Position within its family.
        per_group: Also compute it for each breakdown group.
        family: The family it belongs to (see `FAMILIES`); a plugin's metrics come after the
            built-in ones.
        digits: Decimals shown in tables.

    Returns:
        A decorator turning the function into the registered `RunMetric` (what an entry point
        in the ``lmmprobe.metrics`` group names).

    """

    def deco(compute: Callable[[MetricContext], MetricValue | None]) -> RunMetric:
        metric = RunMetric(
            name, summary, compute, headline, label, order, per_group, family, digits
        )
        RUN_METRICS.register(name, summary)(metric)
        return metric

    return deco


def run_metrics() -> list[RunMetric]:
    """Every usable run-level metric in column order; a plugin that fails to load is skipped."""
    metrics = []
    for name in RUN_METRICS.names():
        try:
            metric = RUN_METRICS.get(name)
        except RegistryError as exc:  # a plugin that fails to import
            log.warning("metric %s skipped: %s", name, exc)
            continue
        if not isinstance(metric, RunMetric):
            log.warning("metric %s skipped: its entry point names no RunMetric", name)
            continue
        metrics.append(metric)
    return sorted(metrics, key=lambda m: m.position)


def metric_digits(name: str) -> int:
    """Decimals a table shows for metric `name`: its `RunMetric.digits`, else 3."""
    try:
        metric = RUN_METRICS.get(name)
    except RegistryError:
        return 3
    return metric.digits if isinstance(metric, RunMetric) else 3


def headline_metrics() -> list[RunMetric]:
    """The headline metrics (result table columns) in column order."""
    return [m for m in run_metrics() if m.headline]


def compute_metrics(
    scores: RowSource | Sequence[Score],
    spec: RunSpec,
    *,
    group: str | None = None,
    summary: RowSummary | None = None,
) -> dict[str, MetricValue]:
    """Every metric that applies to one model's rows, in column order.

    Args:
        scores: The rows of one model (a whole run, or one breakdown group): a `RowSource`
            or Scores.
        spec: The run's spec.
        group: The breakdown group (``"key=value"``), None for the whole run; metrics with
            ``per_group=False`` are computed for the whole run only.
        summary: The rows' `RowSummary` when already made (see `MetricContext`).

    Returns:
        Name → value for each metric that applies (those returning None are left out).

    """
    ctx = MetricContext(scores, spec, group, summary=summary)
    out: dict[str, MetricValue] = {}
    for metric in run_metrics():
        if group is not None and not metric.per_group:
            continue
        value = metric.compute(ctx)
        if value is not None:
            out[metric.name] = value
    return out
