"""What a model backend returns for one request."""

from __future__ import annotations

import math
import operator
from typing import Annotated, Final, SupportsIndex

from pydantic import BaseModel, BeforeValidator, Field

from lmmprobe.schema.text import SafeText

ERROR_TYPES: tuple[str, ...] = (
    "rate_limit",
    "transient",
    "timeout",
    "connection",
    "unreachable",
    "empty_response",
    "budget",
    "out_of_memory",
    "bad_request",
    "not_found",
    "auth",
    "unsupported_input",
    "refusal",
    "internal",
)
"""Known error types; rate_limit, transient, timeout, connection, unreachable, empty_response,
budget and out_of_memory are retryable (see models.base). Every stored error, retryable or not,
is asked again on resume."""


MAX_REPLY_CHARS: Final = 1 << 20
"""The longest answer text (and, apart, thinking) kept of one model reply, in characters: 1 MiB,
far above a model's longest answer with its thinking, and the cap imported predictions are read
with. A backend cuts a longer one there, as a token limit would, and says so
(``finish_reason="length"``)."""


MAX_TOKEN_COUNT: Final = 2**32
"""The most tokens one count of `Usage` holds: far above any context a model has, and low enough
that the store's sums over millions of responses stay within SQLite's 64-bit integers."""


def token_count(value: object) -> int | None:
    """A token count as a backend reported it, read as a count, or None when it is no count.

    Servers are outside text: a count is a whole number (an integral float such as ``12.0``
    too) and one above `MAX_TOKEN_COUNT` counts that much. A negative one is no count a server
    could have billed: it is unknown, as a missing one is, so that it can neither lower a spend
    nor pass as free (read as 0, a server reporting negative prompt tokens was never stopped by
    ``--max-cost``; unknown, its answer is priced as an answer without usage is, see
    `lmmprobe.run.cost`). ``NaN``, infinities, fractions, strings, booleans and anything else
    are not counts either: None, unknown, never a reason to throw the answer away.

    Args:
        value: The reported value (``usage.prompt_tokens`` of a reply, a stored column...).

    Returns:
        The count, between 0 and `MAX_TOKEN_COUNT`, or None.

    """
    # A count as JSON gives it, or none, is read before the protocol check below, which is
    # slow (`typing` walks the protocol's members) and every response's usage reads several.
    if type(value) is int:
        return min(value, MAX_TOKEN_COUNT) if value >= 0 else None
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None
        value = int(value)
    if not isinstance(value, SupportsIndex):  # int, and integer types of numpy or torch
        return None
    count = operator.index(value)
    return min(count, MAX_TOKEN_COUNT) if count >= 0 else None


TokenCount = Annotated[int | None, BeforeValidator(token_count)]
"""A `Usage` count: whatever is given goes through `token_count` first."""


class Usage(BaseModel):
    """Token accounting reported by the backend.

    Each count is read by `token_count`: a huge one is `MAX_TOKEN_COUNT`, and a value that is
    no count (negative, NaN, a string...) None, unknown.
    """

    prompt_tokens: TokenCount = Field(default=None, description="Tokens in the prompt.")
    completion_tokens: TokenCount = Field(
        default=None, description="Tokens generated, reasoning tokens included."
    )
    reasoning_tokens: TokenCount = Field(
        default=None,
        description="Of the tokens generated, those spent thinking, where the backend reports "
        "them (``usage.completion_tokens_details.reasoning_tokens``).",
    )


class ErrorInfo(BaseModel):
    """A failed request. Stored, counted in the error rate, never scored as an answer."""

    type: str = Field(description="One of ERROR_TYPES.")
    message: SafeText = Field(
        description="What went wrong, for a person (lone surrogates a server quoted replaced "
        "by U+FFFD, as in every text field of a `Response`)."
    )
    retryable: bool = Field(description="Whether trying again could succeed.")
    sent: bool = Field(
        default=True,
        exclude_if=lambda v: v,
        description="Whether the request left for the model. False when the backend refused "
        "it before sending anything (its images over what one request may carry or show, "
        "unreadable): the run counts it apart from the requests sent. Not stored (a stored "
        "error reads back True, and is asked again on resume as every error is) and left out "
        "of every dump when True, so stored errors and their files are as before.",
    )


class Response(BaseModel):
    """The outcome of one request: text, candidate scores, or a typed error."""

    key: str = Field(description="The request's cache key.")
    text: SafeText | None = Field(
        default=None,
        description="Generated text as the model sent it (generate requests): inline thinking "
        "(``<think>...</think>``) included, lone surrogates (valid JSON, not valid text) "
        "replaced by U+FFFD (`lmmprobe.schema.text.safe_text`). What is read as the answer is "
        "decided when it is scored (`lmmprobe.parse.thinking`), so a stored answer is re-read "
        "by today's rules.",
    )
    reasoning: SafeText | None = Field(
        default=None,
        description="Thinking the server sent apart from the text (``reasoning_content`` or "
        "``reasoning`` of an OpenAI-compatible reply); None when it sent none.",
    )
    finish_reason: SafeText | None = Field(
        default=None,
        description="Why generation stopped, as the backend says it: ``stop``, ``length`` (the "
        "token limit), ``content_filter``...; None when unknown. ``length`` too when the "
        "backend cut a reply longer than `MAX_REPLY_CHARS` (a server that ignored the limit).",
    )
    loglikelihoods: list[float] | None = Field(
        default=None,
        description="Summed log-probability of each candidate (likelihood requests), or of "
        "each mark as first answer token (mark_logprob; -inf when not among the top tokens).",
    )
    token_counts: list[int] | None = Field(
        default=None, description="Tokens in each candidate, for mean-per-token reduction."
    )
    latency_s: float = Field(default=0.0, ge=0.0, description="Seconds spent on this request.")
    usage: Usage | None = Field(
        default=None, description="Token usage, when the backend reports it."
    )
    error: ErrorInfo | None = Field(default=None, description="Set when the request failed.")
    redacted: bool = Field(
        default=False,
        description="A configured API key was taken out of `text` (replaced by ``[redacted]``) "
        "before the response was stored: the server or model quoted it. Error messages are "
        "always scrubbed and show ``[redacted]`` where a key was.",
    )

    @property
    def ok(self) -> bool:
        """Whether the request succeeded."""
        return self.error is None
