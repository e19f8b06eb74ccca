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
    breakdown,
    group_by,
    summarize,
)
from lmmprobe.metrics.row_metric import Row, row_metric
from lmmprobe.metrics.run_metric import (
    RUN_METRICS,
    MetricContext,
    RunMetric,
    compute_metrics,
    headline_metrics,
    metric_digits,
    run_metric,
    run_metrics,
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
    kie_correct_strict,
    normalize_vqa_answer,
    ocr_correct_words,
    reform_kie_correct,
    reform_ocr_correct,
)
from lmmprobe.metrics.value import MetricValue

__all__ = [
    "CAPTION_METRICS",
    "METRIC_NAMES",
    "MISSING",
    "RUN_METRICS",
    "MetricContext",
    "MetricUnavailable",
    "MetricValue",
    "Row",
    "RunMetric",
    "anls",
    "blind_gap",
    "bootstrap_distribution",
    "breakdown",
    "caption_scores",
    "circular_accuracy",
    "compute_metrics",
    "covariate_shift_sensitivity",
    "covariate_shift_sensitivity_from_scores",
    "entropy",
    "group_by",
    "headline_metrics",
    "instability",
    "kie_correct_strict",
    "metric_digits",
    "normalize_vqa_answer",
    "ocr_correct_words",
    "percentile_interval",
    "question_type_sensitivity",
    "question_type_sensitivity_from_scores",
    "ratio",
    "ratio_intervals",
    "reform_kie_correct",
    "reform_ocr_correct",
    "resample_weights",
    "row_metric",
    "run_metric",
    "run_metrics",
    "scenario_deltas",
    "scores_by",
    "summarize",
]

# HEMM's metrics: text generation, image outputs, benchmark agreement, human battles. torch,
# transformers, bert-score and scipy load inside these functions, so importing stays light.
from lmmprobe.metrics.elo import (
    Battle,
    BattleFileError,
    elo_ratings,
    elo_sequence,
    load_battles,
    win_rates,
)
from lmmprobe.metrics.generation import (
    BertScores,
    bart_identity_scores,
    bart_score,
    bert_score,
)
from lmmprobe.metrics.image import (
    RefClipScores,
    clip_image_similarity,
    mse,
    ref_clip_score,
)
from lmmprobe.metrics.ranking import mmd_rbf, rank_correlation

__all__ += [
    "Battle",
    "BattleFileError",
    "BertScores",
    "RefClipScores",
    "bart_identity_scores",
    "bart_score",
    "bert_score",
    "clip_image_similarity",
    "elo_ratings",
    "elo_sequence",
    "load_battles",
    "mmd_rbf",
    "mse",
    "rank_correlation",
    "ref_clip_score",
    "win_rates",
]
