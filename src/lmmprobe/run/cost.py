"""What a run spends on model calls, against its ``--max-cost``.

The meter counts the dollars of the responses this invocation received (priced by
`RunSpec.prices`), not those read from the store: they were paid for before. Every response
that comes back is stored and counted, those still in flight when the limit was crossed
included: they are paid for whether or not they are kept, so they are kept. Once the spend
reaches the limit, the runner sends nothing new: what is not sent is stored as ``budget``
errors, the run ends as ``stopped_budget``, and a re-run asks exactly those again, as when a
backend's own request budget (``max_requests``) runs out.

A reply that states its usage was billed whether or not it can be used: one found malformed or
empty, then asked again or stored as an error, is counted as an answer is. A backend that
retries by itself (`lmmprobe.models.base.MeteredModel`) tells the meter of each such reply
before it asks again (`guard`), so that a spent budget stops its retries too; the response it
returns at last carries the usage of all its attempts, and what was told before is not counted
twice.

A response that reports no token count cannot be priced exactly (a count that is no count, a
negative one included, is unknown: `lmmprobe.schema.token_count`). Its completion is counted at
its request's ``max_new_tokens``, the limit the server was sent (an upper bound). Its prompt
has no such bound (images are tokenized by the server): when the model's prompt tokens cost
something, the budget cannot be kept, so under ``--max-cost`` the meter stops the run there
(the answer is stored; the message says why), and without ``--max-cost`` it only warns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from lmmprobe.schema import ErrorInfo, Price, Request, Response, Usage

__all__ = ["CostMeter"]

log = logging.getLogger(__name__)


class CostMeter:
    """Dollars spent by this invocation's model calls, and whether ``max_cost`` is reached.

    The limit is checked after each batch is stored, so a run can spend past it by what the
    requests already sent cost (at most one batch per concurrency slot); those are stored and
    counted too.

    Args:
        max_cost: Dollars the invocation may spend; None: no limit (the meter only counts).
        prices: Price per model spec; a model without one adds nothing.

    """

    def __init__(self, max_cost: float | None, prices: Mapping[str, Price]) -> None:
        self.max_cost = max_cost
        self.prices = dict(prices)
        self.spent = 0.0
        self.unmetered: str | None = None
        """Why the spend can no longer be known (a priced answer without its prompt tokens),
        or None. Under ``max_cost`` it stops the run as the limit does."""
        self._unreported: set[str] = set()
        self._charged: dict[str, float] = {}
        """Dollars told by a backend (`guard`) for a request still in flight, by its key."""

    @property
    def exhausted(self) -> bool:
        """Whether the run must send nothing more: the spend reached `max_cost`, or cannot be known."""
        if self.max_cost is None:
            return False
        return self.spent >= self.max_cost or self.unmetered is not None

    def add(
        self,
        model_spec: str,
        responses: Sequence[Response],
        requests: Sequence[Request] | None = None,
    ) -> None:
        """Count the cost of responses `model_spec` just returned (usage times its price).

        Args:
            model_spec: The model that answered (its price is looked up by it).
            responses: The responses, errors included (an error that reports usage was paid
                for: a refusal).
            requests: The requests, in the same order: an answer without its completion
                tokens counts its request's ``max_new_tokens``.

        """
        price = self.prices.get(model_spec)
        if price is None:
            return
        for i, resp in enumerate(responses):
            usage = resp.usage
            prompt = usage.prompt_tokens if usage is not None else None
            completion = usage.completion_tokens if usage is not None else None
            unreported = resp.error is None and (prompt is None or completion is None)
            if resp.error is None and completion is None and requests is not None:
                completion = requests[i].gen.max_new_tokens  # the server's limit: a bound
            # What a backend told of the request's earlier attempts (`guard`) is in its usage.
            self.spent += price.cost(prompt, completion) - self._charged.pop(resp.key, 0.0)
            if unreported:
                self._unreported_usage(model_spec, price, unbounded=prompt is None)

    def guard(self, model_spec: str) -> Callable[[str, Usage | None], ErrorInfo | None]:
        """What a backend calls with each paid reply it would ask again (a `SpendGuard`).

        The reply's usage is counted at once (and again left out when its response comes
        back through `add`, which counts every attempt's); the answer is None while the backend
        may ask (again), and the ``budget`` error to return once the money is spent.
        """

        def paid(key: str, usage: Usage | None) -> ErrorInfo | None:
            price = self.prices.get(model_spec)
            if price is not None and usage is not None:
                cost = price.cost(usage.prompt_tokens, usage.completion_tokens)
                self.spent += cost
                self._charged[key] = self._charged.get(key, 0.0) + cost
            return self.budget_error() if self.exhausted else None

        return paid

    def _unreported_usage(self, model_spec: str, price: Price, *, unbounded: bool) -> None:
        """An answer came without its token counts (`unbounded`: its prompt tokens too)."""
        stops = unbounded and price.input > 0
        if stops and self.unmetered is None:
            self.unmetered = (
                f"{model_spec} answered without reporting its prompt tokens (none, or a count "
                "that is no count), so what it costs cannot be known"
            )
        if model_spec in self._unreported:
            return
        # Said once per model, not per row.
        self._unreported.add(model_spec)
        if self.max_cost is None:
            log.warning(
                "%s reports no token usage: the spend counted for it is not exact", model_spec
            )
        elif stops:
            log.warning(
                "%s reports no token usage, so --max-cost cannot be kept: nothing more is sent "
                "(the answers received are stored); re-run without --max-cost (or with "
                "--max-cost none), or with the backend's own max_requests=N",
                model_spec,
            )
        else:
            log.warning(
                "%s reports no completion tokens: each such answer is counted against --max-cost "
                "at its max_new_tokens, the most it may have cost",
                model_spec,
            )

    def budget_error(self) -> ErrorInfo:
        """The stored error of a request left unsent because the money ran out."""
        if self.unmetered is not None and (self.max_cost is None or self.spent < self.max_cost):
            message = (
                f"cost budget of ${self.max_cost:g} cannot be kept: {self.unmetered} "
                f"(${self.spent:.4f} counted by this run); re-run without --max-cost (or with "
                "--max-cost none) to continue"
            )
        else:
            message = (
                f"cost budget of ${self.max_cost:g} reached (${self.spent:.4f} spent by this "
                "run); re-run to continue"
            )
        return ErrorInfo(type="budget", message=message, retryable=True)
