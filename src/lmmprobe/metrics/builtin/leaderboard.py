"""The OpenVLM leaderboard's columns and average, for a run of ``--data openvlm`` (or ``openvlm-main``).

A run of a leaderboard set holds the rows of each of its benchmarks, tagged with the benchmark's
name (``metadata.benchmark``). Each column is computed from its benchmarks' own rows with their
official run metric (MMStar's ``accuracy`` over MMStar's rows only, MME's perception and
cognition over MME's), put in the leaderboard's unit and combined as the leaderboard does
(`lmmprobe.metrics.leaderboard`); the average is the leaderboard's ``Avg Score`` over them.

Three kinds of metric, all for the whole run (not per ``--by`` group) and only when the run's
data is a leaderboard set:

- ``openvlm_<column>`` (``openvlm_mmbench_v11``...): each column as the leaderboard shows it
  (percent; MME and OCRBench in points), headline, beside the average;
- ``openvlm_avg``: the leaderboard's average, present only when every column of the set is;
- ``openvlm_avg_partial``: with a column missing, the mean of the present ones, under its own
  name and label: it is not the leaderboard's average (which shows none then). The run's notes
  name the missing columns (`lmmprobe.report.leaderboard`).

None of them has an interval: the leaderboard shows none, and the columns' own metrics carry
theirs in a ``--by benchmark`` breakdown.
"""

from __future__ import annotations

from collections.abc import Callable

from lmmprobe.metrics.leaderboard import (
    OPENVLM_COLUMNS,
    OPENVLM_DEFAULT,
    OPENVLM_MAIN,
    Column,
    LeaderboardAverage,
    column_figure,
    leaderboard_average,
)
from lmmprobe.metrics.reduction import CachedRows, GroupRows
from lmmprobe.metrics.run_metric import RUN_METRICS, MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema.benchmark import ROW_BENCHMARK

__all__ = ["LEADERBOARD_SETS", "leaderboard_of", "set_average"]

FAMILY = "leaderboard"

LEADERBOARD_SETS: dict[str, tuple[str, ...]] = {
    "openvlm": OPENVLM_DEFAULT,
    "openvlm-main": OPENVLM_MAIN,
}
"""The leaderboard sets (registered as benchmarks of these names) and the columns each averages."""


def leaderboard_of(data: str) -> str | None:
    """The leaderboard set a run's data spec names (``openvlm,path=DIR`` → ``openvlm``), if any."""
    name = data.split(",", 1)[0].split(":", 1)[0].strip().lower()
    return name if name in LEADERBOARD_SETS else None


def _figures(ctx: MetricContext, columns: tuple[Column, ...]) -> dict[tuple[str, str], float]:
    """Each column's (benchmark, metric) figures over that benchmark's rows, leaderboard units."""
    rows = ctx.rows
    cached = rows if isinstance(rows, CachedRows) else CachedRows(rows, ctx.summary)
    out: dict[tuple[str, str], float] = {}
    contexts: dict[str, MetricContext] = {}
    for column in columns:
        for benchmark, metric in column.inputs:
            if benchmark not in contexts:
                group = GroupRows(cached, ROW_BENCHMARK, benchmark)
                contexts[benchmark] = MetricContext(group, ctx.spec, f"benchmark={benchmark}")
            sub = contexts[benchmark]
            if not sub.summary.rows:
                continue  # the benchmark was not run
            value = RUN_METRICS.get(metric).compute(sub)
            if value is not None and value.value is not None:
                out[(benchmark, metric)] = column.unit(value.value)
    return out


def set_average(ctx: MetricContext) -> LeaderboardAverage | None:
    """The run's leaderboard average and columns, once per context; None for other runs."""
    board = leaderboard_of(ctx.spec.data)
    if board is None or ctx.group is not None:
        return None

    def compute() -> LeaderboardAverage:
        fields = LEADERBOARD_SETS[board]
        figures = _figures(ctx, tuple(OPENVLM_COLUMNS[f] for f in fields))
        columns = {f: column_figure(OPENVLM_COLUMNS[f], figures) for f in fields}
        return leaderboard_average(fields, columns)

    return ctx.shared(f"leaderboard:{board}", compute)


@run_metric(
    "openvlm_avg",
    summary="OpenVLM leaderboard's Avg Score over its set's columns (--data openvlm / "
    "openvlm-main), as its gen_table.py computes it; only with every column present",
    label="OpenVLM avg",
    family=FAMILY,
    order=0,
    per_group=False,
    digits=1,
)
def openvlm_avg(ctx: MetricContext) -> MetricValue | None:
    """The leaderboard's average, when no column of the set is missing."""
    average = set_average(ctx)
    if average is None or average.partial or average.value is None:
        return None
    return MetricValue(average.value, None, None, ctx.summary.rows)


@run_metric(
    "openvlm_avg_partial",
    summary="Mean of the OpenVLM columns present when some are missing: NOT the leaderboard's "
    "average (the run's notes name the missing columns)",
    label="partial avg (not OpenVLM's)",
    family=FAMILY,
    order=1,
    per_group=False,
    digits=1,
)
def openvlm_avg_partial(ctx: MetricContext) -> MetricValue | None:
    """The mean over the present columns, when one or more is missing."""
    average = set_average(ctx)
    if average is None or not average.partial or average.value is None:
        return None
    return MetricValue(average.value, None, None, ctx.summary.rows)


def _column_metric(order: int, field: str) -> None:
    column = OPENVLM_COLUMNS[field]

    def compute(ctx: MetricContext) -> MetricValue | None:
        average = set_average(ctx)
        if average is None or average.columns.get(field) is None:
            return None
        value = average.columns[field]
        return None if value is None else MetricValue(value, None, None, ctx.summary.rows)

    compute.__doc__ = f"The OpenVLM column {field}, as the leaderboard shows it."
    unit = "points" if column.scale == 1 and column.divisor != 1 else "percent"
    register: Callable[..., object] = run_metric(
        column_metric_name(field),
        summary=f"OpenVLM column {field} ({unit}) from {', '.join(column.benchmarks)}'s "
        f"{' + '.join(column.metrics)} (a leaderboard set's run only)",
        label=field,
        family=FAMILY,
        order=2 + order,
        per_group=False,
        digits=1,
    )
    register(compute)


def column_metric_name(field: str) -> str:
    """The run metric of a leaderboard column (``MMBench_V11`` → ``openvlm_mmbench_v11``)."""
    return "openvlm_" + field.lower().replace("-", "_")


for _order, _field in enumerate(OPENVLM_MAIN):
    _column_metric(_order, _field)
