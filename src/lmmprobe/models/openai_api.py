"""OpenAI-compatible chat backend: ``openai:MODEL[@BASE_URL][,option=value...]``.

Works with any server speaking the chat-completions protocol (vLLM, SGLang, Ollama, LM Studio,
hosted providers) through the official ``openai`` client. Requests run asynchronously under an
adaptive concurrency limit (halved on rate limiting, grown back one step at a time), each with a
timeout and bounded retries (exponential backoff with jitter, ``Retry-After`` honoured). A request
that still fails is returned as a typed error, never as answer text.

Options: ``key_env`` (environment variable holding the API key; default ``OPENAI_API_KEY``),
``max_concurrency`` (16), ``timeout`` (seconds per attempt, 60: the whole
attempt, the reply's headers and body, not each read), ``max_attempts`` (6),
``backoff`` (first retry delay, 0.5 s), ``max_backoff`` (30 s), ``max_image_pixels``
(1,048,576), ``image_format`` (png | jpeg), ``max_request_image_bytes`` (50,000,000: the most
bytes of base64 image data one request carries, each listing of a picture counted, as sent;
OpenAI documents 50 MB per request; a sample over it is refused before anything is encoded or
sent, as that sample's ``unsupported_input`` error), ``video`` (frames | url: how a sample's
video is sent: its sampled frames as images, in time order (the default, any vision server), or
one ``video_url`` part, the video's URL or its file as a base64 data URL within
``max_request_image_bytes``, for servers that take video (vLLM, SGLang), which sample the
frames themselves by their own settings; a clip (start/end) is sent as frames only), ``images``
(true; false for a server that takes no images: a run asking it about videos is refused before
any call unless ``video=url``), ``send_seed`` (true), ``max_tokens_param``
(max_tokens | max_completion_tokens), ``top_logprobs`` (20), ``max_requests`` and
``max_tokens_total`` (a budget; when spent, the remaining requests are returned as ``budget``
errors so the run stops cleanly and resumes later), ``transport`` (auto | aiohttp | httpx: the
openai client's HTTP transport; auto takes the client's own aiohttp transport when aiohttp is
installed, ``pip install 'openai[aiohttp]'``, which costs about a third less CPU a request at
high concurrency, else its default httpx one; not part of the model's identity: the requests
sent are the same), ``unreachable_after`` (20: after that many
connection attempts in a row fail with no answer in between, the server counts as down and the
remaining requests come back at once as ``unreachable`` errors, on which the runner stops the
run; 0 never gives up). A value that cannot work (a NaN, negative or 0 timeout, a cap below
1, a time over a week, a count far past any real use: ``max_attempts`` over 100,
``top_logprobs`` over 20 as the OpenAI API allows, ``max_image_pixels``,
``max_request_image_bytes`` or ``max_requests`` over 1,000,000,000, ``max_tokens_total`` over
10^12, ``unreachable_after`` over 1,000,000, ``thinking_budget`` over 10,000,000) is refused when
the spec is read, in one line.

Reasoning models (options that change the output, so part of the model identity; unset, none of
them is sent):

- ``reasoning_effort`` (none | minimal | low | medium | high | xhigh): sent as the Chat
  Completions parameter ``reasoning_effort`` (OpenAI o-series and gpt-5, Ollama, OpenRouter,
  vLLM/SGLang pass it to the chat template).
- ``thinking_budget`` (tokens, 0 or more): sent twice, for the two kinds of server that take a
  budget: as ``thinking_token_budget`` (vLLM's per-request cap on thinking tokens, enforced when
  the server runs with a reasoning parser/config) and as ``chat_template_kwargs.thinking_budget``
  (the chat-template hint SGLang documents for Qwen3-style templates). Servers ignore the field
  they do not know (vLLM and SGLang accept unknown fields); a strict server refuses it with a
  ``bad_request`` error, so set it only for a server that takes one.
- ``chat_template_kwargs`` (``key=value`` pairs joined by ``;``, values read as JSON scalars):
  sent as ``chat_template_kwargs``, which vLLM and SGLang pass to the model's chat template, e.g.
  ``chat_template_kwargs=enable_thinking=false`` turns a Qwen3-style model's thinking off.

What the reply says about thinking is kept apart from its text: the message's
``reasoning_content`` (SGLang with a reasoning parser, DeepSeek's API, llama.cpp, vLLM up to
0.10) or ``reasoning`` (vLLM from 0.11, which renamed the field, OpenRouter, Ollama, LM Studio)
becomes `Response.reasoning`; ``finish_reason`` becomes `Response.finish_reason`;
``usage.completion_tokens_details.reasoning_tokens`` becomes `Usage.reasoning_tokens`. A usage
count is the server's account, not the answer: a huge one is clamped, one that is no count
(negative, NaN, a string) read as unknown, as a missing one, with a warning; the answer is kept. The body
is read as JSON (not through the client's typed models, whose ``model_extra`` would hold these
fields), so a field the client does not know arrives all the same. Inline ``<think>`` tags stay
in the text: they are read apart when the answer is scored.
A message whose content is a list of parts (Mistral's reasoning models:
``[{"type": "thinking", "thinking": [...]}, {"type": "text", "text": ...}]``) is read too: its
``text`` parts joined are the answer, its ``thinking``/``reasoning`` parts the thinking; a part
of another type, or content that is neither text nor parts, is a ``bad_request`` error, not
asked again (the server would answer in the same shape, and each reply is paid).

A reply is billed whatever follows: its ``usage`` is read first, and carried by the error when
the rest proves malformed or empty; the response returned at last carries the usage of all its
attempts. Under ``--max-cost`` the runner's meter is asked before each attempt
(`spend_guard`): once the money is spent, nothing more is sent, a malformed reply included.

A reply is read up to `MAX_REPLY_BYTES` of its body, and its text and thinking are kept up to
`lmmprobe.schema.MAX_REPLY_CHARS` characters each: a server that ignores the token limit and
sends more has its answer cut there, stored with ``finish_reason=length`` (as a token limit
would leave it), and a warning names the first such reply. A reply whose bytes read hold no
answer at all (a huge field before ``choices``, megabytes of blanks) is no malformed reply to
ask again, as the server sends it alike each time: it is stored the same way, with no text
(scored ``truncated``, not asked again). Under ``--method mark_logprob`` too: a reply cut
before its log-probabilities is stored without them, ``finish_reason=length``, ``truncated``.

An empty or null completion is an ``empty_response`` error, never an empty answer. HTTP 401/403
is an ``auth`` error naming the key's environment variable. One exception: a reply with no
content that stopped at the token limit (``finish_reason=length``) after thinking (reasoning
sent, or reasoning tokens counted) is the output of a model cut off inside its thinking: it is
returned with empty text, its reasoning and ``finish_reason=length``, to be scored
``truncated``, not retried as an error (under ``--method mark_logprob`` too).

The API key is read from the environment only; it is never part of the model identity, the
manifest, the store or any log line, and every error message is scrubbed of it (and of anything
shaped like a key) before it leaves the backend.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import email.utils
import functools
import importlib.util
import json
import logging
import math
import mimetypes
import os
import random
import ssl
import sys
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx2
import jiter
import openai

from lmmprobe._mapping_file import decimal_number
from lmmprobe._secrets import shown_spec
from lmmprobe.models._images import PayloadTooLargeError, data_urls, image_key, images_problem
from lmmprobe.models.api_keys import (
    KEY_REACH,
    key_env_name,
    resolve_api_key,
    scrub_answer,
    scrub_cut_end,
    scrub_secrets,
    scrubbed_message,
    scrubbed_value,
)
from lmmprobe.models.base import (
    AuthenticationError,
    BadRequestError,
    Capabilities,
    ConnectionFailedError,
    EmptyResponseError,
    MalformedReplyError,
    ModelError,
    ModelIdentity,
    ModelNotFoundError,
    ModelTimeoutError,
    RateLimitError,
    SpendGuard,
    TransientError,
    UnreachableError,
    UnreadableReplyError,
    UnsupportedInputError,
)
from lmmprobe.schema import (
    MAX_REPLY_CHARS,
    MAX_TOKEN_COUNT,
    ErrorInfo,
    Message,
    Request,
    Response,
    Usage,
    token_count,
)
from lmmprobe.schema.text import ascii_integer, shown_value
from lmmprobe.spec import OptionScalar, parse_option_map

log = logging.getLogger(__name__)

CONNECTIONS_PER_CLIENT = 4
"""Connections per httpx client: its pool scans every pooled connection on each request."""

TRANSPORTS: Final = ("auto", "aiohttp", "httpx")
"""Values of the ``transport`` option (`chat_client`)."""

REASONING_EFFORTS: Final = ("none", "minimal", "low", "medium", "high", "xhigh")
"""Values of ``reasoning_effort`` (the Chat Completions parameter's, as openai 2.x knows them)."""

REASONING_FIELDS: Final = ("reasoning_content", "reasoning")
"""Message fields servers send thinking in, in the order they are looked for."""

ATTEMPT_SLACK_S: Final = 1.0
"""Seconds an attempt may run past ``timeout`` before it is cut (`OpenAIChatModel._one`)."""

MAX_ERROR_BYTES: Final = 64 << 10
"""The most bytes read (decoded: after any decompression) of an HTTP error's body: the client
reads it whole to quote the server's message, which is a line, and only 300 characters of it
are kept (`_status_text`)."""

HOSTED_API: Final = "https://api.openai.com/v1"
"""Where a spec without a server URL sends its requests: the hosted OpenAI API."""

MAX_FINISH_REASON_CHARS: Final = 64
"""How much of a reply's ``finish_reason`` is kept: it is a word (``stop``, ``length``); a
longer one is cut, ending ``... (N characters)``."""
MAX_REPLY_BYTES: Final = 16 << 20
"""The most bytes of a reply's body read: room for an answer and its thinking of
`MAX_REPLY_CHARS` characters each written as JSON escapes (6 bytes a character), with the rest
of the body. A server that sends more (one that ignored ``max_tokens``) is read no further: what
was read is parsed as far as it goes, the answer cut there (`OpenAIChatModel._response`)."""


@dataclass(frozen=True)
class OpenAIOptions:
    """Parsed backend options (see the module docstring)."""

    model: str
    base_url: str | None = None
    key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 16
    timeout: float = 60.0
    max_attempts: int = 6
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_image_pixels: int = 1024 * 1024
    image_format: str = "png"
    max_request_image_bytes: int = 50_000_000
    send_seed: bool = True
    max_tokens_param: str = "max_tokens"
    top_logprobs: int = 20
    max_requests: int | None = None
    max_tokens_total: int | None = None
    unreachable_after: int = 20
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    chat_template_kwargs: Mapping[str, OptionScalar] | None = None
    video: str = "frames"
    images: bool = True
    transport: str = "auto"


def _whole(text: str) -> int:
    """An option's whole number, in ASCII digits: ``int()`` also reads ``٣`` (3) and ``1_0``."""
    value = ascii_integer(text.strip())
    if value is None:
        raise ValueError(f"not a whole number in digits: {text!r}")
    return value


def _decimal(text: str) -> float:
    """An option's number in plain decimal (`decimal_number`): ``float()`` reads ``1_0`` as 10."""
    value = decimal_number(text)
    if value is None and text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        value = float(text)  # a number, refused by the option's range in its own words
    if value is None:
        raise ValueError(f"not a number in decimal digits: {text!r}")
    return value


_CONVERT: dict[str, Any] = {
    "key_env": key_env_name,
    "max_concurrency": _whole,
    "timeout": _decimal,
    "max_attempts": _whole,
    "backoff": _decimal,
    "max_backoff": _decimal,
    "max_image_pixels": _whole,
    "image_format": str,
    "max_request_image_bytes": _whole,
    "send_seed": lambda v: v.lower() in ("1", "true", "yes"),
    "max_tokens_param": str,
    "top_logprobs": _whole,
    "max_requests": _whole,
    "max_tokens_total": _whole,
    "unreachable_after": _whole,
    "reasoning_effort": str,
    "thinking_budget": _whole,
    "chat_template_kwargs": lambda v: parse_option_map(v, "chat_template_kwargs"),
    "video": str,
    "images": lambda v: v.lower() in ("1", "true", "yes"),
    "transport": str,
}


MAX_SECONDS: Final = 604_800.0
"""The longest a time option (``timeout``, ``backoff``, ``max_backoff``) may be: a week. Past
that a value is a typo, and an infinite one (or ``1e300``) overflows the clock's timers."""

_RANGES: Final[dict[str, tuple[float, float | None, str]]] = {
    # name: (least, most, what the value is): values that cannot work (a NaN or negative
    # timeout fails every request as the server's fault; 0 reads as "no timeout" to many
    # clients but here cuts each connection at once) are refused at parse, in one line.
    "timeout": (math.ulp(0.0), MAX_SECONDS, "a number of seconds above 0"),
    "backoff": (0.0, MAX_SECONDS, "a number of seconds, 0 or more"),
    "max_backoff": (0.0, MAX_SECONDS, "a number of seconds, 0 or more"),
    # On httpx, each 4 in flight get a client of their own (`OpenAIChatModel._client`).
    "max_concurrency": (1, 10_000, "a whole number, at least 1"),
    # The upper bounds are far past any real use (re-test 9: max_attempts=1e20 and
    # top_logprobs=1000000 passed the parse): a value past one is a typo, found at once.
    "max_attempts": (1, 100, "a whole number, at least 1"),
    "max_image_pixels": (1, 1_000_000_000, "a whole number, at least 1"),
    "max_request_image_bytes": (1, 1_000_000_000, "a whole number of bytes, at least 1"),
    # The OpenAI API takes 0 to 20 (its top_logprobs); a larger one is refused by the server.
    "top_logprobs": (0, 20, "a whole number, 0 or more"),
    "max_requests": (1, 1_000_000_000, "a whole number, at least 1"),
    "max_tokens_total": (1, 10**12, "a whole number, at least 1"),
    "unreachable_after": (0, 1_000_000, "a whole number, 0 (never give up) or more"),
    "thinking_budget": (0, 10_000_000, "a number of tokens, 0 or more"),
}


def check_range(
    where: str, name: str, text: str | None, value: object, least: float, most: float | None,
    what: str,
) -> None:  # fmt: skip
    """Refuse an option's value outside ``[least, most]`` (or not finite) in one line.

    Args:
        where: The backend, first in the message (``openai backend``).
        name: The option's name.
        text: The value as written in the spec (None: the option was not given, nothing to check).
        value: The value parsed.
        least: The smallest value allowed.
        most: The largest value allowed (None: no upper bound).
        what: What a good value is, for the message.

    Raises:
        ValueError: The value is NaN, infinite or out of range.

    """
    if text is None or not isinstance(value, int | float):
        return
    bad = not math.isfinite(value) or value < least or (most is not None and value > most)
    if bad:
        # A whole bound prints whole (1,000,000,000, not 1e+09).
        most_text = "" if most is None else f" and at most {most:,.15g}"
        shown = text if len(text) <= 40 else text[:40] + f"... ({len(text):,} characters)"
        raise ValueError(f"{where}: option {name}={shown!r} must be {what}{most_text}")


def parse_target(target: str | None) -> tuple[str, str | None]:
    """Split ``MODEL@BASE_URL`` (the URL may itself contain ``@``; the first ``@http`` wins)."""
    if not target:
        raise ValueError("the openai backend needs a model name: openai:MODEL[@BASE_URL]")
    at = target.find("@http")
    if at < 0:
        at = target.find("@")
    if at < 0:
        if os.environ.get("OPENAI_BASE_URL", "").strip().rstrip("/") not in ("", HOSTED_API):
            # The openai client sends a spec without a URL to the server this variable names,
            # while the run records the hosted API: answers from elsewhere were stored (and
            # read back by later runs) as the hosted model's (re-test 22). Its value is not
            # shown: it may hold a password.
            raise ValueError(
                f"openai spec {shown_spec(target)!r} names no server, so it means the hosted "
                "OpenAI API, but the environment variable OPENAI_BASE_URL is set and the "
                "openai client would send the requests there: give that server in the spec "
                f"(openai:{shown_spec(target)}@URL), or unset OPENAI_BASE_URL"
            )
        return target, None
    model, url = target[:at], target[at + 1 :]
    if not model or not url:
        raise ValueError(f"openai spec {shown_spec(target)!r}: expected MODEL@BASE_URL")
    problem = url_problem(url)
    if problem is not None:
        # Refused here, before any request: the transports would each fail it their own way
        # (aiohttp after every retry as "connection failed"; httpx as an ExceptionGroup).
        raise ValueError(f"openai spec {shown_spec(target)!r}: the server URL {problem}")
    return model, url.rstrip("/")


def url_problem(url: str) -> str | None:
    """What makes `url` no server's address (a port out of 1-65535, no host), or None.

    The spec's URL is the one place a user writes where requests go: a typo there
    (``:99999``, ``:80a``, ``http:///v1``) can never reach a server, so it is named at once
    rather than found by the first request.
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL": an unclosed "[" in the host
        return f"is not one a request can go to ({exc})"
    if parts.scheme not in ("http", "https"):
        return "must start with http:// or https://"
    # The port as written: after the host (and after a bracketed IPv6 host's "]").
    host_port = parts.netloc.rpartition("@")[2]
    port_text = host_port.rpartition("]")[2].partition(":")[2]
    try:
        port = parts.port  # ASCII digits only: a sign, a space or other digits raise
    except ValueError:
        if "@" not in parts.netloc and "@" in url[len(parts.scheme) + 3 + len(parts.netloc) :]:
            # ``u:pa/ss@h``: the "/" ended the host part, so the password's first part reads
            # as the port. Not quoted: it is the password's.
            return (
                "holds a user or password with a '/', '?' or '#', which ends a URL's host part: "
                "write it percent-encoded (%2F, %3F, %23)"
            )
        if port_text.isascii() and port_text.isdigit():
            return f"has port {shown_value(port_text, 40)}, out of range: a port is 1-65535"
        return f"has port {shown_value(port_text, 40)!r}, not a number: a port is 1-65535"
    if not parts.hostname:
        return "names no host (expected http://HOST[:PORT]/...)"
    if port == 0:
        return "has port 0, which no server listens on: a port is 1-65535"
    return None


def parse_options(target: str | None, options: dict[str, str]) -> OpenAIOptions:
    """Validate the spec's options.

    Raises:
        ValueError: Unknown option or a value of the wrong type.

    """
    model, base_url = parse_target(target)
    unknown = sorted(set(options) - set(_CONVERT))
    if unknown:
        raise ValueError(f"openai backend: unknown option(s) {unknown}; known: {sorted(_CONVERT)}")
    values: dict[str, Any] = {}
    for k, v in options.items():
        try:
            values[k] = _CONVERT[k](v)
        except ValueError as exc:
            # Their own messages say which pair is wrong; key_env's never shows its value.
            if k in ("chat_template_kwargs", "key_env"):
                raise ValueError(f"openai backend: {exc}") from exc
            raise ValueError(f"openai backend: option {k}={shown_value(v)!r} is invalid") from exc
    opts = OpenAIOptions(model=model, base_url=base_url, **values)
    if opts.image_format.lower() not in ("png", "jpeg"):
        raise ValueError("openai backend: image_format must be png or jpeg")
    if opts.video not in ("frames", "url"):
        raise ValueError("openai backend: video must be frames or url")
    if opts.transport not in TRANSPORTS:
        raise ValueError(f"openai backend: transport must be {', '.join(TRANSPORTS)}")
    if opts.transport == "aiohttp" and not aiohttp_installed():
        raise ValueError(
            "openai backend: transport=aiohttp needs aiohttp: pip install 'openai[aiohttp]' "
            "(or leave transport unset: the default httpx transport is used without it)"
        )
    if opts.transport == "aiohttp" and url_credentials(opts.base_url):
        raise ValueError(
            "openai backend: transport=aiohttp cannot send a user or password in the server's "
            "URL beside the API key (aiohttp refuses both): use transport=httpx, or leave it unset"
        )
    if opts.max_tokens_param not in ("max_tokens", "max_completion_tokens"):
        raise ValueError(
            "openai backend: max_tokens_param must be max_tokens or max_completion_tokens"
        )
    if opts.max_concurrency < 1 or opts.max_attempts < 1:
        raise ValueError("openai backend: max_concurrency and max_attempts must be at least 1")
    if opts.unreachable_after < 0:
        raise ValueError("openai backend: unreachable_after must be 0 (never) or more")
    if opts.thinking_budget is not None and opts.thinking_budget < 0:
        raise ValueError("openai backend: thinking_budget must be 0 or more tokens")
    for name, (least, most, what) in _RANGES.items():
        check_range("openai backend", name, options.get(name), values.get(name), least, most, what)
    if opts.reasoning_effort is not None and opts.reasoning_effort not in REASONING_EFFORTS:
        raise ValueError(
            f"openai backend: reasoning_effort={opts.reasoning_effort!r}: must be one of "
            f"{', '.join(REASONING_EFFORTS)}"
        )
    return opts


MAX_RETRY_AFTER_S = 120.0
"""The longest ``Retry-After`` waited before asking again. A server asking for longer (a spent
quota says hours, a hostile one 1e308 s) is not asked again by this run: waiting 120 s five
times per request held a judge 10 minutes before it gave up (re-test 13 #9)."""


def retry_after_seconds(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``Retry-After`` / ``retry-after-ms``), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):  # malformed: fall back to Retry-After
            return max(0.0, float(ms) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):  # not seconds: perhaps an HTTP date
        return max(0.0, float(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError, IndexError):
        # Neither seconds nor an HTTP date (empty, "0x10"): as if none was given. It raised
        # out of the error's reading, and the request was stored as lmmprobe's own fault.
        return None
    return max(0.0, when.timestamp() - time.time())


class AdaptiveLimit:
    """A concurrency limit that halves on rate limiting and grows back one step per window.

    Additive increase, multiplicative decrease: after a 429 the limit halves; after `limit`
    successes in a row it grows by one, up to `maximum`.
    """

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.limit = maximum
        self.in_flight = 0
        self._successes = 0
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self) -> None:
        """Wait for a free slot under the current limit."""
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1

    async def release(self) -> None:
        """Free a slot."""
        cond = self._condition()
        async with cond:
            self.in_flight -= 1
            cond.notify_all()

    def rate_limited(self) -> None:
        """Halve the limit (never below one)."""
        self.limit = max(1, self.limit // 2)
        self._successes = 0
        log.warning("rate limited: concurrency lowered to %d", self.limit)

    def succeeded(self) -> None:
        """Count a success; grow the limit by one after `limit` of them."""
        self._successes += 1
        if self.limit < self.maximum and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0


def _classify(exc: BaseException, key_hint: str, model_hint: str = "") -> ModelError:
    """Map an openai client exception to our typed errors (which decide retrying).

    `key_hint` is appended to authentication errors: it says which variable to check;
    `model_hint` to a 404 (`ModelNotFoundError`): it names the model asked for.
    """
    if isinstance(exc, openai.RateLimitError):
        return RateLimitError(_brief(exc), retry_after=retry_after_seconds(exc))
    if isinstance(exc, openai.APITimeoutError):
        if isinstance(exc.__cause__, httpx2.ConnectTimeout):
            return ConnectionFailedError(f"connection failed: {_cause(exc)}")
        return ModelTimeoutError(f"no answer within the timeout: {_brief(exc)}")
    if isinstance(exc, openai.APIConnectionError):
        return ConnectionFailedError(f"connection failed: {_cause(exc)}")
    if isinstance(exc, openai.APIStatusError):
        code, text = exc.status_code, _status_text(exc)
        if 300 <= code < 400:
            where = scrub_secrets(exc.response.headers.get("location", "nowhere"))
            where = where if len(where) <= 300 else where[:300] + "..."
            return BadRequestError(
                f"HTTP {code}: the server redirects to {where}, and lmmprobe follows no "
                "redirect: give that URL as the model's base URL if it is the API's"
            )
        if code >= 500:
            return TransientError(f"HTTP {code}: {text}")
        if code in (401, 403):
            return AuthenticationError(f"HTTP {code}: {text}; {key_hint}")
        if code == 404:
            # The server's sentence ends where the hint begins: its full stop would read ".;".
            said = text[:-1] if text.endswith(".") and not text.endswith("..") else text
            return ModelNotFoundError(
                f"HTTP 404: {said}; {model_hint}" if model_hint else f"HTTP 404: {text}"
            )
        return BadRequestError(f"HTTP {code}: {text}")
    # A 200 whose body is not a chat completion (malformed JSON, missing fields): the server
    # misbehaved once; trying again is reasonable.
    return TransientError(f"malformed response: {type(exc).__name__}: {_brief(exc)}")


def _brief(exc: BaseException, limit: int = 300) -> str:
    # Scrubbed before it is cut: a cut through an echoed key would hide it from the scrubber.
    text = scrub_secrets(str(exc)) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _status_text(exc: openai.APIStatusError) -> str:
    """The server's own error message (OpenAI's ``{"error": {"message": ...}}``) when it sent one."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, str) and message:
        message = scrub_secrets(message)  # before the cut, as in `_brief`
        return message if len(message) <= 300 else message[:300] + "..."
    return _brief(exc)


def _cause(exc: BaseException) -> str:
    """The transport error under the client's generic "Connection error." (refused, reset...)."""
    cause = exc.__cause__
    return _brief(cause) if cause is not None else _brief(exc)


class _Reachability:
    """Consecutive failed connection attempts across all of a backend's requests.

    An attempt only counts when it was sent after the current run of failures began: requests
    already in flight when a network blip starts fail together and count once, so a burst of
    concurrency cannot by itself make a live server look dead. Any HTTP answer resets the count.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.failures = 0
        self._since: float | None = None

    def answered(self) -> None:
        """The server answered (any status): it is reachable."""
        self.failures, self._since = 0, None

    def failed(self, sent_at: float) -> bool:
        """Count a failed attempt sent at `sent_at`; True once the server counts as down."""
        if self._since is None:
            self._since, self.failures = time.monotonic(), 1
        elif sent_at >= self._since:
            self.failures += 1
        return 0 < self.limit <= self.failures


@functools.cache
def aiohttp_installed() -> bool:
    """Whether the openai client's aiohttp transport can be had (``openai[aiohttp]``)."""
    if importlib.util.find_spec("aiohttp") is None:  # looked up without importing it
        return False
    try:
        # The client raises this at construction when its transport cannot be imported (an
        # aiohttp older than it takes). verify=False: no CA bundle loaded for the probe.
        openai.DefaultAioHttpClient(verify=False)
    except RuntimeError:
        return False
    return True


def url_credentials(base_url: str | None) -> bool:
    """Whether `base_url` carries a user or password (``http://user:pw@host/v1``)."""
    if not base_url:
        return False
    try:
        parts = urllib.parse.urlsplit(base_url)
    except ValueError:
        return False  # not a URL the client could send to anyway: its own error says so
    return parts.username is not None or parts.password is not None


def uses_aiohttp(transport: str, base_url: str | None = None) -> bool:
    """Whether `chat_client` builds its client on aiohttp for this ``transport`` option.

    Not for a URL with credentials under ``auto``: httpx sends them as Basic authentication,
    while aiohttp refuses them beside the client's ``Authorization`` header (``Cannot combine
    AUTHORIZATION header with ... credentials encoded in URL``) and every request would fail.
    """
    if transport == "auto":
        return aiohttp_installed() and not url_credentials(base_url)
    return transport == "aiohttp"


def chat_client(
    key: str,
    base_url: str | None,
    timeout: float,
    *,
    verify: ssl.SSLContext | None = None,
    transport: str = "auto",
    connections: int = CONNECTIONS_PER_CLIENT,
) -> openai.AsyncOpenAI:
    """A client for `post_chat`: no retries of its own, no redirect followed, errors capped.

    Args:
        key: The API key (``EMPTY`` for a local server that needs none).
        base_url: The server's base URL (None: the OpenAI API).
        timeout: Seconds for each connect and read (`post_chat` bounds the whole exchange).
        verify: The TLS context (None: a fresh one from the CA bundle, ~35 ms to load).
        transport: ``aiohttp`` (the openai client's own aiohttp transport), ``httpx`` (its
            default), or ``auto``: aiohttp when installed (`uses_aiohttp`), else httpx.
        connections: The most connections kept open (aiohttp: the most open at once).

    """
    # One HTTP client, whichever transport: the openai client builds each request and raises
    # its status errors itself, and `_cap_error_body` caps an error's body, in the same code.
    # aiohttp's pool and C parser replace httpcore's per-request pool scan, h11 events and
    # separate writes of the headers and the body (benchmarks/api_throughput.py).
    kind = (
        openai.DefaultAioHttpClient
        if uses_aiohttp(transport, base_url)
        else openai.DefaultAsyncHttpxClient
    )
    return openai.AsyncOpenAI(
        api_key=key,
        # Never None: the client would read $OPENAI_BASE_URL, a server no spec names.
        base_url=base_url or HOSTED_API,
        max_retries=0,  # retries are the caller's: typed, bounded, Retry-After aware
        timeout=timeout,
        http_client=kind(
            verify=httpx2.create_ssl_context() if verify is None else verify,
            # An API does not redirect a POST; following one would send the prompt and
            # images to wherever a server points (`_classify`).
            follow_redirects=False,
            # aiohttp reads max_connections (None there would be its default of 100) and
            # keeps every idle one; httpx opens without bound and keeps max_keepalive.
            limits=httpx2.Limits(
                max_connections=connections if kind is openai.DefaultAioHttpClient else None,
                max_keepalive_connections=connections,
            ),
            event_hooks={"response": [_cap_error_body]},
        ),
    )


async def post_chat(
    client: openai.AsyncOpenAI,
    body: Mapping[str, Any],
    timeout: float,
    *,
    limit: int = MAX_REPLY_BYTES,
    answered: Callable[[], None] | None = None,
) -> tuple[bytes, bool]:
    """POST one chat-completions request; its reply's body (decoded, at most `limit` bytes).

    The whole exchange, headers and body, is bounded by `timeout` (and `ATTEMPT_SLACK_S`), not
    each read: a server that trickles a byte, a header line or a ``102 Processing`` at a time
    would hold it forever. A second more, so that the client's own connect timeout (the same
    value) fires first where it applies: a host that never answers counts as down.

    Args:
        client: A `chat_client` (no redirects followed, error bodies capped).
        body: The request's JSON body.
        timeout: Seconds the whole exchange may take.
        limit: The most bytes of the reply's body read (decoded: after any decompression).
        answered: Called once the server has sent its reply's status and headers.

    Returns:
        The body read and whether the server sent more (see `reply_json`).

    Raises:
        TimeoutError: The reply was not complete within `timeout`.
        openai.APIError: An HTTP error status (a redirect among them), or the transport failed
            (`chat_error` turns each into a typed error).

    """
    async with asyncio.timeout(timeout + ATTEMPT_SLACK_S):
        # client.post is the client's documented route for raw bodies: it skips create()'s
        # recursive parameter transform (which walks every base64 image) and, returning the
        # raw response, the construction of typed result models; together they were most of
        # the client-side CPU per request. Status errors are still raised by the client as
        # openai.APIStatusError subclasses. Streamed, so the body is read here, a chunk at a
        # time and only so far (`_read_body`): a server's reply is outside text of any length.
        with _aiohttp_errors_as_transport_failures(client.base_url):
            raw = await client.post(
                _chat_url(client.base_url), body=body, cast_to=httpx2.Response, stream=True
            )
            if answered is not None:
                answered()
            return await _read_body(raw, limit)


@contextlib.contextmanager
def _aiohttp_errors_as_transport_failures(url: httpx2.URL) -> Iterator[None]:
    """The errors aiohttp's transport leaves unmapped, raised as the client's transport failure.

    The aiohttp transport maps its connection, timeout and payload errors to httpx's, but not
    `aiohttp.ClientResponseError`, which its parser raises for a reply that is no HTTP (a bad
    status line or chunk size, a header line past 8,190 bytes, too many headers, Content-Length
    twice): that escaped the client as an "internal" error (lmmprobe's fault), neither retried
    nor counted towards the server's being down, where httpx's own parser gives a connection
    failure (re-test 17). Its message is kept, without aiohttp's "400," that no server sent.
    """
    try:
        yield
    except Exception as exc:
        aiohttp = sys.modules.get("aiohttp")  # none raised where it was never imported
        if aiohttp is None or not isinstance(exc, aiohttp.ClientError):
            raise
        request = httpx2.Request("POST", url)
        said = getattr(exc, "message", None)
        cause = httpx2.RemoteProtocolError(said if isinstance(said, str) else str(exc))
        cause.__cause__ = exc
        raise openai.APIConnectionError(request=request) from cause


def _chat_url(base_url: httpx2.URL) -> str:
    """The chat-completions URL under `base_url`, as the client would join it for each request.

    Given whole, the client parses it once rather than twice (a relative path, then the joined
    URL), per request. A base URL with a query is left to the client's own joining.
    """
    return "/chat/completions" if base_url.query else _joined_chat_url(str(base_url))


@functools.lru_cache(maxsize=64)
def _joined_chat_url(base_url: str) -> str:
    # The client's own join (`_prepare_url`): the base's path, which it keeps ending in "/",
    # with the relative path appended; nothing resolved or re-encoded.
    base = httpx2.URL(base_url)
    return str(base.copy_with(raw_path=base.raw_path + b"chat/completions"))


def reply_json(body: bytes, cut: bool) -> Any:
    """A reply's body (`post_chat`) as JSON; when `cut`, what its first bytes hold.

    Raises:
        ValueError: It is not JSON (as far as it goes), or nested too deep to read.

    """
    return _body_json(body, cut)


def chat_error(exc: BaseException, key_hint: str) -> ModelError:
    """The typed error of a failed `post_chat`, or of a reply `reply_json` could not read.

    Its ``type`` names the failure and ``retryable`` says whether asking again may help;
    `key_hint` ends an ``auth`` error's message.
    """
    return _classify(exc, key_hint)


class OpenAIChatModel:
    """An OpenAI-compatible chat-completions backend (async)."""

    def __init__(self, opts: OpenAIOptions, *, api_key: str | None = None) -> None:
        self.opts = opts
        # `api_key`: a key the caller holds (a served model's own), never in the environment.
        self._key = resolve_api_key(opts.key_env, opts.base_url) if api_key is None else api_key
        identity: dict[str, Any] = {
            "base_url": opts.base_url,
            "max_image_pixels": opts.max_image_pixels,
            "image_format": opts.image_format.lower(),
        }
        # The thinking options change what the model writes, so they key its answers; only
        # when set, so the identities (and stored answers) of runs without them stay as they were.
        identity.update(_thinking_request_fields(opts))
        if opts.video == "url":
            # The server samples the video itself: other inputs than frames. Only when set,
            # so the identities (and stored answers) of frame-sending specs stay as they were.
            identity["video"] = "url"
        self.identity = ModelIdentity(backend="openai", name=opts.model, options=identity)
        self.capabilities = Capabilities(
            images=opts.images,
            video=opts.video == "url",
            likelihood=False,
            mark_logprobs=True,
            multi_image=True,
            max_batch_size=1,
            is_async=True,
            max_concurrency=opts.max_concurrency,
        )
        self.limit = AdaptiveLimit(opts.max_concurrency)
        self.reachability = _Reachability(opts.unreachable_after)
        self.requests_sent = 0
        """Attempts sent, retries included."""
        self.spend_guard: SpendGuard | None = None
        """Set by the runner under ``--max-cost`` (`lmmprobe.models.base.MeteredModel`)."""
        self.tokens_used = 0
        self.usage_faults = 0
        """Token counts in replies' ``usage`` that were no counts (clamped or read as unknown)."""
        self.replies_cut = 0
        """Replies longer than lmmprobe reads (`MAX_REPLY_BYTES`, `MAX_REPLY_CHARS`), cut."""
        self._clients: dict[int, list[openai.AsyncOpenAI]] = {}
        self._turn = 0
        self._ssl: ssl.SSLContext | None = None
        self._jitter = random.Random()

    def __repr__(self) -> str:  # the key must never show up in a repr or a log line
        return f"OpenAIChatModel(model={self.opts.model!r}, base_url={self.opts.base_url!r})"

    def _client(self) -> openai.AsyncOpenAI:
        # One set of clients per event loop: the runner uses a fresh loop per model run, and an
        # HTTP client cannot move between loops. On httpx, requests are spread over several
        # clients because httpx scans every pooled connection on each request; pools of at most
        # CONNECTIONS_PER_CLIENT keep that scan from dominating CPU at high concurrency.
        # aiohttp's pool takes an idle connection without a scan: one client holds them all.
        loop_id = id(asyncio.get_running_loop())
        clients = self._clients.get(loop_id)
        if clients is None:
            opts = self.opts
            if uses_aiohttp(opts.transport, opts.base_url):
                n, per_client = 1, opts.max_concurrency
            else:
                n = max(1, math.ceil(opts.max_concurrency / CONNECTIONS_PER_CLIENT))
                per_client = CONNECTIONS_PER_CLIENT
            if self._ssl is None:
                # Loading the CA bundle costs ~35 ms; do it once, not once per client.
                self._ssl = httpx2.create_ssl_context()
            clients = [
                chat_client(
                    self._key,
                    opts.base_url,
                    opts.timeout,
                    verify=self._ssl,
                    transport=opts.transport,
                    connections=per_client,
                )
                for _ in range(n)
            ]
            self._clients[loop_id] = clients
        self._turn += 1
        return clients[self._turn % len(clients)]

    async def aclose(self) -> None:
        """Close the HTTP clients of the running event loop (and log the usage faults)."""
        if self.usage_faults > 1:
            log.warning(
                "%s: %d token counts in the server's usage fields were no counts (clamped or "
                "read as unknown)",
                self.opts.model,
                self.usage_faults,
            )
        self.usage_faults = 0
        if self.replies_cut > 1:
            log.warning(
                "%s: %d replies were longer than lmmprobe reads and were cut",
                self.opts.model,
                self.replies_cut,
            )
        self.replies_cut = 0
        for client in self._clients.pop(id(asyncio.get_running_loop()), []):
            await client.close()

    # -- protocol -------------------------------------------------------------------------

    async def agenerate(self, requests: Sequence[Request]) -> list[Response]:
        """Generate an answer for each request."""
        return await self._each(requests, logprobs=False)

    async def aloglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Chat APIs do not score arbitrary continuations."""
        raise UnsupportedInputError(
            "chat-completion APIs cannot score continuations; use --method mark_logprob"
        )

    async def amark_logprobs(self, requests: Sequence[Request]) -> list[Response]:
        """Log-probability of each option mark as the first answer token."""
        return await self._each(requests, logprobs=True)

    async def _each(self, requests: Sequence[Request], *, logprobs: bool) -> list[Response]:
        if len(requests) == 1:
            # The runner's batches are of one request (max_batch_size=1): awaited in the
            # caller's task, not wrapped in a task and a gather of its own.
            return [await self._one(requests[0], logprobs=logprobs)]
        return list(await asyncio.gather(*(self._one(r, logprobs=logprobs) for r in requests)))

    # -- one request ----------------------------------------------------------------------

    def _video_frames(self, request: Request) -> int:
        """How many of the request's first images are sent as one ``video_url`` (0: none).

        Its video's frames with ``video=url``, unless texts stand between them
        (`Request.frames_interleaved`): a server samples a ``video_url`` itself, so frames
        placed among texts are sent as images, each in its place.
        """
        if self.opts.video != "url" or request.frames_interleaved:
            return 0
        return request.video_frames

    def _messages(self, request: Request) -> list[dict[str, Any]]:
        # The images' count and pixels were checked from their headers (`_one`).
        urls = self._image_urls(request)
        out: list[dict[str, Any]] = []
        for m in request.messages:
            out.append({"role": m.role, "content": self._content(m, request, urls)})
        if request.response_prefix:
            # A trailing assistant message is how chat APIs take a prefill; servers that cannot
            # continue it answer after it, which the answer parser handles the same way.
            out.append({"role": "assistant", "content": request.response_prefix})
        return out

    def _image_urls(self, request: Request) -> dict[str, str]:
        """Each distinct picture's data URL, by `image_key`, once all the request sends fits.

        Raises:
            UnsupportedInputError: The images as sent are over ``max_request_image_bytes``
                (re-test 7 #7: one 15 MB picture listed 100 times built a 2 GB request).

        """
        frames = self._video_frames(request)  # sent as the video
        listed = [
            request.images[p.image]
            for m in request.messages
            for p in m.content
            if p.type == "image" and p.image is not None and p.image >= frames
        ]
        cap = self.opts.max_request_image_bytes
        try:
            return data_urls(
                listed, max_pixels=self.opts.max_image_pixels, fmt=self.opts.image_format,
                max_bytes=cap,
            )  # fmt: skip
        except PayloadTooLargeError as exc:
            raise UnsupportedInputError(
                f"sample {request.sample_id}: {exc} (max_request_image_bytes={cap}; each "
                "listing of a picture is sent, base64-encoded): list fewer or smaller images, "
                "or raise max_request_image_bytes for a server that takes more"
            ) from None

    def _content(self, m: Message, request: Request, urls: dict[str, str]) -> Any:
        if all(p.type == "text" for p in m.content):
            return m.text
        parts: list[dict[str, Any]] = []
        frames = self._video_frames(request)
        for p in m.content:
            if p.type == "text":
                parts.append({"type": "text", "text": p.text or ""})
                continue
            assert p.image is not None
            if p.image < frames:  # the video's frames: the video itself, in the first's place
                if p.image == 0:
                    parts.append(
                        {"type": "video_url", "video_url": {"url": self._video_url(request)}}
                    )
                continue
            # One encoding per picture: a sample listing a file again sends the same URL.
            key = image_key(request.images[p.image])
            parts.append({"type": "image_url", "image_url": {"url": urls[key]}})
        return parts

    def _video_url(self, request: Request) -> str:
        """What a ``video_url`` part points to: the video's URL, or its file as a data URL.

        Raises:
            UnsupportedInputError: The sample asks about a clip (start or end), which a
                ``video_url`` cannot say, or the file is over ``max_request_image_bytes``.

        """
        video = request.video
        assert video is not None
        if video.start is not None or video.end is not None:
            raise UnsupportedInputError(
                f"sample {request.sample_id}: a video_url sends the whole video, and the "
                "sample asks about a clip of it (start/end); use video=frames for it"
            )
        if video.url is not None:
            return video.url
        assert video.path is not None
        cap = self.opts.max_request_image_bytes
        size = os.path.getsize(video.path)
        if (size + 2) // 3 * 4 > cap:
            raise UnsupportedInputError(
                f"sample {request.sample_id}: video {video.path} is {size:,} bytes, over "
                f"max_request_image_bytes={cap} once base64-encoded; serve it at a URL, or "
                "use video=frames"
            )
        mime = mimetypes.guess_type(video.path)[0] or "video/mp4"
        with open(video.path, "rb") as f:
            data = base64.b64encode(f.read(size)).decode("ascii")
        return f"data:{mime};base64,{data}"

    def _params(self, request: Request, logprobs: bool) -> dict[str, Any]:
        g = request.gen
        params: dict[str, Any] = {
            "model": self.opts.model,
            "messages": self._messages(request),
            "temperature": g.temperature,
            "top_p": g.top_p,
            self.opts.max_tokens_param: g.max_new_tokens,
        }
        if g.seed is not None and self.opts.send_seed:
            params["seed"] = g.seed
        params.update(_thinking_request_fields(self.opts))
        if logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = self.opts.top_logprobs
        return params

    def _budget_error(self) -> ErrorInfo | None:
        o = self.opts
        if o.max_requests is not None and self.requests_sent >= o.max_requests:
            reason = f"request budget of {o.max_requests} reached (max_requests={o.max_requests})"
        elif o.max_tokens_total is not None and self.tokens_used >= o.max_tokens_total:
            reason = (
                f"token budget of {o.max_tokens_total} reached "
                f"(max_tokens_total={o.max_tokens_total})"
            )
        else:
            return None
        return ErrorInfo(type="budget", message=f"{reason}; re-run to continue", retryable=True)

    def _key_hint(self) -> str:
        var = self.opts.key_env
        if self._key == "EMPTY":
            return f"no key was sent: set the environment variable {var}, then re-run"
        return (
            f"check the API key in the environment variable {var} (or name another with "
            "key_env=VAR), then re-run"
        )

    def _model_hint(self, exc: BaseException) -> str:
        """What a 404 of this backend's server most likely means, naming the model asked for.

        OpenAI (and servers copying it) say ``model_not_found`` for a model name they do not
        serve; another 404 may also be a base URL without its ``/v1``.
        """
        name = self.opts.model
        where = self.opts.base_url or "the OpenAI API"
        if getattr(exc, "code", None) == "model_not_found":
            return (
                f"{where} serves no model {name!r}: the model name is probably misspelt "
                "(GET /models on the server lists the names it serves)"
            )
        return (
            f"{where} has no model {name!r} or no chat completions route: the model name is "
            "probably misspelt, or the base URL lacks its /v1"
        )

    def _unreachable(self, detail: str) -> UnreachableError:
        where = self.opts.base_url or "the OpenAI API"
        return UnreachableError(
            f"cannot reach {where}: {self.reachability.failures} connection attempts in a row "
            f"failed (last: {detail.removeprefix('connection failed: ')}); check that the server "
            "is running and that the URL and port are right, then re-run to resume"
        )

    def _error(
        self,
        request: Request,
        err: ModelError | ErrorInfo,
        t0: float,
        usage: Usage | None = None,
    ) -> Response:
        """The one place an error becomes a stored `Response`: its message is scrubbed of keys.

        Servers echo keys in their messages ("Incorrect API key provided: Bearer sk-..."); the
        message is stored, exported, logged and shown, so it must not carry one. `usage` is
        what the replies received for the request said they cost (paid, though unusable).
        """
        info = err if isinstance(err, ErrorInfo) else err.to_info()
        info = info.model_copy(update={"message": scrub_secrets(info.message)})
        return Response(
            key=request.key, error=info, latency_s=time.perf_counter() - t0, usage=usage
        )

    def _delay(self, attempt: int, err: ModelError) -> float:
        if isinstance(err, RateLimitError) and err.retry_after is not None:
            return min(err.retry_after, MAX_RETRY_AFTER_S)
        base = min(self.opts.max_backoff, self.opts.backoff * 2.0 ** (attempt - 1))
        return base * (0.5 + self._jitter.random())  # jitter spreads synchronized retries

    def _refused(
        self, request: Request, exc: OSError | UnsupportedInputError, t0: float
    ) -> Response:
        """A sample that cannot be sent (its images unreadable or too many), never sent.

        Its error says it never left (``sent=False``): the run counts it apart from the
        requests the server got.
        """
        if isinstance(exc, OSError):
            exc = UnsupportedInputError(f"image could not be read: {exc}")
        return self._error(request, exc.to_info().model_copy(update={"sent": False}), t0)

    async def _one(self, request: Request, *, logprobs: bool) -> Response:
        t0 = time.perf_counter()
        try:
            # From the images' headers, before anything is encoded or a slot is waited for.
            problem = images_problem(request.images)
        except OSError as exc:
            return self._refused(request, exc, t0)
        if problem:  # more images than a request may show
            return self._refused(
                request, UnsupportedInputError(f"sample {request.sample_id}: {problem}"), t0
            )
        err: ModelError | None = None
        # What the replies received said they cost, those found malformed or empty included:
        # each was billed, so the stored response carries the sum (`--max-cost`, the run's cost).
        paid: Usage | None = None
        spent = False
        waits: float | None = None  # a Retry-After past MAX_RETRY_AFTER_S: not asked again
        for attempt in range(1, self.opts.max_attempts + 1):
            budget = self._budget_error()
            if budget is None and self.spend_guard is not None:
                budget = self.spend_guard(request.key, None)  # the run's --max-cost
                if budget is not None and err is not None:
                    # Sent and failed before the money ran out: that failure is its outcome.
                    spent, attempt = True, attempt - 1
                    break
            if budget is not None:
                return self._error(request, budget, t0, paid)
            await self.limit.acquire()
            # The body (its images base64-encoded, up to max_request_image_bytes) is built
            # only once a slot is held, and dropped with the slot (`finally`, the reply that
            # holds the request sent too): at most max_concurrency bodies are alive, whatever
            # the batch's size. Built before the wait, a batch of N held N of them at once.
            # A retry builds its own again: kept over the backoff, it would be held unbounded.
            params: dict[str, Any] | None = None
            try:
                try:
                    params = self._params(request, logprobs)
                except (OSError, UnsupportedInputError) as exc:  # over what a request carries
                    return self._refused(request, exc, t0)
                self.requests_sent += 1
                sent_at = time.monotonic()
                # `timeout` bounds the whole attempt, and the body is read only so far
                # (`post_chat`, shared with APEx's orchestrator).
                body, cut = await post_chat(
                    self._client(), params, self.opts.timeout, answered=self.reachability.answered
                )
                resp = self._reply(request, body, cut, logprobs, time.perf_counter() - t0)
            except ModelError as exc:  # unusable input, or a reply that is empty or malformed
                err = exc
                paid = add_usage(paid, exc.usage)
            except TimeoutError:
                err = ModelTimeoutError(
                    f"no answer within the timeout: the reply was not complete after "
                    f"{self.opts.timeout:g} s"
                )
            except (openai.APIError, ValueError, LookupError, TypeError, AttributeError) as exc:
                err = _classify(exc, self._key_hint(), self._model_hint(exc))
                if isinstance(exc, openai.APIStatusError):
                    self.reachability.answered()
            else:
                self.limit.succeeded()
                usage = add_usage(paid, resp.usage)
                if resp.error is None:
                    return resp if paid is None else resp.model_copy(update={"usage": usage})
                # A refusal quotes the server, so it passes through the scrubbing too.
                return self._error(request, resp.error, t0, usage)
            finally:
                params = None
                await self.limit.release()
            if isinstance(err, ConnectionFailedError) and self.reachability.failed(sent_at):
                # The server looks down: more retries would only add minutes of backoff.
                return self._error(request, self._unreachable(str(err)), t0, paid)
            if (
                self.spend_guard is not None
                and self.spend_guard(request.key, err.usage) is not None
            ):
                spent = True  # the run's --max-cost is spent: asking again would pay again
                break
            if isinstance(err, RateLimitError):
                self.limit.rate_limited()
                if err.retry_after is not None and err.retry_after > MAX_RETRY_AFTER_S:
                    waits = err.retry_after
                    break
            if isinstance(err, EmptyResponseError) and (err.repeatable or attempt >= 2):
                break  # one more try covers a glitch; a model that answers nothing does so again
            if not err.retryable or attempt == self.opts.max_attempts:
                break
            await asyncio.sleep(self._delay(attempt, err))
        assert err is not None
        info = err.to_info()
        if waits is not None:
            info = info.model_copy(
                update={
                    "message": f"{info.message} (the server asks to wait {waits:.6g} s, more "
                    f"than the {MAX_RETRY_AFTER_S:g} s lmmprobe waits: its quota spent? not "
                    "asked again by this run)"
                }
            )
        elif spent:
            info = info.model_copy(
                update={
                    "message": f"{info.message} (after {attempt} attempt(s); not asked again: "
                    "the run's --max-cost is spent)"
                }
            )
        elif err.retryable:
            info = info.model_copy(
                update={
                    "message": f"{info.message} (after {attempt} attempt{'' if attempt == 1 else 's'})"
                }
            )
        return self._error(request, info, t0, paid)

    def _reply(
        self, request: Request, body: bytes, cut: bool, logprobs: bool, latency: float
    ) -> Response:
        """Read a reply's body (`_response`); a cut one that cannot be read is cut output.

        A body longer than `MAX_REPLY_BYTES` whose bytes read hold no answer (a huge field
        before ``choices``, megabytes of blanks before the JSON) is not a malformed reply to ask
        again: the server sends it alike each time, and each is paid. It is an output cut where
        lmmprobe stops reading, before any answer: stored with no text and
        ``finish_reason=length`` (scored ``truncated``, not asked again), as a reply of blanks
        past the limit is.

        Raises:
            ValueError: The body (read whole) is not JSON, or a reply field is out of range.
            LookupError: The body (read whole) is not a chat completion.
            TypeError: The same.
            AttributeError: The same.

        """
        counted = self.replies_cut
        try:
            return self._response(request, _body_json(body, cut), logprobs, latency, cut=cut)
        except (ValueError, LookupError, TypeError, AttributeError):
            if not cut:
                raise
            usage = None
        except (MalformedReplyError, UnreadableReplyError) as exc:
            if not cut:
                raise
            usage = exc.usage
        if self.replies_cut == counted:  # not counted yet by `_response`, which failed later
            self._reply_cut(True, empty=True)
        return Response(
            key=request.key, text="", finish_reason="length", latency_s=latency, usage=usage
        )

    def _response(
        self,
        request: Request,
        data: Any,
        logprobs: bool,
        latency: float,
        *,
        cut: bool = False,
    ) -> Response:
        """Read a chat.completion JSON body (KeyError/TypeError if it is not one).

        `cut`: the body was longer than `MAX_REPLY_BYTES` and `data` is what its first bytes
        hold. The text and the thinking are kept up to `MAX_REPLY_CHARS` each; a reply cut
        either way is stored with ``finish_reason="length"`` and warned about (one whose kept
        text is only blanks is stored with no text: cut off before its answer).

        The usage is read first: a reply that states it was billed, whatever follows, and an
        error raised for the rest of it carries it (`ModelError.usage`).

        Raises:
            MalformedReplyError: The reply is no chat completion (no choices, no message).
            UnreadableReplyError: Its content is in a shape lmmprobe does not read.
            EmptyResponseError: It holds no answer.

        """
        if not isinstance(data, dict):
            raise MalformedReplyError("malformed response: the reply is not a JSON object")
        usage = self._usage(data.get("usage"))
        try:
            return self._choice(request, data, usage, logprobs, latency, cut=cut)
        except ModelError as exc:
            exc.usage = usage
            raise
        except (ValueError, LookupError, TypeError, AttributeError) as exc:
            err = MalformedReplyError(f"malformed response: {type(exc).__name__}: {_brief(exc)}")
            err.usage = usage
            raise err from exc

    def _choice(
        self,
        request: Request,
        data: dict[str, Any],
        usage: Usage | None,
        logprobs: bool,
        latency: float,
        *,
        cut: bool,
    ) -> Response:
        """The first choice of a chat.completion body as a `Response` (see `_response`)."""
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise MalformedReplyError("malformed response: the reply has no choices")
        choice = choices[0]
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            raise MalformedReplyError("malformed response: the reply's choice has no message")
        message = choice["message"]
        content, refusal = message.get("content"), message.get("refusal")
        sent_finish = choice.get("finish_reason")
        # A word (stop, length, tool_calls...): a server's megabytes there were stored whole.
        # Scrubbed before the cut: one through a key kept its first characters (re-test 22).
        finish_reason = (
            scrubbed_value(sent_finish, MAX_FINISH_REASON_CHARS)
            if isinstance(sent_finish, str)
            else None
        )
        read = (
            sent_finish[: MAX_FINISH_REASON_CHARS + KEY_REACH]
            if isinstance(sent_finish, str)
            else ""
        )
        redacted = scrub_secrets(read) != read  # what `scrubbed_value` read of it lost a key
        # As a message quotes it (`_empty`): any other JSON value, cut and scrubbed.
        finish = finish_reason if finish_reason is not None else _short(sent_finish)
        reasoning = _reasoning(message)
        if isinstance(content, list):
            # Content parts (Mistral's reasoning models): text parts are the answer, thinking
            # parts the thinking, kept apart as a reasoning field is.
            content, thinking = content_parts(content)
            reasoning = "\n\n".join(t for t in (reasoning, thinking) if t) or None
        if finish_reason == "content_filter" or (content is None and refusal):
            info = ErrorInfo(
                type="refusal",
                # A refusal's text bounded as a message about bad input is: a server's
                # megabytes there were stored in every such row's error (re-test 21).
                message=f"the API refused: {_refusal_text(refusal)}",
                retryable=False,
            )
            return Response(key=request.key, error=info, latency_s=latency, usage=usage)
        if not isinstance(content, str | None):
            # The server answered, in a shape it will send again: asking again pays again.
            raise UnreadableReplyError(
                f"the reply's content is {_kind(content)}, not text: lmmprobe cannot read an "
                "answer in it (not asked again: the server answers in the same shape)"
            )
        cut_here = (
            cut or len(content or "") > MAX_REPLY_CHARS or len(reasoning or "") > MAX_REPLY_CHARS
        )
        if cut_here:
            plain = [None if t is None else t[:MAX_REPLY_CHARS] for t in (content, reasoning)]
            content, reasoning = _cut_text(content), _cut_text(reasoning)
            redacted = redacted or [content, reasoning] != plain
            finish_reason = "length"
            self._reply_cut(cut, empty=cut and not (content or "").strip() and not reasoning)
        if content is None or not content.strip():
            thought = reasoning or (usage and usage.reasoning_tokens)
            if cut_here or (finish_reason == "length" and thought):
                # An output cut off before its answer (stored empty, scored truncated), not a
                # failed request: cut while thinking, or lmmprobe's own cut left no answer (a
                # reply of blanks past the limit), which as the server's empty reply would be
                # retried and paid again on each resume. The same for mark_logprob: the first
                # answer token it reads never came, and asking again brings the same reply.
                return Response(
                    key=request.key,
                    text="",
                    reasoning=reasoning,
                    finish_reason=finish_reason,
                    redacted=redacted,
                    latency_s=latency,
                    usage=usage,
                )
            used = usage.completion_tokens if usage is not None else None
            raise _empty(content, finish, used=used, limit=request.gen.max_new_tokens)
        if not logprobs:
            return Response(
                key=request.key,
                text=content,
                reasoning=reasoning,
                finish_reason=finish_reason,
                redacted=redacted,
                latency_s=latency,
                usage=usage,
            )
        if not (choice.get("logprobs") or {}).get("content"):
            if cut:  # the log-probabilities come after the text, past what was read
                return Response(
                    key=request.key,
                    text=content,
                    reasoning=reasoning,
                    finish_reason=finish_reason,
                    redacted=redacted,
                    latency_s=latency,
                    usage=usage,
                )
            raise UnsupportedInputError(
                "the server returned no logprobs: it does not support --method mark_logprob "
                "(use --method generate)"
            )
        scores = mark_scores(choice["logprobs"], request.candidates or [])
        return Response(
            key=request.key,
            text=content,
            reasoning=reasoning,
            finish_reason=finish_reason,
            redacted=redacted,
            loglikelihoods=scores,
            token_counts=[1] * len(scores),
            latency_s=latency,
            usage=usage,
        )

    def _usage(self, reported: object) -> Usage | None:
        """The reply's ``usage``, each count read by `token_count`; None when it sent none.

        A usage field is the server's account, not the answer: a huge count is clamped, one
        that is negative, NaN, a string or no number at all read as unknown (and warned
        about), never a reason to throw the answer away and pay for it again.
        """
        if not reported:
            return None
        if not isinstance(reported, dict):
            self._usage_fault(f"usage={_short(reported)}")
            return None
        details = reported.get("completion_tokens_details")
        raw = {
            "prompt_tokens": reported.get("prompt_tokens"),
            "completion_tokens": reported.get("completion_tokens"),
            "reasoning_tokens": (
                details.get("reasoning_tokens") if isinstance(details, dict) else None
            ),
        }
        usage = Usage.model_validate(raw)
        for name, value in raw.items():
            if value is not None and (isinstance(value, bool) or getattr(usage, name) != value):
                self._usage_fault(f"{name}={_short(value)}")
        thought, wrote = usage.reasoning_tokens, usage.completion_tokens
        if thought is not None and wrote is not None and thought > wrote:
            # Reasoning tokens are part of the completion's: more than all of it is no count.
            self._usage_fault(f"reasoning_tokens={thought} above completion_tokens={wrote}")
            usage = usage.model_copy(update={"reasoning_tokens": wrote})
        total = token_count(reported.get("total_tokens"))
        if total is None:
            total = (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
        self.tokens_used += total
        return usage

    def _reply_cut(self, too_many_bytes: bool, *, empty: bool = False) -> None:
        """Count a reply cut to what lmmprobe reads; the first is logged, the total at close.

        `empty`: the bytes read hold no answer text (they are stored as an output cut off
        before its answer, not asked again).
        """
        self.replies_cut += 1
        if self.replies_cut == 1:
            if too_many_bytes:
                what = f"over {MAX_REPLY_BYTES:,} bytes"
                if empty:
                    what += f"; its first {MAX_REPLY_BYTES:,} bytes hold no answer text"
            else:
                what = f"a text over {MAX_REPLY_CHARS:,} characters"
            log.warning(
                "%s: the server sent a reply longer than lmmprobe reads (%s): its text is cut "
                "there and stored as stopped at the token limit (finish_reason=length), not "
                "asked again; does the server honour max_tokens? Further ones are counted, not "
                "logged",
                self.opts.model,
                what,
            )

    def _usage_fault(self, what: str) -> None:
        """Count a token count the server got wrong; the first is logged, the total at close."""
        self.usage_faults += 1
        if self.usage_faults == 1:
            log.warning(
                "%s: the server reported a token count that is no count (%s): one above %d "
                "is read as %d, reasoning tokens above the completion's as the completion's, "
                "anything else (a negative count too) as unknown, as an answer without its "
                "usage is counted; the answer itself is kept. Further ones are counted, not "
                "logged",
                self.opts.model,
                what,
                MAX_TOKEN_COUNT,
                MAX_TOKEN_COUNT,
            )


class _DecodedCappedStream(httpx2.AsyncByteStream):
    """A response's body decoded (``Content-Encoding`` undone), ended after `limit` bytes.

    The rest is never read, nor inflated.
    """

    def __init__(self, encoded: httpx2.Response, limit: int) -> None:
        self._encoded = encoded
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        left = self._limit
        # The client's decoders inflate a bounded step at a time, so stopping here bounds
        # the memory whatever the encodings stacked.
        async with contextlib.aclosing(self._encoded.aiter_bytes()) as chunks:
            async for chunk in chunks:
                yield chunk[:left]
                left -= len(chunk)
                if left <= 0:
                    return

    async def aclose(self) -> None:
        await self._encoded.aclose()


async def _cap_error_body(response: httpx2.Response) -> None:
    """An HTTP error's body is read no further than `MAX_ERROR_BYTES` decoded (a client hook).

    The client reads an error's body whole before it raises; a server's 500 with hundreds of
    megabytes, or a few kilobytes that inflate to gigabytes, would be held in memory, once per
    retry. The body is decoded here, ahead of the client, so the cap counts what it inflates
    to. A cut body that is no longer JSON is quoted as text, as any body that is not JSON is.
    """
    if response.status_code >= 400 and isinstance(response.stream, httpx2.AsyncByteStream):
        encoded = httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=response.stream,
            request=response.request,
        )
        # What the client reads is decoded already: it must not decode it again.
        response.headers.pop("content-encoding", None)
        response.stream = _DecodedCappedStream(encoded, MAX_ERROR_BYTES)


async def _read_body(raw: httpx2.Response, limit: int) -> tuple[bytes, bool]:
    """The first `limit` bytes of a streamed reply's body (decoded), and whether it had more.

    Reading stops there and the connection is closed: a reply of any length costs at most
    `limit` bytes and one decoded chunk. A transport failure while reading is raised as the
    client raises one while it reads a body itself (`openai.APITimeoutError`,
    `openai.APIConnectionError`), so it is classified as before.
    """
    parts: list[bytes] = []
    size = 0
    try:
        async with contextlib.aclosing(raw.aiter_bytes()) as chunks:
            async for chunk in chunks:
                if size + len(chunk) > limit:
                    parts.append(chunk[: limit - size])
                    return b"".join(parts), True
                parts.append(chunk)
                size += len(chunk)
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request=raw.request) from exc
    except (httpx2.RequestError, ssl.SSLError) as exc:
        raise openai.APIConnectionError(request=raw.request) from exc
    finally:
        await raw.aclose()
    return b"".join(parts), False


def _body_json(body: bytes, cut: bool) -> Any:
    """A reply's body as JSON; when `cut`, what its first bytes hold (strings cut where it ends).

    Raises:
        ValueError: It is not JSON (as far as it goes), or nested too deep to read.

    """
    if not cut:
        try:
            return json.loads(body)
        except RecursionError:  # a server's malformed reply, not a fault of ours
            raise ValueError(
                "the reply is JSON nested deeper than Python's recursion limit"
            ) from None
    # The cut may fall inside a UTF-8 sequence: the incremental decoder leaves that tail out.
    text = codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    return jiter.from_json(text.encode("utf-8"), partial_mode="trailing-strings")


def _short(value: object) -> str:
    """A server's value for a log line: scrubbed of keys and cut short."""
    text = scrub_secrets(repr(value))
    return text if len(text) <= 60 else text[:60] + "..."


def _thinking_request_fields(opts: OpenAIOptions) -> dict[str, Any]:
    """The request fields the thinking options add (none when none is set)."""
    fields: dict[str, Any] = {}
    if opts.reasoning_effort is not None:
        fields["reasoning_effort"] = opts.reasoning_effort
    kwargs = dict(opts.chat_template_kwargs or {})
    if opts.thinking_budget is not None:
        fields["thinking_token_budget"] = opts.thinking_budget
        kwargs.setdefault("thinking_budget", opts.thinking_budget)  # an explicit one wins
    if kwargs:
        fields["chat_template_kwargs"] = kwargs
    return fields


def add_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Two replies' usage summed (a count either lacks is the other's; clamped as any count)."""
    if first is None or second is None:
        return first if second is None else second

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        prompt_tokens=plus(first.prompt_tokens, second.prompt_tokens),
        completion_tokens=plus(first.completion_tokens, second.completion_tokens),
        reasoning_tokens=plus(first.reasoning_tokens, second.reasoning_tokens),
    )


THINKING_PARTS: Final = ("thinking", "reasoning")
"""Content part types that hold thinking (Mistral's ``thinking``; ``reasoning`` elsewhere)."""


def content_parts(parts: list[Any]) -> tuple[str | None, str | None]:
    """The answer and the thinking of a message whose content is a list of parts.

    ``{"type": "text", "text": ...}`` parts, joined, are the answer; ``thinking`` parts
    (Mistral: ``{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}``) and
    ``reasoning`` parts are the thinking, never read for the answer.

    Raises:
        UnreadableReplyError: A part of another type, or one without its text: the server
            would answer in the same shape again, so it is not asked again.

    """
    texts: list[str] = []
    thoughts: list[str] = []
    for i, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in THINKING_PARTS:
            thoughts.append(_part_thinking(part, kind))
        else:
            what = f"of type {_short(kind)}" if kind is not None else _kind(part)
            raise UnreadableReplyError(
                f"the reply's content part {i + 1} is {what}, not text or thinking: lmmprobe "
                "cannot read an answer in it (not asked again: the server answers in the same "
                "shape)"
            )
    return ("".join(texts) if texts else None), ("\n\n".join(t for t in thoughts if t) or None)


def _part_thinking(part: dict[str, Any], kind: str) -> str:
    """A thinking part's text: a string, or the text of the text chunks it lists."""
    value = part.get(kind, part.get("text"))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            c["text"]
            for c in value
            if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
        )
    return ""


def _refusal_text(refusal: object) -> str:
    """A reply's ``refusal`` as its stored error quotes it: bounded (`shown_message`)."""
    if isinstance(refusal, str) and refusal:
        return scrubbed_message(refusal)  # scrubbed before the cut, as in `_brief`
    return _short(refusal) if refusal else "content filter"


def _cut_text(text: str | None) -> str | None:
    """An answer or its thinking as a cut reply keeps it: `MAX_REPLY_CHARS`, no part of a key.

    Scrubbed of keys before the cut, and of a key's beginning where the cut (this one, or the
    body's at `MAX_REPLY_BYTES`) went through one: no scrub finds a key's part afterwards.
    """
    if text is None:
        return None
    return scrub_cut_end(scrub_answer(text[: MAX_REPLY_CHARS + KEY_REACH])[:MAX_REPLY_CHARS])


def _kind(value: object) -> str:
    """What a JSON value is, for a message (never the value: it may be megabytes)."""
    names = {dict: "an object", list: "a list", str: "text", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _reasoning(message: dict[str, Any]) -> str | None:
    """The thinking a server sent beside the content (the first of `REASONING_FIELDS` set)."""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _empty(
    content: str | None, finish_reason: object, *, used: int | None = None, limit: int
) -> EmptyResponseError:
    """The error for a completion with no text (null, empty or only whitespace).

    `used` is the completion tokens the server reported and `limit` the ``max_tokens`` sent:
    a length stop below the limit was the server's own (its context length), so raising
    ``--max-new-tokens`` is not advised there.
    """
    what = "null" if content is None else "empty"
    if finish_reason == "length":
        if used is not None and used < limit:
            return EmptyResponseError(
                f"the API returned {what} content: a token limit ran out before any answer "
                f"(finish_reason=length) after {used} of the {limit} tokens asked for: the "
                "server's own limit (its context length) stopped it, not --max-new-tokens",
                repeatable=True,
            )
        # Reasoning models can spend the whole token limit before writing an answer.
        return EmptyResponseError(
            f"the API returned {what} content: the token limit ran out before any answer "
            f"(finish_reason=length); raise --max-new-tokens (this request: {limit})",
            repeatable=True,
        )
    return EmptyResponseError(f"the API returned {what} content (finish_reason={finish_reason})")


def _norm_token(token: str) -> str:
    return token.strip().strip("([*{").strip(")]}.:*").strip()


def mark_scores(logprobs: dict[str, Any] | None, marks: Sequence[str]) -> list[float]:
    """Log-probability of each mark at the first answer position (-inf where absent).

    `logprobs` is a choice's ``logprobs`` object from a chat.completion body. The answer
    position is the first generated token that is not just whitespace or an opening bracket,
    so ``(B)`` and ``B`` are read the same way. Letter marks compare case-insensitively.

    Raises:
        ValueError: The log-probabilities are not in the API's shape (``content`` a list of
            objects, each a ``token`` text and a ``logprob`` number, ``top_logprobs`` a list
            of such), or a mark's log-probability is above 0 or NaN (no log-probability: the
            server's reply is malformed); -inf is a probability of 0, read as absent. Its
            message is one line naming the field, never Python's own wording.

    """
    if not isinstance(logprobs, dict | None):
        raise ValueError(f"the reply's logprobs is {_kind(logprobs)}, not an object")
    content = (logprobs or {}).get("content") or []
    if not isinstance(content, list):
        raise ValueError(f"the reply's logprobs.content is {_kind(content)}, not a list")
    wanted = {m.lower(): i for i, m in enumerate(marks)}
    scores = [-math.inf] * len(marks)
    for at, entry in enumerate(content):
        where = f"logprobs.content[{at}]"
        if not _norm_token(_logprob_token(entry, where)):
            continue  # "(" or " " before the mark
        top = entry.get("top_logprobs") or []
        if not isinstance(top, list):
            raise ValueError(f"the reply's {where}.top_logprobs is {_kind(top)}, not a list")
        for n, cand in enumerate([entry, *top]):
            here = where if n == 0 else f"{where}.top_logprobs[{n - 1}]"
            i = wanted.get(_norm_token(_logprob_token(cand, here)).lower())
            if i is not None:
                value = _logprob_value(cand, here)
                if not value <= 0.0:  # positive, +inf or NaN: it would be scored as sent
                    raise ValueError(
                        f"the log-probability of {_norm_token(cand['token'])[:40]!r} is "
                        f"{value}, which no probability has"
                    )
                scores[i] = max(scores[i], value)
        break
    return scores


def _logprob_token(entry: object, where: str) -> str:
    """The ``token`` of a log-probability entry at `where` (ValueError naming it if none)."""
    if not isinstance(entry, dict):
        raise ValueError(f"the reply's {where} is {_kind(entry)}, not an object")
    token = entry.get("token")
    if not isinstance(token, str):
        raise ValueError(f"the reply's {where}.token is {_kind(token)}, not text")
    return token


def _logprob_value(entry: dict[str, Any], where: str) -> float:
    """The ``logprob`` of an entry at `where` as a float (ValueError naming it if no number).

    A JSON integer too large for a float (``-1`` and 400 zeros) raised OverflowError, which
    no reader caught: an internal error, with its traceback.
    """
    value = entry.get("logprob")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"the reply's {where}.logprob is {_kind(value)}, not a number")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"the reply's {where}.logprob is a number past a float's range") from None


def load(target: str | None, options: dict[str, str]) -> OpenAIChatModel:
    """Registry factory for ``openai:MODEL[@BASE_URL][,option=value...]``."""
    return OpenAIChatModel(parse_options(target, options))
