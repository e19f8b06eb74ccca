"""``lmmprobe run --dry-run``: what a run would send, counted before anything is sent.

The run is planned exactly as `execute_run` plans it (the same data, requests and cache keys),
and the store is looked up for answers it already holds, which are not sent again. No model is
called, no run is recorded, and a store that does not exist yet is not created.

The cost of what would be sent cannot be known before it is sent: the prompt's tokens are
counted by the server (images included), the completion's by what the model writes. What can
be known is a bound on the completion side: each answer is at most ``max_new_tokens`` tokens.

Nothing is sent, so no API key is needed: a model whose key is not set is planned all the same,
and its plan names the variable a real run will need.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from pathlib import Path

from lmmprobe.data import LoadResult, StreamedLoad, chunks_of, close_load
from lmmprobe.data.rows import remembered_images
from lmmprobe.data.video import frame_policy
from lmmprobe.formulate.ask import Ask
from lmmprobe.models.base import AsyncModel, Model, ModelIdentity, StartableModel
from lmmprobe.run.runner import (
    EarlierKeys,
    _input_error,
    _plan_dialogue_round,
    check_media,
    dialogue_stages,
    plan_requests,
    priced,
    resolve_inputs,
)
from lmmprobe.run.scoring import check_names
from lmmprobe.schema import Price, Request, RunSpec, Sample
from lmmprobe.schema.price import PER_TOKENS
from lmmprobe.store import Store
from lmmprobe.store.sqlite import DEFAULT_DB

__all__ = ["CHARS_PER_TOKEN", "PlannedModel", "estimate_prompt_tokens", "plan_run"]

CHARS_PER_TOKEN = 4
"""Characters of English text per token, the rule of thumb OpenAI gives for its tokenizers: a
prompt's tokens are estimated from its text before it is sent (the server counts them)."""

MESSAGE_TOKENS = 4
"""Tokens a chat message adds beside its text (its role and the separators a chat format
puts around it), in the estimate."""


def estimate_prompt_tokens(request: Request) -> int:
    """About how many prompt tokens `request`'s text is: an estimate, not a count.

    Each message's text at `CHARS_PER_TOKEN` characters a token (rounded up), plus
    `MESSAGE_TOKENS` for the message. Images are left out: what an image costs depends on the
    server (its size, tiles, detail), so a caller says they are not counted.
    """
    return sum(
        MESSAGE_TOKENS + math.ceil(len(message.text) / CHARS_PER_TOKEN)
        for message in request.messages
    )


@dataclass(frozen=True)
class PlannedModel:
    """What one model of a run would be asked.

    Attributes:
        spec: The model spec.
        requests: Distinct requests the run asks of it (rows sharing a request count once).
        stored: Of those, answered in the store already (reused, not sent).
        rejected: Of those, requests the model cannot take (too many images): never sent.
        later_rounds: Requests of later dialogue rounds, whose prompts hold the model's own
            earlier answers, so they cannot be looked up before: all counted as sent.
        price: The model's price, when it has one.
        max_new_tokens: The completion limit of each request.
        store_unchecked: A served model (``vllm:``, ``sglang:``): its identity names what the
            server serves, known only once it runs, and a dry run starts no server; so the
            store was not looked at and every request is counted.
        missing_key: The environment variable of the model's API key when it is not set: a
            dry run needs none, a real run does.
        invalid: Rows of the data left out as invalid (the same for every model), as a run
            would skip them.
        problems: The first of them, ``file:line: field: reason``.

    """

    spec: str
    requests: int
    stored: int
    rejected: int
    later_rounds: int
    price: Price | None
    max_new_tokens: int
    store_unchecked: bool = False
    missing_key: str | None = None
    invalid: int = 0
    problems: tuple[str, ...] = ()

    @property
    def to_send(self) -> int:
        """Requests that would be sent to the model."""
        return self.requests - self.stored - self.rejected + self.later_rounds

    @property
    def completion_cost_bound(self) -> float | None:
        """Dollars the completions of `to_send` cost at most (each ``max_new_tokens`` long)."""
        if self.price is None:
            return None
        return self.to_send * self.max_new_tokens * self.price.output / PER_TOKENS


