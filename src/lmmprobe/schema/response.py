"""What a model backend returns for one request."""

from __future__ import annotations

from pydantic import BaseModel, Field

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
    "auth",
    "unsupported_input",
    "refusal",
    "internal",
)
"""Known error types; rate_limit, transient, timeout, connection, unreachable, empty_response,
budget and out_of_memory are retryable (see models.base). Every stored error, retryable or not,
is asked again on resume."""


class Usage(BaseModel):
    """Token accounting reported by the backend."""

    prompt_tokens: int | None = Field(default=None, description="Tokens in the prompt.")
    completion_tokens: int | None = Field(
        default=None, description="Tokens generated, reasoning tokens included."
    )
    reasoning_tokens: int | None = Field(
        default=None,
        description="Of the tokens generated, those spent thinking, where the backend reports "
        "them (``usage.completion_tokens_details.reasoning_tokens``).",
    )


class ErrorInfo(BaseModel):
    """A failed request. Stored, counted in the error rate, never scored as an answer."""

    type: str = Field(description="One of ERROR_TYPES.")
    message: str = Field(description="What went wrong, for a person.")
    retryable: bool = Field(description="Whether trying again could succeed.")


class Response(BaseModel):
    """The outcome of one request: text, candidate scores, or a typed error."""

    key: str = Field(description="The request's cache key.")
    text: str | None = Field(
        default=None,
        description="Generated text as the model sent it (generate requests): inline thinking "
        "(``<think>...</think>``) included. What is read as the answer is decided when it is "
        "scored (`lmmprobe.parse.thinking`), so a stored answer is re-read by today's rules.",
    )
    reasoning: str | None = Field(
        default=None,
        description="Thinking the server sent apart from the text (``reasoning_content`` or "
        "``reasoning`` of an OpenAI-compatible reply); None when it sent none.",
    )
    finish_reason: str | None = Field(
        default=None,
        description="Why generation stopped, as the backend says it: ``stop``, ``length`` (the "
        "token limit), ``content_filter``...; None when unknown.",
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
