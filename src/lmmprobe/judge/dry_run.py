"""The judge calls a ``lmmprobe run --dry-run --judge SPEC`` would make, counted without asking.

A judge call quotes the model's answer, which a dry run does not have; so what is counted is
a bound: every (sample, repeat) a protocol may apply to, times the protocol's own repeats
(MM-Vet grades five times), per judge and per model. Rules-first (``--judge-when miss``, the
default where a protocol allows it) sends only the answers the rules cannot read, and stored
judge replies are not sent again: the run sends at most this many, often far fewer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lmmprobe.data import load_source
from lmmprobe.judge.step import check_config, resolve_protocols
from lmmprobe.run.runner import priced
from lmmprobe.schema import Price, RunSpec
from lmmprobe.schema.price import PER_TOKENS

__all__ = ["PlannedJudge", "plan_judges"]


@dataclass(frozen=True)
class PlannedJudge:
    """What one judge would be asked about one model's answers, at most.

    Attributes:
        judge: The judge's spec.
        model: The spec of the model whose answers it judges.
        calls: Judge calls at most (every answer a protocol may apply to, times its repeats).
        rules_first: Some of those answers are read by rules first, so the judge sees only
            those the rules cannot read.
        price: The judge's price, when it has one.
        completion_tokens: The completion limit summed over `calls` (each protocol's own
            ``max_new_tokens``).

    """

    judge: str
    model: str
    calls: int
    rules_first: bool
    price: Price | None
    completion_tokens: int

    @property
    def completion_cost_bound(self) -> float | None:
        """Dollars the judge's completions cost at most; None without a price."""
        if self.price is None:
            return None
        return self.completion_tokens * self.price.output / PER_TOKENS


def plan_judges(spec: RunSpec) -> list[PlannedJudge]:
    """Bound the judge calls of `spec`, per judge and model, with the judges' prices.

    Returns an empty list when the spec has no judge.

    Raises:
        RegistryError: A protocol is unknown.
        TemplateError: The ``--judge-prompt`` template is unusable.
        ValueError: ``--judge-when`` is a mode a protocol does not allow, or a ``price=``
            option is invalid, or ``max_cost`` is set and a judge has no price.
        DataError: The data cannot be read.

    """
    config = spec.judge
    if config is None:
        return []
    spec = priced(spec)
    check_config(config, spec.data)
    samples = load_source(spec.data, strict=spec.strict, limit=spec.limit).samples
    protocols = resolve_protocols(config, samples)
    calls = completion = 0
    rules_first = False
    for sample in samples:
        protocol = protocols[sample.id]
        when = config.when if config.when in protocol.when else protocol.when[0]
        rules_first = rules_first or when == "miss"
        calls += spec.repeats * protocol.repeats
        completion += spec.repeats * protocol.repeats * protocol.gen.max_new_tokens
    return [
        PlannedJudge(
            judge=judge,
            model=model,
            calls=calls,
            rules_first=rules_first,
            price=spec.prices.get(judge),
            completion_tokens=completion,
        )
        for model in spec.models
        for judge in dict.fromkeys(config.judges)
    ]
