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
from lmmprobe.metrics.text import (
    CAPTION_METRICS,
    MetricUnavailable,
    anls,
    caption_scores,
    kie_correct,
    normalize_vqa_answer,
    ocr_correct,
)

__all__ = [
    "CAPTION_METRICS",
    "METRIC_NAMES",
    "MISSING",
    "MetricUnavailable",
    "MetricValue",
    "anls",
    "bootstrap_distribution",
    "breakdown",
    "caption_scores",
    "circular_accuracy",
    "entropy",
    "group_by",
    "instability",
    "kie_correct",
    "normalize_vqa_answer",
    "ocr_correct",
    "percentile_interval",
    "ratio",
    "ratio_intervals",
    "resample_weights",
    "summarize",
]
