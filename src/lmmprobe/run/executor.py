"""Executors run a model over pending requests in batches and hand back each batch's responses.

The local executor is the first implementation of one interface; a distributed one (Ray) can
replace it later because requests are independent and keyed and the store does the joining.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from lmmprobe.models.api_keys import scrub_answer, scrub_secrets
from lmmprobe.models.base import (
    AsyncModel,
    ClosableModel,
    MarkLogprobModel,
    Model,
    ModelError,
    UnsupportedInputError,
    internal_error,
)
from lmmprobe.schema import ErrorInfo, Request, Response

log = logging.getLogger(__name__)

OnBatch = Callable[[Sequence[Request], list[Response]], None]


class StopSending(Exception):
    """Raised by an `OnBatch` handler: start nothing more, but hand back what is already sent.

    A spent budget raises it (the runner's `CostMeter`). The batches already sent are being
    answered, and paid for, whatever the run does next, so the executor waits for them and
    hands each to the handler (which may raise this again: ignored) before it raises the first
    one to its caller. Batches not yet sent are never sent.
    """


class RunAborted(RuntimeError):
    """The run cannot usefully go on. What was answered is stored; a re-run resumes the rest.

    The base class is raised when too many consecutive batches failed with unexpected
    exceptions (a backend bug, not bad luck); subclasses name other reasons. `status` is what
    the run is recorded as, and `run_id` is filled in by the runner.
    """

    status: str = "failed"
    run_id: str | None = None


class ServerUnreachable(RunAborted):
    """The backend could not connect to its server at all (``unreachable`` errors)."""

    status = "stopped_unreachable"


class AuthenticationFailed(RunAborted):
    """Several requests in a row were refused authentication (``auth`` errors)."""

    status = "stopped_auth"


class ServerUnhealthy(RunAborted):
    """Many requests in a row failed with transient errors (5xx, timeouts) and none succeeded.

    The server answers (or accepts connections) but not usefully: every further request would
    spend its whole retry budget the same way.
    """

    status = "stopped_unhealthy"


TRANSIENT_ERRORS = frozenset({"transient", "timeout", "rate_limit"})
"""Error types that count towards `ServerUnhealthy`: failures of a server that answers, or
accepts and never answers (HTTP 5xx, no answer within the timeout, rate limiting), each
reported by a backend only after its own retries. A refused or dropped connection
(``connection``) is the reachability rule's: the backend turns a streak of them into
``unreachable`` (its ``unreachable_after``), which stops the run as ``stopped_unreachable``;
counting them here too would race that rule (with several Ray replicas, each with its own
streak, this one fired first). ``auth`` has its own rule; errors that say something about the
request or the answer (``bad_request``, ``empty_response``, ...) say nothing about the
server's health and neither count nor break a streak."""

DEFAULT_MAX_TRANSIENT_FAILURES = 10
"""Responses in a row that end in a `TRANSIENT_ERRORS` error, with no success among them, after
which a run stops as ``stopped_unhealthy``.

Each such response already spent the backend's retries (six attempts at the openai backend's
defaults), so ten in a row is some sixty failed attempts with not one answer between them: a
live server that fails half of all attempts gets there with odds of about 1e-18. Ten is below
the openai backend's default concurrency (16), so the run stops when the first wave of requests
has run out of retries: about 15 s for a server answering 500 to everything, about 6 minutes
for one that accepts requests and never answers (60 s timeout x 6 attempts), instead of that
long per request and concurrency slot."""


class Executor(Protocol):
    """Runs requests on a model; calls `on_batch` with each finished batch, in arrival order."""

    def execute(
        self, model: Model | AsyncModel, requests: Sequence[Request], on_batch: OnBatch
    ) -> None:
        """Run every request exactly once."""
        ...


@runtime_checkable
class SpecExecutor(Protocol):
    """An executor that builds the model where it runs, from its spec (the Ray executor).

    The runner calls `execute_spec` on such an executor instead of `Executor.execute`.
    """

    def execute_spec(
        self,
        model_spec: str,
        model: Model | AsyncModel,
        requests: Sequence[Request],
        on_batch: OnBatch,
    ) -> None:
        """Run every request exactly once on models built from `model_spec`.

        `model` is the caller's own instance, for its identity and capabilities.
        """
        ...


@runtime_checkable
class SessionExecutor(Protocol):
    """An executor that keeps something per model across calls (the Ray executor's replicas).

    The runner opens a model's session (`model_session`) around all of that model's calls, so
    what it starts for the model's first requests serves every chunk of its run, and ends with
    the session, whether the run finished, failed or was interrupted.
    """

    def model_session(
        self, model_spec: str, model: Model | AsyncModel
    ) -> AbstractContextManager[None]:
        """A context in which the calls for `model_spec` share what the executor starts."""
        ...


def model_session(
    executor: object, model_spec: str, model: Model | AsyncModel
) -> AbstractContextManager[None]:
    """`executor`'s session for one model's calls; nothing to hold for any other executor.

    Args:
        executor: Where the model's requests run (a `SessionExecutor`, or any other).
        model_spec: The model's spec as given.
        model: The driver's own instance of it (its identity and capabilities).

    Returns:
        A context manager: the executor's `SessionExecutor.model_session`, else a no-op (the
        local executor keeps nothing between calls).

    """
    if isinstance(executor, SessionExecutor):
        return executor.model_session(model_spec, model)
    return contextlib.nullcontext()


def plan_batches(requests: Sequence[Request], max_batch_size: int) -> list[list[Request]]:
    """Group requests by method (a batch is one backend call) and cut them to the batch size."""
    by_method: dict[str, list[Request]] = {}
    for r in requests:
        by_method.setdefault(r.method, []).append(r)
    batches = []
    for group in by_method.values():
        for i in range(0, len(group), max_batch_size):
            batches.append(group[i : i + max_batch_size])
    return batches


def _sync_call(model: Model, batch: list[Request]) -> list[Response]:
    method = batch[0].method
    if method == "generate":
        return model.generate(batch)
    if method == "likelihood":
        return model.loglikelihood(batch)
    raise UnsupportedInputError(f"this backend does not implement {method} requests")


async def _async_call(model: AsyncModel, batch: list[Request]) -> list[Response]:
    method = batch[0].method
    if method == "generate":
        return await model.agenerate(batch)
    if method == "likelihood":
        return await model.aloglikelihood(batch)
    if isinstance(model, MarkLogprobModel):
        return await model.amark_logprobs(batch)
    raise UnsupportedInputError(f"this backend does not implement {method} requests")


def _errors(batch: Sequence[Request], info: ErrorInfo) -> list[Response]:
    return [Response(key=r.key, error=info) for r in batch]


def _checked(batch: Sequence[Request], responses: list[Response], elapsed: float) -> list[Response]:
    """Validate a backend's answer to a batch and fill in latency where it gave none."""
    if len(responses) != len(batch) or any(
        resp.key != req.key for req, resp in zip(batch, responses, strict=False)
    ):
        info = ErrorInfo(
            type="internal",
            message=f"backend returned {len(responses)} responses for {len(batch)} requests "
            "or out of order",
            retryable=True,
        )
        return _errors(batch, info)
    share = elapsed / max(len(batch), 1)
    return [r if r.latency_s else r.model_copy(update={"latency_s": share}) for r in responses]


def _scrubbed(responses: Sequence[Response]) -> list[Response]:
    """The responses with API keys scrubbed out of every error message and answer.

    The one place every backend's output passes before it is stored, logged or shown, so a key
    a server, a model or a plugin quotes never reaches the store, an export or a report. Error
    messages and the finish reason lose every key-like word (`scrub_secrets`); answers and their
    separate thinking only the configured keys (`scrub_answer`), and a response that lost one
    says so (`Response.redacted`).
    """
    out: list[Response] = []
    for resp in responses:
        update: dict[str, Any] = {}
        if resp.error is not None:
            clean = scrub_secrets(resp.error.message)
            if clean != resp.error.message:
                update["error"] = resp.error.model_copy(update={"message": clean})
        if resp.text is not None:
            text = scrub_answer(resp.text)
            if text != resp.text:
                update.update(text=text, redacted=True)
        if resp.reasoning is not None:  # thinking is shown beside the answer: same rule
            reasoning = scrub_answer(resp.reasoning)
            if reasoning != resp.reasoning:
                update.update(reasoning=reasoning, redacted=True)
        if resp.finish_reason is not None:
            # The server's word, no answer: scrubbed as an error message is (re-test 21: a
            # server writing "stop Bearer KEY" there had the key stored, exported and shown).
            finish = scrub_secrets(resp.finish_reason)
            if finish != resp.finish_reason:
                update.update(finish_reason=finish, redacted=True)
        out.append(resp.model_copy(update=update) if update else resp)
    return out


@dataclass
class BatchResult:
    """What one backend call made of a batch, ready to store.

    Attributes:
        responses: One per request, in order, error messages scrubbed of API keys.
        unexpected: ``"TypeName: message"`` (scrubbed) when the call raised something other
            than a `ModelError` (a backend bug, counted towards `RunAborted`); None otherwise.
        frames: The traceback's frames of that exception, without its text (which may quote a
            key), for the log.

    """

    responses: list[Response]
    unexpected: str | None = None
    frames: str = ""


def failed_result(batch: Sequence[Request], exc: BaseException) -> BatchResult:
    """The batch's responses when its call raised `exc`: the typed error, else ``internal``."""
    if isinstance(exc, ModelError):
        return BatchResult(_scrubbed(_errors(batch, exc.to_info())))
    info = internal_error(exc)
    info = info.model_copy(update={"message": scrub_secrets(info.message)})
    return BatchResult(
        _errors(batch, info),
        unexpected=f"{type(exc).__name__}: {scrub_secrets(str(exc))}",
        # The frames without the exception's text: that text may quote a key, the frames cannot.
        frames="".join(traceback.format_tb(exc.__traceback__)),
    )


def call_batch(model: Model, batch: list[Request]) -> BatchResult:
    """One synchronous backend call for `batch`, every failure turned into stored errors.

    The one code path of a batch, wherever it runs: in the local executor or in a replica
    of the Ray executor, so an error is the same typed error in both.
    """
    t0 = time.perf_counter()
    try:
        return BatchResult(
            _scrubbed(_checked(batch, _sync_call(model, batch), time.perf_counter() - t0))
        )
    except Exception as exc:
        return failed_result(batch, exc)


async def acall_batch(model: AsyncModel, batch: list[Request]) -> BatchResult:
    """Async counterpart of `call_batch` for async backends."""
    t0 = time.perf_counter()
    try:
        out = await _async_call(model, batch)
        return BatchResult(_scrubbed(_checked(batch, out, time.perf_counter() - t0)))
    except Exception as exc:
        return failed_result(batch, exc)


class AbortPolicy:
    """Decides when a run stops, from the batches' results as they arrive (in arrival order).

    Shared by every executor so a run stops for the same reasons wherever its batches ran.

    Args:
        max_consecutive_failures: Abort (`RunAborted`) after this many batches in a row raised
            something other than a `ModelError`.
        max_auth_failures: Stop (`AuthenticationFailed`) after this many responses in a row
            were ``auth`` errors.
        max_transient_failures: Stop (`ServerUnhealthy`) after this many responses ended in
            a `TRANSIENT_ERRORS` error with no success among them (other errors neither count
            nor break the streak); 0 never stops for this. Default
            `DEFAULT_MAX_TRANSIENT_FAILURES`.

    A response of type ``unreachable`` stops the run at once (`ServerUnreachable`).

    Raises:
        ValueError: A limit is negative.

    """

    def __init__(
        self,
        max_consecutive_failures: int = 20,
        max_auth_failures: int = 3,
        max_transient_failures: int = DEFAULT_MAX_TRANSIENT_FAILURES,
    ) -> None:
        if max_transient_failures < 0:
            raise ValueError(
                f"max_transient_failures must be 0 (never stop) or more, got "
                f"{max_transient_failures}"
            )
        self.max_consecutive_failures = max_consecutive_failures
        self.max_auth_failures = max_auth_failures
        self.max_transient_failures = max_transient_failures
        self._failures = 0
        self._auth_failures = 0
        self._transient_failures = 0

    def settle(self, result: BatchResult) -> list[Response]:
        """Count the batch's outcome (and log an unexpected exception); its responses."""
        if result.unexpected is None:
            self._failures = 0
            return result.responses
        self._failures += 1
        frames = result.frames if self._failures == 1 else ""
        log.warning("backend raised %s\n%s", result.unexpected, frames)
        return result.responses

    def check(self, responses: Sequence[Response]) -> None:
        """Raise the `RunAborted` the stored responses call for, if any.

        Raises:
            RunAborted: Too many batches in a row raised unexpected exceptions.
            ServerUnreachable: A response says the server is down.
            AuthenticationFailed: Too many responses in a row were refused authentication.
            ServerUnhealthy: Too many responses in a row failed with transient errors.

        """
        if self._failures >= self.max_consecutive_failures:
            raise RunAborted(
                f"{self._failures} consecutive batches failed with unexpected exceptions; "
                "see the stored error messages (lmmprobe export) and the log"
            )
        for resp in responses:
            kind = resp.error.type if resp.error is not None else None
            if kind == "unreachable":
                assert resp.error is not None
                raise ServerUnreachable(f"run stopped: {resp.error.message}")
            self._auth_failures = self._auth_failures + 1 if kind == "auth" else 0
            if self._auth_failures >= self.max_auth_failures:
                assert resp.error is not None
                raise AuthenticationFailed(
                    f"run stopped: {self._auth_failures} requests in a row failed "
                    f"authentication: {resp.error.message}"
                )
            if kind is None:
                self._transient_failures = 0
            elif kind in TRANSIENT_ERRORS:
                self._transient_failures += 1
                if 0 < self.max_transient_failures <= self._transient_failures:
                    assert resp.error is not None
                    raise ServerUnhealthy(_unhealthy(self._transient_failures, resp.error))


def _unhealthy(n: int, last: ErrorInfo) -> str:
    """The one-line message of `ServerUnhealthy`, quoting the last error (already scrubbed)."""
    quoted = " ".join(last.message.split())  # a server's message may hold line breaks
    if len(quoted) > 300:
        quoted = quoted[:300] + "..."
    # A longer timeout cannot help a server refusing with 429 (re-test 13 #9).
    advice = (
        "check the server's rate limits and quota (or lower max_concurrency)"
        if last.type == "rate_limit"
        else "check the server's logs and load, or give the backend a longer timeout"
    )
    return (
        f"run stopped: the server looks unhealthy: {n} requests in a row failed with "
        f"transient errors after all their retries and none succeeded (last: {last.type}: "
        f"{quoted}); {advice}, then re-run to resume"
    )


GC_YOUNG_THRESHOLD = 50_000
"""Allocations between two young-generation collections during an async model's run."""


class _Collections:
    """The collector's thresholds as the first of the open `_few_collections` blocks found them.

    The thresholds belong to the process: runs in threads of one process (the Python API, a
    server) open blocks that may close in any order. Each putting back what it found left them
    raised for good when two interleaved (A opens, B opens and finds A's, A closes, B puts
    A's back; re-test 17). They are raised when the first block opens and put back when the
    last closes.
    """

    lock = threading.Lock()
    open = 0
    found: tuple[int, ...] = ()


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Within the block, the cyclic garbage collector runs rarely: an API model's run.

    Each request to an API allocates thousands of short-lived objects (the HTTP client's
    headers, URLs, options), which at the default threshold (700) ran a young collection
    every few requests and, every hundred or so, a full one over everything the run holds (its
    samples, requests and answers): a fifth of the client's CPU per request at 64 in flight
    (benchmarks/api_throughput.py; measured side by side, gc.freeze() of the run's objects
    saved half as much). Memory is still freed by reference counting as before; only cycles
    wait longer. The thresholds are put back after, whatever happened, when the last block
    open in the process closes (`_Collections`).
    """
    import gc

    with _Collections.lock:
        if _Collections.open == 0:
            _Collections.found = before = gc.get_threshold()
            if before[0] > 0:  # 0: collection switched off by the caller's own setting; left so
                gc.set_threshold(max(before[0], GC_YOUNG_THRESHOLD), *before[1:])
        _Collections.open += 1
    try:
        yield
    finally:
        with _Collections.lock:
            _Collections.open -= 1
            if _Collections.open == 0:
                gc.set_threshold(*_Collections.found)


class LocalExecutor:
    """Runs synchronous backends batch by batch and async backends with bounded concurrency.

    Every batch is handed to `on_batch` (stored) before any decision to stop, so a stopped run
    loses nothing; requests not yet answered are simply not stored and a re-run asks them. When
    `on_batch` raises `StopSending`, the batches in flight are still awaited and handed over.

    Args:
        max_consecutive_failures: Abort after this many batches in a row raised something
            other than a `ModelError` (their requests are stored as ``internal`` errors first).
        max_concurrency: Overrides the backend's own limit for async backends.
        max_auth_failures: Stop (`AuthenticationFailed`) after this many responses in a row
            were ``auth`` errors: a refused key fails every request alike.
        max_transient_failures: Stop (`ServerUnhealthy`) after this many responses failed with
            transient errors (5xx, timeouts...) and none succeeded; 0 never stops for this.

    A response of type ``unreachable`` stops the run at once (`ServerUnreachable`): the backend
    only reports it after its own count of failed connection attempts. The rules are
    `AbortPolicy`'s, shared with the Ray executor.

    Raises:
        ValueError: A limit is negative.

    """

    def __init__(
        self,
        max_consecutive_failures: int = 20,
        max_concurrency: int | None = None,
        max_auth_failures: int = 3,
        max_transient_failures: int = DEFAULT_MAX_TRANSIENT_FAILURES,
    ) -> None:
        # Built once here only to refuse bad limits before a run starts; `execute` makes its own.
        AbortPolicy(max_consecutive_failures, max_auth_failures, max_transient_failures)
        self.max_consecutive_failures = max_consecutive_failures
        self.max_concurrency = max_concurrency
        self.max_auth_failures = max_auth_failures
        self.max_transient_failures = max_transient_failures
        self.stats: dict[str, float] = {}
        """The last `execute`: ``run_s`` (seconds answering and storing) and ``batches``; the
        same window as the Ray executor's ``run_s``, so the two compare like for like."""

    def spec_fields(self) -> dict[str, str]:
        """The `RunSpec` fields that record this executor with a run."""
        return {"executor": "local"}

    def execute(
        self, model: Model | AsyncModel, requests: Sequence[Request], on_batch: OnBatch
    ) -> None:
        """Run every request once, calling `on_batch` as each batch finishes."""
        t0 = time.perf_counter()
        batches = plan_batches(requests, model.capabilities.max_batch_size)
        self.stats = {"batches": len(batches)}
        policy = AbortPolicy(
            self.max_consecutive_failures, self.max_auth_failures, self.max_transient_failures
        )
        try:
            if isinstance(model, AsyncModel) and model.capabilities.is_async:
                import asyncio  # only async backends need it; a run of a local model skips it

                with _few_collections():
                    asyncio.run(self._run_async(model, batches, on_batch, policy))
                return
            assert isinstance(model, Model)
            for batch in batches:
                responses = policy.settle(call_batch(model, batch))
                on_batch(batch, responses)
                policy.check(responses)
        finally:
            self.stats["run_s"] = time.perf_counter() - t0

    async def _run_async(
        self,
        model: AsyncModel,
        batches: list[list[Request]],
        on_batch: OnBatch,
        policy: AbortPolicy,
    ) -> None:
        import asyncio

        limit = self.max_concurrency or model.capabilities.max_concurrency
        waiting = deque(batches)
        running: dict[asyncio.Task[BatchResult], list[Request]] = {}
        stop: StopSending | None = None  # set once on_batch said to send nothing more
        try:
            while waiting or running:
                # A batch starts only here, once every finished one has been handed over:
                # a budget crossed by a finished batch starts nothing more.
                while waiting and stop is None and len(running) < limit:
                    batch = waiting.popleft()
                    running[asyncio.create_task(acall_batch(model, batch))] = batch
                if not running:
                    break  # stopped: what is still waiting is never sent
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    batch = running.pop(task)
                    responses = policy.settle(task.result())
                    try:
                        on_batch(batch, responses)
                    except StopSending as exc:
                        # The batches in flight are answered and paid for all the same: they
                        # are awaited and stored; only the ones not started are dropped.
                        stop = stop or exc
                    if stop is None:
                        policy.check(responses)
            if stop is not None:
                raise stop
        finally:
            for t in running:
                t.cancel()
            if isinstance(model, ClosableModel):
                await model.aclose()
