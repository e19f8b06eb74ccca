"""The model protocol every backend implements, its typed errors, and the model registry.

A backend knows nothing about tasks: it turns `Request`s into `Response`s. Batched calls return
one response per request, in order; a failure of one request is a `Response` carrying an
`ErrorInfo`, a failure of the whole call is a raised `ModelError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from lmmprobe.models.api_keys import continues_a_secret, redact_options, splits_a_password
from lmmprobe.registry import Registry
from lmmprobe.schema import ErrorInfo, Request, Response, Usage
from lmmprobe.spec import KEY, THINK_OPTION, parse_spec

# ---------------------------------------------------------------------------------------------
# Errors


class ModelError(Exception):
    """A failed model call. Subclasses fix `type` and whether a retry could succeed."""

    type: ClassVar[str] = "internal"
    retryable: ClassVar[bool] = False
    usage: Usage | None = None
    """What the reply that failed said it cost (a reply that came, then was found malformed or
    empty, was billed all the same): counted against ``--max-cost`` and in the run's cost."""

    def to_info(self) -> ErrorInfo:
        """The error as stored with a response."""
        return ErrorInfo(
            type=self.type, message=str(self) or type(self).__name__, retryable=self.retryable
        )


class RetryableError(ModelError):
    """Trying again later may succeed; retried on resume."""

    type = "transient"
    retryable = True


class RateLimitError(RetryableError):
    """The server asked us to slow down (HTTP 429)."""

    type = "rate_limit"

    def __init__(self, message: str = "rate limited", retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TransientError(RetryableError):
    """A server or connection failure that may pass (HTTP 5xx, reset connection)."""

    type = "transient"


class ModelTimeoutError(RetryableError):
    """The call took longer than its timeout."""

    type = "timeout"


class PermanentError(ModelError):
    """The same request will fail again; stored, not retried within a run."""

    type = "bad_request"


class BadRequestError(PermanentError):
    """The backend rejected the request (HTTP 4xx other than 429)."""

    type = "bad_request"


class ModelNotFoundError(PermanentError):
    """The server has no such model, or no such route (HTTP 404): a misspelt model name.

    Every request to that name fails alike; not retried within a run, retried on resume like
    every stored error (with the name fixed, the spec and so the keys change anyway).
    """

    type = "not_found"


class UnsupportedInputError(PermanentError):
    """The request needs something the model cannot do (too many images, no likelihoods)."""

    type = "unsupported_input"


class ConnectionFailedError(RetryableError):
    """No answer reached us: connection refused or reset, DNS failure, connect timeout."""

    type = "connection"


class UnreachableError(RetryableError):
    """So many connection attempts in a row failed that the server counts as down.

    The runner stops the run on it (``stopped_unreachable``); a re-run resumes.
    """

    type = "unreachable"


class AuthenticationError(PermanentError):
    """The server refused the credentials (HTTP 401/403); every request would fail alike.

    Not retried within a run; the runner stops the run (``stopped_auth``) after a few in a row,
    and a re-run (with the key fixed) retries them like every stored error.
    """

    type = "auth"


class MalformedReplyError(TransientError):
    """The server answered, but its reply is not a chat completion (no choices, no message).

    Retried as a glitch would be; its message names the shape that is wrong.
    """


class UnreadableReplyError(PermanentError):
    """The server answered in a shape lmmprobe cannot read (a content part of an unknown type).

    Not retried: the server sends the same shape again, and each reply is paid.
    """


class EmptyResponseError(RetryableError):
    """The server answered with no content: an error, never an empty answer.

    Args:
        message: What happened.
        repeatable: The same request would come back empty again (the token limit ran out
            before any answer), so retrying within the run is pointless.

    """

    type = "empty_response"

    def __init__(self, message: str = "empty response", *, repeatable: bool = False) -> None:
        super().__init__(message)
        self.repeatable = repeatable


def internal_error(exc: BaseException) -> ErrorInfo:
    """Describe an unexpected exception from a backend as a stored error."""
    why = str(exc)
    if not why and isinstance(exc, MemoryError):
        # Python's own MemoryError says nothing: say what ran out.
        why = "out of memory building or reading this request"
    return ErrorInfo(type="internal", message=f"{type(exc).__name__}: {why}", retryable=True)


# ---------------------------------------------------------------------------------------------
# Protocol


class Capabilities(BaseModel):
    """What a backend can do; the runner plans batches and inference methods from it."""

    likelihood: bool = Field(default=False, description="Implements loglikelihood().")
    mark_logprobs: bool = Field(
        default=False, description="Implements mark_logprobs() (API token log-probabilities)."
    )
    images: bool = Field(
        default=True, description="Takes images (a video's frames are sent as images)."
    )
    video: bool = Field(
        default=False,
        description="Takes a video as a video (the processor's video input, or a "
        "``video_url`` part), not only its frames as images.",
    )
    multi_image: bool = Field(default=True, description="Accepts several images per request.")
    max_images: int | None = Field(default=None, description="Images per request; None = no limit.")
    max_batch_size: int = Field(default=1, ge=1, description="Requests per call.")
    is_async: bool = Field(default=False, description="Implements agenerate()/aloglikelihood().")
    max_concurrency: int = Field(
        default=1, ge=1, description="Concurrent calls for async backends."
    )


class ModelIdentity(BaseModel):
    """What identifies a model's outputs: part of every cache key and of the manifest."""

    backend: str = Field(description="Registry name of the backend.")
    name: str = Field(description="Model name, path or hub id.")
    revision: str | None = Field(default=None, description="Hub revision or commit, when known.")
    fingerprint: str | None = Field(default=None, description="Hash of local weights, when cheap.")
    options: dict[str, Any] = Field(
        default_factory=dict, description="Backend options that change outputs (not secrets)."
    )

    def cache_id(self) -> str:
        """Canonical JSON used inside cache keys."""
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))

    def recorded(self) -> dict[str, Any]:
        """The identity as a manifest records it: `options`' secret values redacted.

        By the rule of the spec (`lmmprobe.models.api_keys.redact_options`), at every level:
        ``chat_template_kwargs=api_token=X`` shows ``api_token=[redacted]`` in the spec, and
        so its parsed ``{"api_token": X}`` does. The cache keys (`cache_id`) keep the values.
        """
        return {**self.model_dump(), "options": redact_options(self.options)}


