"""Answer rates (`lmmprobe.metrics.choice.summarize`, from `MetricContext.summary`): accuracy, balanced accuracy and the rest.

The seven come from one cluster-bootstrap pass over the rows, shared through the context, so their
intervals are drawn from the same resamples.

Where a judge read answers lmmprobe's rules could not (``run --judge``, or a file's recorded
verdicts), its verdicts decide those answers in the rates (a judged headline, named as such in the
results: `lmmprobe.report.model.JudgedHeadline`); beside it, ``METRIC_rules_only`` (`RULES_ONLY`)
gives the rate as the rules alone read the answers, shown only where a judge decided some answer
(elsewhere the two are equal).
"""

from __future__ import annotations

from collections.abc import Callable

from lmmprobe.metrics.choice import METRIC_NAMES
from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue

FAMILY = "answers"
JUDGES_FAMILY = "judges"
"""The family of ``judge_score`` and ``judge_coverage`` (`lmmprobe.metrics.builtin.judges`),
where the rules-only companions sit."""

# Column label, position within the family and summary of each of `summarize`'s metrics (`METRIC_NAMES`,
# whose order is also their order in results.json); a name missing here fails at import.
_COLUMNS: dict[str, tuple[str, int, str]] = {
    "accuracy": ("accuracy", 0, "Correct answers / answered rows; unparsed answers count as wrong, unless a judge read one (its verdict then decides: accuracy_rules_only gives the rules' reading)."),
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


RULES_ONLY: tuple[str, ...] = ("accuracy", "balanced_accuracy")
"""The answer rates a judge's verdict changes (those that count right answers), each with a
``NAME_rules_only`` companion. The others count what the rules read (unparsed, format hits,
truncated outputs, errors) or offered (abstentions), whatever a judge made of it."""


def _rules_rates(ctx: MetricContext) -> dict[str, MetricValue] | None:
    # The rules-only sums exist only where a judge's verdict decided some answer of these rows.
    rules = ctx.summary.rules
    if rules is None:
        return None
    return ctx.shared(
        "answer_rates_rules_only", lambda: rules.summarize(n_boot=ctx.n_boot, seed=ctx.seed)
    )


def _rules_rate(name: str) -> Callable[[MetricContext], MetricValue | None]:
    def compute(ctx: MetricContext) -> MetricValue | None:
        rates = _rules_rates(ctx)
        return None if rates is None else rates[name]

    compute.__doc__ = f"The {name} of `summarize` with the rules' reading alone."
    return compute


for _name in RULES_ONLY:
    _label, _order, _ = _COLUMNS[_name]
    run_metric(
        f"{_name}_rules_only",
        summary=f"{_name} as lmmprobe's rules alone read the answers (shown where a judge read "
        "some answer the rules could not; the headline counts the judge's verdict there).",
        label=f"{_label} (rules only)",
        # Beside judge_score and judge_coverage: the figures that say what a judge did.
        order=2 + RULES_ONLY.index(_name),
        family=JUDGES_FAMILY,
        headline=False,
    )(_rules_rate(_name))
