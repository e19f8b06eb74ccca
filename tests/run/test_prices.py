"""Model prices: the price= option, table lookups by name, and the price kept off the identity."""

from __future__ import annotations

import pytest

from lmmprobe.models.base import load_model
from lmmprobe.run.prices import model_price, parse_price, resolve_prices
from lmmprobe.schema import Price

TABLE = {
    "gpt-4o": Price(input=2.5, output=10),
    "openai:local@http://h:8000/v1": Price(input=0, output=0),
    "random": Price(input=1, output=1),
}


@pytest.mark.parametrize(
    ("spec", "price"),
    [
        ("openai:gpt-4o", TABLE["gpt-4o"]),  # by target
        ("openai:gpt-4o@https://api.example/v1,timeout=5", TABLE["gpt-4o"]),  # by model name
        ("openai:local@http://h:8000/v1,max_concurrency=2", TABLE["openai:local@http://h:8000/v1"]),
        ("random,seed=3", TABLE["random"]),  # by the spec without its options
        ("random,price=3:4", Price(input=3, output=4)),  # the option wins over the table
        ("first", None),
    ],
)
def test_a_model_finds_its_price(spec: str, price: Price | None) -> None:
    assert model_price(spec, TABLE) == price


def test_resolve_prices_keeps_only_priced_models() -> None:
    assert resolve_prices(["random", "first"], TABLE) == {"random": TABLE["random"]}


@pytest.mark.parametrize("text", ["", "1", "a:b", "1:2:3", "-1:1", "1:nan", "inf:1"])
def test_bad_prices_are_refused_naming_the_spec(text: str) -> None:
    with pytest.raises(ValueError, match=r"model spec 'm': price=.* expected IN:OUT"):
        parse_price(text, "m")


def test_the_price_is_no_part_of_the_model_or_its_keys() -> None:
    plain, priced = load_model("random,seed=3"), load_model("random,seed=3,price=1:2")
    # Cache keys hash the identity's cache id (run.keys): equal ids, equal keys.
    assert plain.identity.cache_id() == priced.identity.cache_id()