def plan_run(spec: RunSpec) -> list[PlannedModel]:
    """Count, per model, the requests `spec` would send after the store's answers.

    Raises:
        RegistryError: A model, data source, matcher or prompt style is unknown.
        DataError: The data cannot be read.
        ValueError: The spec is invalid (a bad ``price=``, ``max_cost`` without prices...).
        InputErrors: Several of the models and the data are wrong (each one named).

    """
    check_names(spec.formulate)
    spec = priced(spec)
    path = Path(spec.db) if spec.db else DEFAULT_DB
    # An absent store holds nothing: it is not created just to be looked at.
    store = Store(path) if path.exists() and not spec.no_cache else None
    # Image files an earlier run checked are not decoded or hashed again (`remembered_images`),
    # on the first read and on each chunk read again, as a run reads them.
    reading = remembered_images(store) if store is not None else contextlib.nullcontext()
    try:
        # Videos are sampled as the run would sample them (`frame_policy`).
        with reading, frame_policy(spec.frame_policies()):
            # Builds clients and loads no weights; a missing API key is noted, not an error.
            # Data of more than a chunk is planned a chunk at a time, as a run asks it.
            inputs = resolve_inputs(spec, keys=False, chunked=True)
            try:
                check_media(inputs.models, inputs.load, spec)
                return [
                    _plan_model(
                        model_spec, model, inputs.load, spec, store,
                        inputs.missing_keys.get(model_spec),
                    )
                    for model_spec, model in inputs.models
                ]  # fmt: skip
            finally:
                close_load(inputs.load)  # its spill, kept for the models' plans, goes
    finally:
        if store is not None:
            store.close()


def _plan_model(
    model_spec: str,
    model: Model | AsyncModel,
    load: LoadResult | StreamedLoad,
    spec: RunSpec,
    store: Store | None,
    missing_key: str | None,
) -> PlannedModel:
    served = isinstance(model, StartableModel)
    # A served model's identity would start its server (it names the version served): a dry
    # run starts nothing, so its requests are told apart under a stand-in identity and none is
    # looked up in the store.
    identity = ModelIdentity(backend="dry-run", name=model_spec) if served else model.identity
    requests = stored = rejected = later = 0
    # A request an earlier chunk asked is asked once by the run (`EarlierKeys`): counted once.
    earlier = EarlierKeys()
    for samples in chunks_of(load):
        stages = dialogue_stages(samples)
        if stages is None:
            rows: list[tuple[Sample, Ask]] = plan_requests(samples, spec, identity)
        else:
            rows = _plan_dialogue_round(stages[0], spec, identity, {})
            later += sum(len(stage) for stage in stages[1:]) * spec.repeats
        unique: dict[str, Ask] = {}
        for _, ask in rows:
            unique.setdefault(ask.key, ask)
        del rows
        seen = earlier.among(list(unique))
        unique = {k: a for (k, a), was in zip(unique.items(), seen, strict=True) if not was}
        earlier.add(unique)
        found = set(store.get_responses(unique)) if store is not None and not served else set()
        requests += len(unique)
        stored += len(found)
        rejected += sum(
            1
            for key, ask in unique.items()
            if key not in found and _input_error(model, ask.to_request()) is not None
        )
        del samples, unique  # before the next chunk is read
    return PlannedModel(
        spec=model_spec,
        requests=requests,
        stored=stored,
        rejected=rejected,
        later_rounds=later,
        price=spec.prices.get(model_spec),
        max_new_tokens=spec.gen.max_new_tokens,
        store_unchecked=served,
        missing_key=missing_key,
        invalid=load.invalid,
        problems=tuple(map(str, load.problems)),
    )