@runtime_checkable
class Model(Protocol):
    """A synchronous, batched model backend."""

    identity: ModelIdentity
    capabilities: Capabilities

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Generate text for each request (one response per request, in order)."""
        ...

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Score each request's candidates; raise UnsupportedInputError if unsupported."""
        ...


@runtime_checkable
class AsyncModel(Protocol):
    """An asynchronous backend (API clients); the runner bounds its concurrency."""

    identity: ModelIdentity
    capabilities: Capabilities

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        """Async counterpart of `Model.generate`."""
        ...

    async def aloglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Async counterpart of `Model.loglikelihood`."""
        ...


@runtime_checkable
class MarkLogprobModel(Protocol):
    """An async backend that can rank option marks by first-token log-probability."""

    async def amark_logprobs(self, requests: Sequence[Request]) -> list[Response]:
        """One log-probability per candidate mark (-inf when not among the top tokens)."""
        ...


SpendGuard = Callable[[str, Usage | None], ErrorInfo | None]
"""Asked before each attempt, and told of each failed one's usage (request key, usage or None):
the ``budget`` error to return once the run's money is spent, None while it is not."""


@runtime_checkable
class MeteredModel(Protocol):
    """A backend that retries by itself, and asks the run's cost meter before each retry.

    The runner sets `spend_guard` while it sends (``--max-cost``): a reply that stated its usage
    and then proved malformed or empty is charged at once, and once the budget is spent it is
    not asked again, nor is a request not yet sent (it returns the guard's ``budget`` error).
    """

    spend_guard: SpendGuard | None


@runtime_checkable
class ClosableModel(Protocol):
    """A backend holding resources (connections) to release at the end of an async run."""

    async def aclose(self) -> None:
        """Release connections; called inside the event loop that used them."""
        ...


@runtime_checkable
class StartableModel(Protocol):
    """A backend that runs a server of its own for the run (``vllm:``, ``sglang:``).

    The runner starts it once the run folder is known (the server's log goes there), before it
    reads the identity (which names what the server serves), and stops it when the run ends,
    however it ends.
    """

    def start(self, log_dir: Path | None = None) -> None:
        """Start the server and wait until it answers; `log_dir` holds its log."""
        ...

    def stop(self) -> None:
        """Stop the server; safe to call when it is not running."""
        ...


