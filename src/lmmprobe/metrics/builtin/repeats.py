"""Prompt-stability metrics over repeats: ReForm-Eval's instability and CircularEval accuracy."""

from __future__ import annotations

from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.stability import circular_accuracy, instability
from lmmprobe.metrics.value import MetricValue

FAMILY = "repeats"


@run_metric(
    "instability",
    summary="Mean per-sample entropy (nats) of predicted options across repeats (ReForm-Eval).",
    family=FAMILY,
    order=0,
)
def instability_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined when some sample was asked more than once."""
    if not ctx.summary.has_repeats:
        return None
    return instability(ctx.scores, n_boot=ctx.n_boot, seed=ctx.seed)


@run_metric(
    "circular_accuracy",
    summary="Share of samples right under every rotation of the options (CircularEval).",
    label="circular",
    family=FAMILY,
    order=1,
)
def circular_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined when the run asked for CircularEval (``--circular``)."""
    if not ctx.spec.formulate.circular:
        return None
    return circular_accuracy(ctx.scores, n_boot=ctx.n_boot, seed=ctx.seed)
