"""The token and cost run metrics on rows whose usage is known (issue 25, item 5)."""

from __future__ import annotations

import pytest

from lmmprobe.metrics import compute_metrics
from lmmprobe.schema import Price, RunSpec, Score

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
