"""Answer rates (`lmmprobe.metrics.choice.summarize`, from `MetricContext.summary`): accuracy, balanced accuracy and the rest.

The seven come from one cluster-bootstrap pass over the rows, shared through the context, so their
intervals are drawn from the same resamples.
"""

from __future__ import annotations

from collections.abc import Callable

from lmmprobe.metrics.choice import METRIC_NAMES
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue

FAMILY = "answers"

# Column label, position within the family and summary of each of `summarize`'s metrics (`METRIC_NAMES`,
# whose order is also their order in results.json); a name missing here fails at import.
_COLUMNS: dict[str, tuple[str, int, str]] = {
    "accuracy": ("accuracy", 0, "Correct answers / answered rows; unparsed answers count as wrong."),
    "balanced_accuracy": ("balanced", 1, "Mean per-class accuracy over gold option texts (choice samples)."),
    "abstention_rate": ("abstain", 6, "Abstentions / rows offered an 'unknown' option."),
    "format_hit_rate": ("format hit", 2, "Choice answers mapped to an option by mark or text."),
    "unparsed_rate": ("unparsed", 3, "Answers that could not be mapped / judged rows."),
    "truncated_rate": ("truncated", 4, "Outputs cut off before their answer (in their thinking or at the token limit; never read, counted wrong) / judged rows."),
    "error_rate": ("errors", 5, "Failed requests / all rows (errors are never answers)."),
}  # fmt: skip
ANSWER_RATES: tuple[tuple[str, str, int, str], ...] = tuple(
    (name, *_COLUMNS[name]) for name in METRIC_NAMES
)
"""(name, column label, position in the family, summary) of each answer rate, registered below."""


def _rates(ctx: MetricContext) -> dict[str, MetricValue]:
    # The per-sample sums come from the context's one pass over the rows (no Score is built).
    return ctx.shared(
        "answer_rates", lambda: ctx.summary.answers.summarize(n_boot=ctx.n_boot, seed=ctx.seed)
    )


def _rate(name: str) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        return _rates(ctx)[name]

    compute.__doc__ = f"The {name} of `summarize`."
    return compute


for _name, _label, _order, _summary in ANSWER_RATES:
    run_metric(_name, summary=_summary, label=_label, order=_order, family=FAMILY)(_rate(_name))
