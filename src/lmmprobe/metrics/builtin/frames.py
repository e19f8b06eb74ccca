"""Frame-policy sensitivity: how much of a video score is the frames the model was shown.

A run with several frame policies (``--frames 8,16,32``) asks every sample under each policy
(`lmmprobe.run.runner.plan_requests`), each row carrying its policy as ``frame_policy``
metadata, which the run breaks its figures down by: accuracy per policy with its interval is
the curve. `frame_sensitivity` is the curve's spread, a reduction of the rows as instability
is (a `RowExtract` made in the model's one pass over its Scores).
"""

from __future__ import annotations

from lmmprobe.metrics.reduction import RowSummary, row_extract
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.stability import policy_spread_of
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import RunSpec, Score

FAMILY = "repeats"
POLICY_ROWS = "frame_policy_rows"


def _swept(summary: RowSummary, spec: RunSpec) -> bool:
    return len(spec.frame_policies()) > 1


@row_extract(POLICY_ROWS, _swept)
def _policy_row(s: Score, spec: RunSpec) -> tuple[str, str, bool | None]:
    """(sample id, its policy, whether right), None for a failed request's (no answer)."""
    failed = s.error_type is not None or s.stage == "error"
    return s.sample_id, str(s.metadata.get("frame_policy")), None if failed else s.correct is True


@run_metric(
    "frame_sensitivity",
    summary="Accuracy under the best frame policy minus under the worst (--frames A,B,...).",
    label="frame spread",
    family=FAMILY,
    order=2,
)
def frame_sensitivity_metric(ctx: MetricContext) -> MetricValue | None:
    """Defined where rows of more than one of the run's frame policies were answered."""
    if not _swept(ctx.summary, ctx.spec):
        return None
    labels = [p.label for p in ctx.spec.frame_policies()]
    rows: dict[str, dict[str, list[int]]] = {}
    for sample_id, policy, right in ctx.records(POLICY_ROWS):
        per = rows.setdefault(sample_id, {})  # every sample is a cluster, answered or not
        if right is None or policy not in labels:
            continue
        counts = per.setdefault(policy, [0, 0])
        counts[0] += right
        counts[1] += 1
    if sum(any(label in per for per in rows.values()) for label in labels) < 2:
        return None  # a group of one policy's rows (the breakdown by frame_policy): no spread
    return policy_spread_of(rows, labels, n_boot=ctx.n_boot, seed=ctx.seed)
