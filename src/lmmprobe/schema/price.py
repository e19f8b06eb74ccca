"""What a model's tokens cost: dollars per million prompt and completion tokens."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field, field_validator

PER_TOKENS = 1_000_000
"""Prices are quoted per this many tokens, as API price lists quote them."""

MAX_PRICE = 1_000_000_000.0
"""The highest price taken, in dollars per million tokens (a thousand dollars a token): the
dearest API asks hundreds; tests and budget drills price far above any API to make a budget
run out at once, but a price above this is a typo, and would print dollar amounts hundreds of
digits long (``price=1e300:1e300``)."""


class Price(BaseModel):
    """A model's price: dollars per million prompt (input) and completion (output) tokens.

    Completion tokens include the tokens spent thinking, which APIs bill as output.
    """

    # Strict: a price is a number; "1" or true in a price table is a mistake to name, not a
    # value to guess.
    input: float = Field(
        ge=0, le=MAX_PRICE, strict=True, description="Dollars per million prompt tokens."
    )
    output: float = Field(
        ge=0, le=MAX_PRICE, strict=True, description="Dollars per million completion tokens."
    )

    # Before the bounds: NaN fails every comparison, so the bound's "should be less than or
    # equal to 1000000000" was given for it, which says nothing of what is wrong.
    @field_validator("input", "output", mode="before")
    @classmethod
    def _finite(cls, value: object) -> object:
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("is not a number")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number of dollars")
        return value

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        """Dollars for one response's tokens (a count the backend did not report counts 0)."""
        return ((prompt_tokens or 0) * self.input + (completion_tokens or 0) * self.output) / (
            PER_TOKENS
        )
