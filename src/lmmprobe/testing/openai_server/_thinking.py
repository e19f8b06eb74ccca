r"""How the fake server thinks: the ways real servers return a reasoning model's thinking.

Origin: written for lmmprobe from the servers' documented behaviour. A mode is chosen per
request: the header ``X-Fake-Thinking: MODE``, else a model name ending in ``+MODE``
(``fake-vlm+inline``), else the server's default (``FakeOpenAIServer(thinking=...)``).

====================== ===============================================================
mode                   the reply
====================== ===============================================================
``reasoning_content``  thinking in ``message.reasoning_content`` (SGLang with a reasoning
                       parser, DeepSeek's API, vLLM up to 0.10), the answer as content
``reasoning``          thinking in ``message.reasoning`` (vLLM 0.11+, OpenRouter, Ollama)
``inline``             ``<think>\n...\n</think>\n\n`` before the answer in the content
``open``               ``<think>\n...`` and no closing tag, ``finish_reason=length``: the
                       token limit ran out inside the thinking (it goes on to the request's
                       ``max_tokens``, so the reply is as long as the limit)
``closing``            ``...\n</think>\n\n`` before the answer: the chat template opened the
                       block in the prompt (Qwen3-Thinking style), so only its end is output
``hidden``             the answer alone, its thinking only counted in the usage (OpenAI's
                       o-series and gpt-5 keep their reasoning to themselves); cut off inside
                       the thinking, the content is ``""``
====================== ===============================================================

In every mode ``usage.completion_tokens`` counts thinking and answer words, and
``usage.completion_tokens_details.reasoning_tokens`` the thinking words. A request that turns
thinking off (``chat_template_kwargs.enable_thinking=false`` or ``reasoning_effort=none``) is
answered without thinking, as a hybrid model is. The thinking names a wrong option (a trap)
and never the answer, so a reader that looks inside it gets the answer wrong.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Final

THINKING_MODES: Final = ("reasoning_content", "reasoning", "inline", "open", "closing", "hidden")
"""Every thinking mode the fake can answer in (see the module docstring)."""

THINKING_HEADER: Final = "X-Fake-Thinking"
"""The request header that picks a thinking mode for one request."""


def thinking_mode(model: str, header: str | None, default: str | None) -> str | None:
    """The thinking mode of one request: the header's, the model name's suffix, or the default.

    Raises:
        ValueError: The header names no mode of `THINKING_MODES`.

    """
    if header is not None:
        if header not in THINKING_MODES:
            raise ValueError(
                f"{THINKING_HEADER}: {header!r} is not a thinking mode; use one of "
                f"{', '.join(THINKING_MODES)}"
            )
        return header
    _, plus, suffix = model.rpartition("+")
    if plus and suffix in THINKING_MODES:
        return suffix
    return default


def thinking_off(params: dict[str, Any]) -> bool:
    """Whether the request asks a hybrid model not to think."""
    kwargs = params.get("chat_template_kwargs") or {}
    return kwargs.get("enable_thinking") is False or params.get("reasoning_effort") == "none"


def thinking_text(trap: str | None, *, marked: bool) -> str:
    """What the fake "thinks": it considers a wrong answer (`trap`) and never names the right one."""
    if trap is None:
        return "Let me look at the image. I see nothing to describe."
    wrong = f"({trap})" if marked else trap
    return f"Let me look at the image. Is the answer {wrong}? Let me check the colour once more."


@dataclass
class ThoughtReply:
    """The message fields, finish reason and token counts of a thinking reply."""

    message: dict[str, Any]
    finish_reason: str
    completion_tokens: int
    reasoning_tokens: int
    answer_words: list[str]
    """The answer's words that were sent (none when the limit ran out inside the thinking)."""


def thinking_reply(
    mode: str, thinking: str, answer: list[str], max_tokens: int | None
) -> ThoughtReply:
    """The reply in `mode`: thinking first, then the answer, both within `max_tokens` words.

    Args:
        mode: One of `THINKING_MODES`.
        thinking: The thinking text.
        answer: The answer's words.
        max_tokens: The request's token limit (words here), or None.

    """
    thought = thinking.split()
    words = list(answer)
    cut = mode == "open"  # open: the limit always runs out before the thinking ends
    if cut and max_tokens is not None:
        # It thinks on (over the same words) until the limit stops it, as a model that runs
        # out of tokens does: the reply is `max_tokens` long, never shorter than the limit.
        thought = list(itertools.islice(itertools.cycle(thought), max_tokens))
    if max_tokens is not None and len(thought) + len(words) > max_tokens:
        cut = cut or len(thought) >= max_tokens
        thought = thought[:max_tokens]
        words = words[: max(0, max_tokens - len(thought))]
        finish = "length"
    else:
        finish = "length" if cut else "stop"
    if cut:
        words = []
    body = " ".join(thought)
    content: str | None
    message: dict[str, Any] = {"role": "assistant", "refusal": None}
    if mode in ("reasoning_content", "reasoning"):
        message[mode] = body
        content = " ".join(words) if words else None  # vLLM sends null when no answer came
    elif mode == "hidden":
        content = " ".join(words)
    elif mode in ("inline", "open"):
        content = f"<think>\n{body}" + ("" if cut else "\n</think>\n\n" + " ".join(words))
    else:  # closing: the template opened the block
        content = body + ("" if cut else "\n</think>\n\n" + " ".join(words))
    message["content"] = content
    return ThoughtReply(
        message=message,
        finish_reason=finish,
        completion_tokens=len(thought) + len(words),
        reasoning_tokens=len(thought),
        answer_words=words,
    )
