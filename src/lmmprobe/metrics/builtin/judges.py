"""Judged figures: the score judges (and a protocol's rules) gave, and how much they covered.

Both apply only to the rows a judge protocol applies to (rows carrying `Score.judgements`:
``lmmprobe run --judge``) and are left out otherwise. `judge_score` is the mean judged figure
(`lmmprobe.metrics.judged.judged_value`: accuracy for verdicts, the mean grade for a scale)
over the answers that have one; `judge_coverage` is the share of those rows that have one
(judged / total): an answer whose judges all failed or replied unreadably is counted apart,
never guessed. The two are shown side by side.
"""

from __future__ import annotations

from lmmprobe.metrics.builtin._official import mean_of
from lmmprobe.metrics.judged import judged_value
from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

FAMILY = "judges"
JUDGED = "judged_values"


def _judged(summary: RowSummary, spec: RunSpec) -> bool:
    return summary.judged


@row_extract(JUDGED, _judged)
def _judged_value(s: Score, spec: RunSpec) -> tuple[str, float | None] | None:
    """(sample id, judged figure or None) of a row carrying verdicts (`judged_rows`'s)."""
    return (s.sample_id, judged_value(s.judgements)) if s.judgements else None


@run_metric(
    "judge_score",
    summary="Mean judged figure (majority verdict or mean grade) over judged answers",
    label="judge score",
    family=FAMILY,
    order=0,
)
def judge_score(ctx: MetricContext) -> MetricValue | None:
    """Mean of each judged answer's figure, with a cluster-bootstrap interval."""
    rows = ctx.records(JUDGED) if ctx.summary.judged else []
    if not rows:
        return None
    return mean_of(ctx, [(sample_id, v) for sample_id, v in rows if v is not None])


@run_metric(
    "judge_coverage",
    summary="Share of the answers a judge protocol applies to that got a judged figure",
    label="coverage",
    family=FAMILY,
    order=1,
)
def judge_coverage(ctx: MetricContext) -> MetricValue | None:
    """Judged / total over the rows a judge protocol applies to."""
    rows = ctx.records(JUDGED) if ctx.summary.judged else []
    if not rows:
        return None
    return mean_of(ctx, [(sample_id, 0.0 if v is None else 1.0) for sample_id, v in rows])
