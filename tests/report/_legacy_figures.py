"""The figures of a plain run as lmmprobe computed them before rows were reduced in chunks.

Kept verbatim from the Score-list code (issue 35's starting point) so the parity tests compare
today's chunked reductions with the old computation, not with themselves: the answer rates'
table built from a list of Scores in one go, and the token metrics read off the Scores. The
bootstrap, the profiles and the statistics are today's (unchanged by the rework).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from lmmprobe.metrics.bootstrap import (
    bootstrap_distribution,
    finite_or_none,
    percentile_interval,
    profile_bootstrap_distribution,
)
from lmmprobe.metrics.choice import (
    _COLUMNS,
    METRIC_NAMES,
    _class_cells,
    _is_not_none,
    _make_table,
    _point_values,
    _profiles,
    _statistics,
    _Table,
)
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Price, Score


def _is_choice(gold: object) -> bool:
    return isinstance(gold, int) and not isinstance(gold, bool)


def build_table(scores: Sequence[Score]) -> _Table:
    """The old `_build_table`, verbatim."""

    def field(name: str) -> list[Any]:
        return list(map(operator.attrgetter(name), scores))

    ids = field("sample_id")
    sample_index = {sid: i for i, sid in enumerate(sorted(dict.fromkeys(ids)))}
    n_samples = len(sample_index)
    row_sample = np.fromiter(map(sample_index.__getitem__, ids), dtype=np.intp, count=len(ids))
    stage = np.array(field("stage"))
    error = _is_not_none(field("error_type")) | (stage == "error")
    answered = ~error
    verdict = field("correct")
    judged = answered & _is_not_none(verdict)
    offered = answered & np.array(field("abstain_offered"), dtype=bool)
    choice = list(map(_is_choice, field("gold")))
    columns = {
        "answered": answered,
        "correct": answered & np.array(verdict, dtype=object).astype(bool),
        "offered": offered,
        "abstained": offered & np.array(field("abstained"), dtype=bool),
        "format_hit": answered & np.array(field("format_hit"), dtype=bool),
        "unparsed": judged & (stage == "unparsed"),
        "truncated": judged & (stage == "truncated"),
        "error": error,
        "row": np.ones(len(ids), dtype=bool),
        "judged": judged,
        "choice": answered & np.array(choice, dtype=bool),
    }
    totals = np.stack(
        [np.bincount(row_sample, weights=columns[c], minlength=n_samples) for c in _COLUMNS],
        axis=1,
    )
    index: dict[str, int] = {}
    row_class = np.array(
        [
            index.setdefault(t, len(index)) if c else -1
            for t, c in zip(field("gold_text"), choice, strict=True)
        ],
        dtype=np.int64,
    )
    row_class[error] = -1
    texts = list(index)
    class_rank = np.empty(len(texts), dtype=np.intp)
    class_rank[sorted(range(len(texts)), key=texts.__getitem__)] = np.arange(len(texts))
    cells = _class_cells(row_class, row_sample, columns["correct"], n_samples)
    return _make_table(
        totals.astype(np.float32), cells, int((row_class >= 0).sum()), class_rank, n_samples
    )


def summarize(scores: Sequence[Score], *, n_boot: int, seed: int) -> dict[str, MetricValue]:
    """The old `summarize`, verbatim but for the table it builds (`build_table`)."""
    if not scores:
        return {name: MetricValue(None, None, None, 0) for name in METRIC_NAMES}
    table = build_table(scores)
    values, counts = _point_values(table)
    low = high = np.full(len(METRIC_NAMES), np.nan)
    if n_boot:
        rng = np.random.default_rng(seed)
        collapsed = _profiles(table)
        if collapsed is not None:
            small, _, sizes = collapsed
            dist = profile_bootstrap_distribution(
                lambda w: _statistics(small, w), sizes, n_boot, rng
            )
        else:
            dist = bootstrap_distribution(
                lambda w: _statistics(table, w), table.n_samples, n_boot, rng
            )
        low, high = percentile_interval(dist)
    out: dict[str, MetricValue] = {}
    for j, name in enumerate(METRIC_NAMES):
        value = finite_or_none(values[j])
        defined = value is not None
        out[name] = MetricValue(
            value,
            finite_or_none(low[j]) if defined else None,
            finite_or_none(high[j]) if defined else None,
            counts[j],
        )
    return out


def token_metrics(scores: Sequence[Score], price: Price | None) -> dict[str, MetricValue]:
    """The old token family, read off the Scores."""
    out: dict[str, MetricValue] = {}
    answered = [s for s in scores if s.error_type is None]
    correct = sum(1 for s in scores if s.correct)
    for name, field in (("output_tokens", "completion_tokens"), ("reasoning_tokens", "reasoning_tokens")):  # fmt: skip
        counts = [c for s in answered if (c := getattr(s, field)) is not None]
        if counts:
            out[name] = MetricValue(sum(counts) / len(counts), None, None, len(counts))
    if not answered or any(s.completion_tokens is None for s in answered):
        return out
    total = sum(s.completion_tokens or 0 for s in answered)
    out["tokens_per_correct"] = MetricValue(
        total / correct if correct else None, None, None, correct
    )
    if price is None or len({s.model for s in scores}) != 1:
        return out
    by_key: dict[str, Score] = {}
    for s in scores:
        if s.prompt_tokens is not None or s.completion_tokens is not None:
            by_key.setdefault(s.key, s)
    dollars = sum(price.cost(s.prompt_tokens, s.completion_tokens) for s in by_key.values())
    out["cost"] = MetricValue(dollars, None, None, len(by_key))
    out["cost_per_correct"] = MetricValue(
        dollars / correct if correct else None, None, None, correct
    )
    return out