# ---------------------------------------------------------------------------------------------
# Specs and registry


class ModelFactory(Protocol):
    """Builds a backend from a parsed spec."""

    def __call__(self, target: str | None, options: dict[str, str]) -> Model | AsyncModel:
        """Build the model; `target` is the part after ``backend:``."""
        ...


MODELS: Registry[ModelFactory] = Registry(
    "model backend",
    entry_point_group="lmmprobe.models",
    builtins=("lmmprobe.models._builtin",),
)
"""Model backends by name: the built-ins of `lmmprobe.models._builtin` (registered on the first
lookup or listing) and plugins from the ``lmmprobe.models`` entry-point group
(``name = package.module:factory``); a built-in keeps its name over a plugin."""


def parse_model_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """Split ``backend[:target][,key=value...]`` into its parts (`lmmprobe.spec`'s grammar).

    Examples: ``random``, ``first,delay=0.01``, ``hf:./ckpt,dtype=float32``,
    ``openai:gpt-4o@http://localhost:8000/v1``.

    Raises:
        SpecError: The spec does not follow the grammar (a `ValueError`: an option that is not
            ``key=value``, a key given twice...).

    """
    parsed = parse_spec(spec, "model")
    return parsed.name, parsed.target, dict(parsed.options)


_OPTION = re.compile(rf"{KEY.pattern}\s*=")
"""A spec piece that is an option (``key=value``) rather than the start of another spec."""


def split_model_specs(values: Sequence[str]) -> list[str]:
    """The model specs in ``--model`` values: one spec per value, or several joined by commas.

    A comma starts a new spec unless what follows is an option (``key=value``, the key a
    name), so ``random,seed=3`` is one spec with an option, ``random,first`` two specs, and
    ``hf:./ckpt,dtype=float32,first`` a spec with an option followed by another spec. A piece
    that is the value of a secret the URL before it names (``...@http://h/v1/key,X``) stays
    with it. Empty pieces are dropped.

    Raises:
        ValueError: A "," falls inside a server URL's user or password (not quoted).

    """
    specs: list[str] = []
    for value in values:
        current: list[str] = []
        for piece in value.split(","):
            piece = piece.strip()
            if not piece:
                continue
            if current and splits_a_password(current[-1], piece):
                # Not quoted: both halves are the password's.
                raise ValueError(
                    "a model spec's server URL holds a ',' in its user or password, which "
                    "ends a spec: write it percent-encoded (%2C)"
                )
            # ``openai:m@http://h/v1/key,X``: X is the URL's secret, not another spec.
            if current and (_OPTION.match(piece) or continues_a_secret(current[-1], piece)):
                current.append(piece)
                continue
            if current:
                specs.append(",".join(current))
            current = [piece]
        if current:
            specs.append(",".join(current))
    return specs


RUN_OPTIONS: frozenset[str] = frozenset({"price", THINK_OPTION})
"""Model options the run reads, never the backend: ``price=IN:OUT`` (`lmmprobe.run.prices`) and
``think=`` (how an output is split into thinking and answer when it is scored,
`lmmprobe.parse.thinking`). They change no answer the model sends, so they are taken off before
the backend is built and are no part of its identity or any cache key."""


def backend_spec_parts(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """`parse_model_spec` without the `RUN_OPTIONS`: what the backend's factory is given.

    Raises:
        SpecError: The spec does not follow the grammar.

    """
    backend, target, options = parse_model_spec(spec)
    return backend, target, {k: v for k, v in options.items() if k not in RUN_OPTIONS}


def load_model(spec: str) -> Model | AsyncModel:
    """Resolve a model spec through the registry and build the backend.

    The spec's `RUN_OPTIONS` are not passed to the backend (`backend_spec_parts`).

    Raises:
        RegistryError: Unknown backend, or its optional dependencies are missing (the message
            gives the exact ``pip install`` to run).
        ValueError: The spec is malformed.

    """
    backend, target, options = backend_spec_parts(spec)
    factory = MODELS.get(backend)
    return factory(target, options)


def list_models() -> list[tuple[str, str, str]]:
    """(name, status, summary) for every registered backend; status tells what is missing."""
    rows = []
    for name in MODELS.names():
        missing = MODELS.missing_requirements(name)
        status = "ready" if not missing else f"needs: {MODELS.install_hint(name)}"
        rows.append((name, status, MODELS.summary(name)))
    return rows
