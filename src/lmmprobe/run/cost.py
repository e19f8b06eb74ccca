"""What a run spends on model calls, against its ``--max-cost``.

The meter counts the dollars of the responses this invocation received (priced by
`RunSpec.prices`), not those read from the store: they were paid for before. Once the spend
reaches the limit, the runner stops sending: what is not answered yet is stored as ``budget``
errors, the run ends as ``stopped_budget``, and a re-run asks exactly those again, as when a
backend's own request budget (``max_requests``) runs out.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from lmmprobe.schema import ErrorInfo, Price, Response

__all__ = ["CostMeter", "CostSpent"]

log = logging.getLogger(__name__)


class CostSpent(Exception):
    """Raised by the runner's batch handler when the meter reaches its limit: stop sending."""


class CostMeter:
    """Dollars spent by this invocation's model calls, and whether ``max_cost`` is reached.

    The limit is checked after each batch is stored, so a run can spend past it by what the
    requests already sent cost (at most one batch per concurrency slot).

    Args:
        max_cost: Dollars the invocation may spend; None: no limit (the meter only counts).
        prices: Price per model spec; a model without one adds nothing.

    """

    def __init__(self, max_cost: float | None, prices: Mapping[str, Price]) -> None:
        self.max_cost = max_cost
        self.prices = dict(prices)
        self.spent = 0.0
        self._unreported: set[str] = set()

    @property
    def exhausted(self) -> bool:
        """Whether the spend has reached `max_cost`."""
        return self.max_cost is not None and self.spent >= self.max_cost

    def add(self, model_spec: str, responses: Sequence[Response]) -> None:
        """Count the cost of responses `model_spec` just returned (usage times its price)."""
        price = self.prices.get(model_spec)
        if price is None:
            return
        for resp in responses:
            if resp.usage is None:
                if resp.error is None and model_spec not in self._unreported:
                    # The spend cannot be known for such answers; say so once, not per row.
                    self._unreported.add(model_spec)
                    log.warning(
                        "%s reports no token usage: its answers are not counted against --max-cost",
                        model_spec,
                    )
                continue
            self.spent += price.cost(resp.usage.prompt_tokens, resp.usage.completion_tokens)

    def budget_error(self) -> ErrorInfo:
        """The stored error of a request left unsent because the money ran out."""
        return ErrorInfo(
            type="budget",
            message=f"cost budget of ${self.max_cost:g} reached (${self.spent:.4f} spent by "
            "this run); re-run to continue",
            retryable=True,
        )
