"""Prompt-stability metrics over repeats: ReForm-Eval's instability and CircularEval accuracy.

Both are reductions of the rows, never holding them as Scores: CircularEval reads the columns
every chunk has (each sample's failed and right rows), instability each row's answer category
(`category_key` of its text, a `RowExtract` made in the model's one pass over its Scores).
"""

from __future__ import annotations

from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.stability import add_verdict, category_key, circular_of, instability_of
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

FAMILY = "repeats"
CATEGORIES = "instability_categories"


def _has_repeats(summary: RowSummary, spec: RunSpec) -> bool:
    return summary.has_repeats


@row_extract(CATEGORIES, _has_repeats)
def _category(s: Score, spec: RunSpec) -> tuple[str, str | bytes | None]:
    """(sample id, the answer's category), None for a failed request's (no answer)."""
    answered = s.error_type is None and s.stage != "error"
    return s.sample_id, category_key(s.prediction_text) if answered else None


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
    categories: dict[str, list[str | bytes]] = {}
    for sample_id, category in ctx.records(CATEGORIES):
        found = categories.setdefault(sample_id, [])
        if category is not None:
            found.append(category)
    return instability_of(categories, n_boot=ctx.n_boot, seed=ctx.seed)


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
    verdicts: dict[str, tuple[bool, bool]] = {}
    for chunk in ctx.rows.chunks():
        for sample_id, error, stage, correct in zip(
            chunk.sample_id, chunk.error_type, chunk.stage, chunk.correct, strict=True
        ):
            add_verdict(verdicts, sample_id, error is not None or stage == "error", correct)
    return circular_of(verdicts, n_boot=ctx.n_boot, seed=ctx.seed)
