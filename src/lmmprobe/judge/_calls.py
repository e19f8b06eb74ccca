"""TEMPORARY until branch i26-judge-core lands: the one call path for judge requests.

`answer_requests` has the shape of ``lmmprobe.run.runner.answer_requests`` and `judge_key`
that of ``lmmprobe.run.keys.judge_key`` (both being added on i26-judge-core); once merged,
this module only re-exports them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from lmmprobe.models.base import AsyncModel, Model, ModelIdentity
from lmmprobe.run.executor import Executor
from lmmprobe.run.keys import request_key
from lmmprobe.run.progress import ProgressSink
from lmmprobe.run.runner import ModelOutcome
from lmmprobe.schema import Request, Response
from lmmprobe.store import Store

__all__ = ["answer_requests", "judge_key"]


def judge_key(
    identity: ModelIdentity | str, protocol: str, version: str, request: Request, attempt: int = 0
) -> str:
    """Key of a judge request: the request's key plus the protocol's name and version."""
    text = f"judge|{protocol}|{version}|{request_key(identity, request)}|{attempt}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def answer_requests(
    model_spec: str,
    model: Model | AsyncModel,
    unique: Mapping[str, Request],
    store: Store,
    *,
    executor: Executor,
    progress: ProgressSink,
    outcome: ModelOutcome,
    no_cache: bool = False,
) -> dict[str, Response]:
    """Responses for keyed requests: from the store, or from the model (stored first)."""
    responses = {} if no_cache else store.get_responses(unique)
    outcome.requests += len(unique)
    outcome.cached += len(responses)
    pending = [r for k, r in unique.items() if k not in responses]

    def on_batch(batch: list[Request], got: list[Response]) -> None:
        store.put_responses(model_spec, batch, got)
        for resp in got:
            responses[resp.key] = resp
        outcome.called += len(batch)
        progress.advance(len(batch), sum(1 for r in got if r.error is not None))

    progress.start(model_spec, len(unique), len(unique) - len(pending))
    try:
        if pending:
            executor.execute(model, pending, on_batch)  # type: ignore[arg-type]
    finally:
        progress.finish()
    for resp in (responses[k] for k in unique if k in responses):
        if resp.error is not None:
            outcome.errors += 1
    return responses
