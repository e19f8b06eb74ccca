"""The judge calls a ``lmmprobe run --dry-run --judge SPEC`` would make, counted without asking.

A judge call quotes the model's answer. Where the store holds that answer (a re-run, a run
resumed), the dry run reads it as the judging step would: it scores it, applies the
protocol's rules (``--judge-when miss``: a rule that reads it needs no judge) and looks up the
judge's stored replies, so those answers are counted exactly. An answer not stored yet cannot
be read before it is asked: it counts every call its protocol could make (times the
protocol's repeats: MM-Vet grades five times), a bound. A served model or judge (``vllm:``)
is named by what its server serves, known only once it runs, so its store is not looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lmmprobe.data import load_source
from lmmprobe.formulate.ask import Ask
from lmmprobe.judge.protocol import JudgeItem, JudgeProtocol
from lmmprobe.judge.step import (
    _answer_of,
    _applies,
    _request,
    check_config,
    resolve_protocols,
)
from lmmprobe.models.base import AsyncModel, Model, StartableModel, load_model
from lmmprobe.run import plan_requests, score_response
from lmmprobe.run.runner import dialogue_stages, priced
from lmmprobe.schema import JudgeConfig, Price, RunSpec, Sample
from lmmprobe.schema.price import PER_TOKENS
from lmmprobe.store import Store
from lmmprobe.store.sqlite import DEFAULT_DB

__all__ = ["PlannedJudge", "plan_judges"]


@dataclass(frozen=True)
class PlannedJudge:
    """What one judge would be asked about one model's answers.

    Attributes:
        judge: The judge's spec.
        model: The spec of the model whose answers it judges.
        calls: Judge calls to send, at most: exact for the answers `read` counts, a bound
            (every call the protocol could make) for the others.
        read: Answers found in the store and read as the judging step reads them (rules
            applied, stored judge replies looked up).
        unread: Answers not in the store yet, counted at most.
        rules_first: Some unread answers go to the rules first (``--judge-when miss``), so
            the judge will see only those the rules cannot read.
        stored_replies: Judge replies already stored for the read answers (not sent again).
        price: The judge's price, when it has one.
        completion_tokens: The completion limit summed over `calls` (each protocol's own
            ``max_new_tokens``).

    """

    judge: str
    model: str
    calls: int
    read: int
    unread: int
    rules_first: bool
    stored_replies: int
    price: Price | None
    completion_tokens: int

    @property
    def exact(self) -> bool:
        """Whether `calls` is exact: every answer was read from the store."""
        return self.unread == 0

    @property
    def completion_cost_bound(self) -> float | None:
        """Dollars the judge's completions cost at most; None without a price."""
        if self.price is None:
            return None
        return self.completion_tokens * self.price.output / PER_TOKENS


def plan_judges(spec: RunSpec) -> list[PlannedJudge]:
    """Count the judge calls of `spec`, per judge and model, with the judges' prices.

    Returns an empty list when the spec has no judge.

    Raises:
        RegistryError: A protocol or a model is unknown.
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
    judges = {j: load_model(j) for j in dict.fromkeys(config.judges)}
    path = Path(spec.db) if spec.db else DEFAULT_DB
    # An absent store holds nothing: it is not created just to be looked at.
    store = Store(path, read_only=True) if path.exists() and not spec.no_cache else None
    try:
        return [
            planned
            for model_spec in spec.models
            for planned in _plan_model(
                model_spec, load_model(model_spec), samples, protocols, judges, spec, store
            )
        ]
    finally:
        if store is not None:
            store.close()


def _when(config: JudgeConfig, protocol: JudgeProtocol) -> str:
    return config.when if config.when in protocol.when else protocol.when[0]


def _plan_model(
    model_spec: str,
    model: Model | AsyncModel,
    samples: list[Sample],
    protocols: dict[str, JudgeProtocol],
    judges: dict[str, Model | AsyncModel],
    spec: RunSpec,
    store: Store | None,
) -> list[PlannedJudge]:
    config = spec.judge
    assert config is not None  # plan_judges returns early without one
    readable = (
        store is not None
        and not isinstance(model, StartableModel)
        and dialogue_stages(samples) is None  # later rounds' prompts hold earlier answers
    )
    rows = plan_requests(samples, spec, model.identity) if readable else []
    stored = store.get_responses({a.key for _, a in rows}) if store is not None and rows else {}
    # (protocol, item, attempt) of each call a read answer needs; a bound for the others.
    needed: list[tuple[JudgeProtocol, JudgeItem, int]] = []
    bound = bound_tokens = read = 0
    rules_first = False
    by_sample: dict[str, list[tuple[Sample, Ask | None]]] = {}
    for row_sample, row_ask in rows:
        by_sample.setdefault(row_sample.id, []).append((row_sample, row_ask))
    for sample in samples:
        protocol = protocols[sample.id]
        asks = by_sample.get(sample.id) or [(sample, None)] * spec.repeats
        for _, ask in asks:
            response = stored.get(ask.key) if ask is not None else None
            if ask is None or response is None:
                bound += protocol.repeats
                bound_tokens += protocol.repeats * protocol.gen.max_new_tokens
                rules_first = rules_first or _when(config, protocol) == "miss"
                continue
            read += 1
            score = score_response(model_spec, sample, ask, response, spec.formulate)
            item = JudgeItem(sample, _answer_of(model_spec, response), score)
            if not _applies(protocol, item):
                continue
            if _when(config, protocol) == "miss" and protocol.rule(item) is not None:
                continue
            needed += [(protocol, item, attempt) for attempt in range(protocol.repeats)]
    out = []
    for judge_spec, judge in judges.items():
        unsent = needed
        if needed and store is not None and not isinstance(judge, StartableModel):
            ident = judge.identity.cache_id()
            keys = [_request(p, it, n, config.sees_image, ident).key for p, it, n in needed]
            got = store.get_responses(keys)
            unsent = [call for call, key in zip(needed, keys, strict=True) if key not in got]
        replies = len(needed) - len(unsent)
        calls = bound + len(unsent)
        tokens = bound_tokens + sum(p.gen.max_new_tokens for p, _, _ in unsent)
        out.append(
            PlannedJudge(
                judge=judge_spec,
                model=model_spec,
                calls=calls,
                read=read,
                unread=len(samples) * spec.repeats - read,
                rules_first=rules_first,
                stored_replies=replies,
                price=spec.prices.get(judge_spec),
                completion_tokens=tokens,
            )
        )
    return out
