"""The token and cost run metrics on rows whose usage is known (issue 25, item 5)."""

from __future__ import annotations

import gc
import random

import numpy as np
import pytest

from lmmprobe.metrics import compute_metrics
from lmmprobe.metrics.reduction import ResponseTokens
from lmmprobe.schema import Price, RunSpec, Score
from lmmprobe.schema.rows import chunk_of_scores

MODEL = "openai:thinker"


def _row(
    i: int,
    *,
    correct: bool | None = True,
    completion: int | None = 100,
    reasoning: int | None = None,
    prompt: int | None = 10,
    error: str | None = None,
    key: str | None = None,
) -> Score:
    return Score(
        model=MODEL,
        sample_id=f"s{i}",
        repeat=0,
        key=key or f"k{i}",
        stage="error" if error else "mark",
        correct=None if error else correct,
        gold=0,
        gold_text="a",
        error_type=error,
        prompt_tokens=prompt,
        completion_tokens=completion,
        reasoning_tokens=reasoning,
    )


def _spec(price: Price | None = None) -> RunSpec:
    return RunSpec(models=[MODEL], prices={MODEL: price} if price else {}, bootstrap=0)


def test_reasoning_tokens_average_the_rows_that_report_them() -> None:
    rows = [
        _row(0, completion=300, reasoning=250),
        _row(1, completion=100, reasoning=50, correct=False),
        _row(2, completion=40, reasoning=None),  # a backend that does not split the count
        _row(3, completion=None, prompt=None, error="timeout"),  # errors are not answers
    ]
    m = compute_metrics(rows, _spec())
    assert m["output_tokens"].value == pytest.approx(440 / 3) and m["output_tokens"].n == 3
    assert m["reasoning_tokens"].value == 150 and m["reasoning_tokens"].n == 2
    assert m["tokens_per_correct"].value == pytest.approx(440 / 2)
    assert "cost" not in m and "cost_per_correct" not in m  # no price


def test_cost_counts_each_response_once_and_errors_billed() -> None:
    price = Price(input=1.0, output=2.0)
    rows = [
        _row(0, completion=1000, prompt=500),
        _row(1, completion=1000, prompt=500, key="k0"),  # the same request: paid once
        _row(2, completion=3000, prompt=500, correct=False),
        _row(3, completion=7, prompt=9, error="refusal"),  # a refusal the API billed
    ]
    m = compute_metrics(rows, _spec(price))
    dollars = (500 + 2 * 1000 + 500 + 2 * 3000 + 9 + 2 * 7) / 1e6
    assert m["cost"].value == pytest.approx(dollars) and m["cost"].n == 3
    assert m["cost_per_correct"].value == pytest.approx(dollars / 2)


def test_totals_are_left_out_when_an_answer_lacks_its_count() -> None:
    rows = [_row(0, completion=10), _row(1, completion=None, prompt=None)]
    m = compute_metrics(rows, _spec(Price(input=1, output=1)))
    assert m["output_tokens"].value == 10 and m["output_tokens"].n == 1
    assert "tokens_per_correct" not in m and "cost" not in m  # a part total would be too low


def test_nothing_correct_leaves_per_correct_undefined() -> None:
    m = compute_metrics([_row(0, correct=False)], _spec(Price(input=1, output=1)))
    assert m["tokens_per_correct"].value is None and m["cost_per_correct"].value is None


def test_rows_without_usage_have_no_token_metrics() -> None:
    m = compute_metrics([_row(0, completion=None, prompt=None)], _spec())
    assert not {"output_tokens", "reasoning_tokens", "tokens_per_correct"} & set(m)


def test_a_priced_models_cost_is_the_dict_of_its_responses_sum_holding_32_bytes_a_response() -> (
    None
):
    """The distinct responses a priced model's cost sums are kept in 32 bytes each (a 16-byte
    digest and two counts), not a dict entry of every key (about 240 bytes, with a tuple and
    the key's text): the dollars are the old dict's sum, bit for bit, in its order, chunks
    and all (a key met again in a later chunk; keys that are not lmmprobe's hex; a key in
    capitals, another key than its lower-case text)."""
    rng = random.Random(3)
    hexes = [f"{rng.getrandbits(128):032x}" for _ in range(3000)]
    pool = [*hexes, *(k.upper() for k in hexes[:50]), *(f"imported-{i}" for i in range(200))]
    rows = []
    for i in range(6000):
        key = rng.choice(pool)
        if rng.random() < 0.05:  # a failed request without usage: no response to pay
            rows.append(_row(i, key=key, prompt=None, completion=None, error="timeout"))
            continue
        prompt = None if rng.random() < 0.05 else rng.randrange(1, 5000)
        rows.append(_row(i, key=key, prompt=prompt, completion=rng.randrange(0, 900)))
    old: dict[str, tuple[int | None, int | None]] = {}
    for s in rows:
        if s.prompt_tokens is not None or s.completion_tokens is not None:
            old.setdefault(s.key, (s.prompt_tokens, s.completion_tokens))
    kept = ResponseTokens()
    for start in range(0, len(rows), 777):
        chunk = chunk_of_scores(rows[start : start + 777])
        kept.add(chunk.key, chunk.prompt_tokens, chunk.completion_tokens)
    assert list(kept.values()) == list(old.values()) and len(kept) == len(old)
    price = Price(input=1.25, output=10.0)
    by_dict = sum(price.cost(pt, ct) for pt, ct in old.values())
    assert compute_metrics(rows, _spec(price))["cost"].value == by_dict  # exactly
    held = sum(a.nbytes for a in gc.get_referents(kept.__dict__) if isinstance(a, np.ndarray))
    assert held <= 2 * 32 * len(old)  # room grown by doubling
