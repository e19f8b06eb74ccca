"""Run-level metrics with cluster-bootstrap confidence intervals."""

from lmmprobe.metrics.bootstrap import (
    bootstrap_distribution,
    percentile_interval,
    ratio,
    ratio_intervals,
    resample_weights,
)
from lmmprobe.metrics.choice import (
    METRIC_NAMES,
    MISSING,
    MetricValue,
    breakdown,
    group_by,
    summarize,
)
from lmmprobe.metrics.stability import circular_accuracy, entropy, instability

__all__ = [
    "METRIC_NAMES",
    "MISSING",
    "MetricValue",
    "bootstrap_distribution",
    "breakdown",
    "circular_accuracy",
    "entropy",
    "group_by",
    "instability",
    "percentile_interval",
    "ratio",
    "ratio_intervals",
    "resample_weights",
    "summarize",
]
