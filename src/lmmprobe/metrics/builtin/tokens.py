"""Tokens and cost: what a model generated to give its answers, and what that cost.

Every row carries its response's usage (`Score.completion_tokens`, `Score.reasoning_tokens`,
`Score.prompt_tokens`, as the backend reported it). Means are over answered rows (errors are
not answers); a response that several rows share (identical requests) counts once per row,
except in `cost`, which counts the money paid: once per response. A metric is left out when no
row has what it needs (a backend that reports no usage, a model without a price); the totals
(`tokens_per_correct`, `cost`) also when some answered row lacks its counts, since a total over
part of the rows would be too low.

Prices are dollars per million prompt / completion tokens (`RunSpec.prices`, from a model's
``price=IN:OUT`` option or a ``--prices`` table); completion tokens include thinking.
"""

from __future__ import annotations

from lmmprobe.metrics.run_metric import MetricContext, run_metric
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Price

FAMILY = "tokens"


def _value(value: float | None, n: int) -> MetricValue:
    return MetricValue(value, None, None, n)


def _correct(ctx: MetricContext) -> int:
    return ctx.summary.correct


def _total_completion(ctx: MetricContext) -> int | None:
    """Completion tokens of every answered row; None when some answered row lacks them."""
    summary = ctx.summary
    if not summary.answered or summary.completion_missing:
        return None
    return summary.completion[0]


def _price(ctx: MetricContext) -> Price | None:
    models = ctx.summary.models
    if len(models) != 1:
        return None
    return ctx.spec.prices.get(next(iter(models)))


def _mean_reported(counts: list[int]) -> MetricValue | None:
    """The mean of a usage count over the answered rows that report it; n is those rows."""
    total, n = counts
    return _value(total / n, n) if n else None


@run_metric(
    "output_tokens",
    summary="Mean completion tokens (thinking included) per answered row, as the backend reports them.",
    label="out tokens",
    family=FAMILY,
    digits=1,
    order=0,
)
def output_tokens(ctx: MetricContext) -> MetricValue | None:
    """Defined when some answered row reports its completion tokens."""
    return _mean_reported(ctx.summary.completion)


@run_metric(
    "reasoning_tokens",
    summary="Mean thinking tokens per answered row, over the rows whose backend reports them.",
    label="think tokens",
    family=FAMILY,
    digits=1,
    order=1,
)
def reasoning_tokens(ctx: MetricContext) -> MetricValue | None:
    """Defined when some answered row reports its reasoning tokens."""
    return _mean_reported(ctx.summary.reasoning)


@run_metric(
    "tokens_per_correct",
    summary="Completion tokens of all answered rows / correct answers (undefined with none correct).",
    label="tokens/correct",
    family=FAMILY,
    digits=1,
    order=2,
)
def tokens_per_correct(ctx: MetricContext) -> MetricValue | None:
    """Defined when every answered row reports its completion tokens."""
    total = _total_completion(ctx)
    if total is None:
        return None
    correct = _correct(ctx)
    return _value(total / correct if correct else None, correct)


def _cost(ctx: MetricContext) -> tuple[float, int] | None:
    """(dollars, responses counted): every response of the rows once, errors included."""
    price = _price(ctx)
    if price is None or _total_completion(ctx) is None:
        return None
    # Each response's tokens, first row first (the summary tracks them when any model of the
    # run has a price: `MetricContext.summary`).
    by_key = ctx.summary.responses
    assert by_key is not None
    dollars = sum(price.cost(pt, ct) for pt, ct in by_key.values())
    return dollars, len(by_key)


@run_metric(
    "cost",
    summary="Dollars the model's responses cost at its price (prompt and completion tokens; each response once).",
    # Every answer of the run at its price, those read from the store included: not what this
    # invocation spent (the CLI prints that beside it, as ``--max-cost`` counts it).
    label="answers' cost $",
    family=FAMILY,
    digits=4,
    order=3,
)
def cost(ctx: MetricContext) -> MetricValue | None:
    """Defined for a priced model whose answered rows all report their tokens."""
    spent = ctx.shared("tokens_cost", lambda: _cost(ctx))
    return None if spent is None else _value(spent[0], spent[1])


@run_metric(
    "cost_per_correct",
    summary="Cost / correct answers, in dollars (undefined with none correct).",
    label="$/correct",
    family=FAMILY,
    digits=5,
    order=4,
)
def cost_per_correct(ctx: MetricContext) -> MetricValue | None:
    """Defined where `cost` is."""
    spent = ctx.shared("tokens_cost", lambda: _cost(ctx))
    if spent is None:
        return None
    correct = _correct(ctx)
    return _value(spent[0] / correct if correct else None, correct)
