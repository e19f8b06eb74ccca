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
from lmmprobe.metrics.synth import (
    blind_gap,
    covariate_shift_sensitivity,
    covariate_shift_sensitivity_from_scores,
    question_type_sensitivity,
    question_type_sensitivity_from_scores,
    scenario_deltas,
    scores_by,
)
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
    "blind_gap",
    "bootstrap_distribution",
    "breakdown",
    "caption_scores",
    "circular_accuracy",
    "covariate_shift_sensitivity",
    "covariate_shift_sensitivity_from_scores",
    "entropy",
    "group_by",
    "instability",
    "kie_correct",
    "normalize_vqa_answer",
    "ocr_correct",
    "percentile_interval",
    "question_type_sensitivity",
    "question_type_sensitivity_from_scores",
    "ratio",
    "ratio_intervals",
    "resample_weights",
    "scenario_deltas",
    "scores_by",
    "summarize",
]
