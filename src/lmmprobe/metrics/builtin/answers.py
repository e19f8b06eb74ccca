"""Answer rates (`lmmprobe.metrics.choice.summarize`): accuracy, balanced accuracy and the rest.

The six come from one cluster-bootstrap pass over the rows, shared through the context, so their
intervals are drawn from the same resamples.
"""

from __future__ import annotations

from collections.abc import Callable

from lmmprobe.metrics.choice import MetricValue, summarize
from lmmprobe.metrics.run_metric import MetricContext, run_metric

# name, column label, column position, summary: the table is the data, registered below.
ANSWER_RATES: tuple[tuple[str, str, int, str], ...] = (
    ("accuracy", "accuracy", 10, "Correct answers / answered rows; unparsed answers count as wrong."),
    ("balanced_accuracy", "balanced", 20, "Mean per-class accuracy over gold option texts (choice samples)."),
    ("abstention_rate", "abstain", 30, "Abstentions / rows offered an 'unknown' option."),
    ("format_hit_rate", "format hit", 40, "Choice answers mapped to an option by mark or text."),
    ("unparsed_rate", "unparsed", 50, "Answers that could not be mapped / judged rows."),
    ("error_rate", "errors", 60, "Failed requests / all rows (errors are never answers)."),
)  # fmt: skip


def _rates(ctx: MetricContext) -> dict[str, MetricValue]:
    return ctx.shared(
        "answer_rates", lambda: summarize(ctx.scores, n_boot=ctx.n_boot, seed=ctx.seed)
    )


def _rate(name: str) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        return _rates(ctx)[name]

    compute.__doc__ = f"The {name} of `summarize`."
    return compute


for _name, _label, _order, _summary in ANSWER_RATES:
    run_metric(_name, summary=_summary, label=_label, order=_order)(_rate(_name))
