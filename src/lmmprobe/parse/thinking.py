"""Splitting a model's output into its thinking and its answer.

A reasoning model writes its thinking before its answer, inline (``<think>...</think>``) or in
a field of its own (an OpenAI-compatible server's ``reasoning_content``). Only the answer is
ever read for a mark: `split_answer` decides what the answer is, at scoring time, from the raw
text as stored, so a stored response is re-read by today's rules without asking the model
again. The tag pairs it knows and where each comes from are listed in docs/reasoning.md.

The rules (`split_answer`):

- Thinking is only ever at the start of the text (leading whitespace aside). A tag quoted
  later, after answer text, is answer text.
- Several think blocks in a row at the start are all thinking (a model that thinks, closes and
  thinks again); the answer is what follows the last of them.
- A closing tag with no opening tag before it is the end of a think block that the chat
  template opened in the prompt (Qwen3-VL-Thinking, Skywork-R1V...): the text before it is
  thinking.
- An opening tag with no closing tag after it is a cut-off output: ``truncated``, with no answer.
- ``finish_reason == "length"`` with nothing left to read after the thinking is ``truncated`` too.
- GLM-4.1V/4.5V-Thinking wrap their answer in ``<answer>...</answer>`` and the final answer in
  ``<|begin_of_box|>...<|end_of_box|>``: the answer is the text inside the box when there is one,
  else inside ``<answer>``.

Every search is a `str.find` (or `str.startswith`) from a moving position, so a split costs
time linear in the text, whatever it holds (no regular expression over the text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from lmmprobe.schema.text import shown_value
from lmmprobe.spec import THINK_OPTION, SpecError, parse_spec

__all__ = [
    "DEFAULT_TAGS",
    "TagPair",
    "Thought",
    "parse_think_option",
    "split_answer",
    "tags_for_model",
    "thinking_columns",
]

TagPair = tuple[str, str]
"""An (opening, closing) pair of thinking tags."""

DEFAULT_TAGS: tuple[TagPair, ...] = (
    ("<think>", "</think>"),  # Qwen3-VL-Thinking, GLM-4.xV, MiMo-VL, InternVL3.5, Skywork-R1V
    ("◁think▷", "◁/think▷"),  # Kimi-VL-Thinking
    ("[THINK]", "[/THINK]"),  # Magistral (Mistral) reasoning models
)
"""The thinking tags read by default (sources in docs/reasoning.md)."""

# GLM-4.1V/4.5V-Thinking: the answer after the thinking, and the final answer inside it.
_ANSWER_TAGS: TagPair = ("<answer>", "</answer>")
_BOX_TAGS: TagPair = ("<|begin_of_box|>", "<|end_of_box|>")

# The words of ``think=`` that are not a tag pair.
_OFF = ("off", "none", "false", "no")
_DEFAULT = ("on", "auto", "default", "true", "yes")
_OPENED = ("opened",)
"""``think=opened``: the chat template opens a ``<think>`` block in the prompt."""


class Thought(NamedTuple):
    """One output split into what the model thought and what it answered.

    A named tuple: made for every scored row, and cheaper to build than a dataclass.
    """

    reasoning: str | None
    """The thinking: the server's own field and any inline think blocks; None when neither."""
    answer: str
    """The text read for an answer: after thinking, stripped; an output without thinking or
    answer tags as it was sent; empty when the output was cut off."""
    truncated: bool
    """The output stopped before an answer: inside its thinking, or at the token limit with
    nothing after the thinking. A truncated output is never read for a mark."""


def parse_think_option(value: str) -> tuple[TagPair, ...]:
    """The tag pairs a ``think=`` model option names.

    Args:
        value: ``off`` (read the whole text as the answer), ``on``/``auto`` (the default
            pairs), ``opened`` (the chat template opens a ``<think>`` block in the prompt, so
            the output starts inside it: text with no ``</think>`` is thinking, cut off), or
            ``OPEN|CLOSE`` (this pair alone, e.g. ``<reasoning>|</reasoning>``; split at the
            first ``|``, so the opening tag cannot hold one; an empty OPEN, ``|</r>``, is a
            block the template opens, like ``opened``).

    Raises:
        ValueError: The value is none of these (the message says what is accepted).

    """
    text = value.strip()
    if text.lower() in _OFF:
        return ()
    if text.lower() in _DEFAULT:
        return DEFAULT_TAGS
    if text.lower() in _OPENED:
        # An empty opening tag marks the block the template opened (see `split_answer`).
        return (("", DEFAULT_TAGS[0][1]), *DEFAULT_TAGS)
    open_tag, bar, close_tag = text.partition("|")
    open_tag, close_tag = open_tag.strip(), close_tag.strip()
    if not bar or not close_tag:
        raise ValueError(
            f"think={shown_value(value)!r}: expected off, on, opened, or OPEN|CLOSE (the opening and "
            "closing thinking tags, e.g. think=<reasoning>|</reasoning>; |CLOSE when the "
            "template opens the block)"
        )
    if open_tag == close_tag:
        raise ValueError(f"think={shown_value(value)!r}: the opening and closing tags must differ")
    return ((open_tag, close_tag),)


def tags_for_model(model: str) -> tuple[TagPair, ...]:
    """The thinking tags in force for a model, from the ``think=`` option of its spec.

    Args:
        model: The model spec as the run names it (``random,think=off``); a name that is no
            spec (an imported model's name) has no option and gets the default pairs.

    Raises:
        ValueError: The spec's ``think=`` value is not one `parse_think_option` reads.

    """
    return _tags_for_spec(model)


@lru_cache(maxsize=256)
def _tags_for_spec(model: str) -> tuple[TagPair, ...]:
    # Cached: every scored row asks, and a run has a handful of models.
    try:
        options = parse_spec(model, "model").options
    except SpecError:
        return DEFAULT_TAGS  # a model name, not a spec: no options at all
    value = options.get(THINK_OPTION)
    return DEFAULT_TAGS if value is None else parse_think_option(value)


def _skip_space(text: str, at: int) -> int:
    end = len(text)
    while at < end and text[at].isspace():
        at += 1
    return at


def _opening(text: str, at: int, tags: Sequence[TagPair]) -> TagPair | None:
    for pair in tags:
        if text.startswith(pair[0], at):
            return pair
    return None


def _lone_close(text: str, tags: Sequence[TagPair]) -> tuple[int, int] | None:
    """(start, end) of the first closing tag no opening tag of its pair comes before."""
    best: tuple[int, int] | None = None
    for open_tag, close_tag in tags:
        found = text.find(close_tag)
        if found < 0 or (best is not None and found >= best[0]):
            continue
        if text.find(open_tag, 0, found) >= 0:
            continue  # a block opened later in the text: answer text quoting tags
        best = (found, found + len(close_tag))
    return best


def _final_answer(text: str) -> str | None:
    """The answer inside GLM's ``<answer>`` and box markers; None when neither is there."""
    found = False
    start = _skip_space(text, 0)
    if text.startswith(_ANSWER_TAGS[0], start):
        inner = start + len(_ANSWER_TAGS[0])
        end = text.find(_ANSWER_TAGS[1], inner)
        text, found = (text[inner:] if end < 0 else text[inner:end]), True
    box = text.find(_BOX_TAGS[0])
    if box >= 0:
        inner = box + len(_BOX_TAGS[0])
        end = text.find(_BOX_TAGS[1], inner)
        if end >= 0:
            return text[inner:end].strip()
    return text.strip() if found else None


def _marked(text: str, tags: Sequence[TagPair]) -> bool:
    """Whether `text` holds any tag `split_answer` reads (a thinking or a GLM answer tag)."""
    return (
        any(open_tag in text or close_tag in text for open_tag, close_tag in tags)
        or _ANSWER_TAGS[0] in text
        or _BOX_TAGS[0] in text
    )


def split_answer(
    text: str | None,
    *,
    reasoning: str | None = None,
    finish_reason: str | None = None,
    tags: Sequence[TagPair] = DEFAULT_TAGS,
) -> Thought:
    """Split one output into its thinking and its answer (rules in the module docstring).

    Args:
        text: The text as the model sent it (inline thinking included); None reads as "".
        reasoning: Thinking the server sent in a field of its own, if any.
        finish_reason: Why generation stopped (``length``: the token limit), if known.
        tags: The (opening, closing) thinking tags in force; empty reads the whole text as the
            answer (``think=off``).

    Returns:
        The thinking (server field first, then inline blocks), the answer, and whether the
        output was cut off before its answer.

    """
    raw = text or ""
    if not tags:
        # think=off: the whole text is the answer, answer tags included (nothing is read out).
        return Thought(reasoning or None, raw, finish_reason == "length" and not raw.strip())
    # A pair with an empty opening tag (think=opened): the template opened that block in the
    # prompt, so the output starts inside it.
    opened = next((pair for pair in tags if not pair[0]), None)
    tags = [pair for pair in tags if pair[0]]
    if raw and not reasoning and opened is None and not _marked(raw, tags):
        # The common case, a reply with no tag at all: read as sent (a few C-level scans).
        return Thought(None, raw, False)
    thoughts = [reasoning] if reasoning else []
    at = _skip_space(raw, 0)
    cut = False
    if opened is not None and not reasoning and not _opening(raw, at, tags):
        # (A server that sent its thinking apart has already taken the block out of the text.)
        end = raw.find(opened[1])
        if end < 0:  # never closed: all of it is thinking, cut off before an answer
            thoughts.append(raw.strip())
            at, cut = len(raw), True
        else:
            thoughts.append(raw[:end].strip())
            at = _skip_space(raw, end + len(opened[1]))
    elif tags:
        lone = None if _opening(raw, at, tags) else _lone_close(raw, tags)
        if lone is not None:
            thoughts.append(raw[: lone[0]].strip())
            at = _skip_space(raw, lone[1])
    if tags and not cut:
        while (pair := _opening(raw, at, tags)) is not None:
            inner = at + len(pair[0])
            end = raw.find(pair[1], inner)
            if end < 0:
                thoughts.append(raw[inner:].strip())
                at, cut = len(raw), True
                break
            thoughts.append(raw[inner:end].strip())
            at = _skip_space(raw, end + len(pair[1]))
    if cut:
        answer = ""
    elif (final := _final_answer(raw[at:])) is not None:
        answer = final
    else:
        # An output without thinking reaches the matchers exactly as before.
        answer = raw[at:].strip() if thoughts else raw
    truncated = cut or (finish_reason == "length" and not answer)
    thinking = "\n\n".join(t for t in thoughts if t) or None
    return Thought(reasoning=thinking, answer=answer, truncated=truncated)


def thinking_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``reasoning`` and ``answer`` of one exported row, read as scoring reads them.

    Args:
        row: A row of `lmmprobe.store.Store.iter_score_rows`: its ``model`` (whose ``think=``
            option is in force), raw ``text``, the server's ``reasoning`` and ``finish_reason``.

    Returns:
        ``reasoning``: the thinking (the server's and inline blocks), ``answer``: the text read
        for an answer, None for a row with no generated text (an error, a likelihood ranking);
        ``truncated`` says the output was cut off before its answer.

    Raises:
        ValueError: The model's ``think=`` value cannot be read.

    """
    text = row.get("text")
    if text is None:
        return {"reasoning": row.get("reasoning"), "answer": None, "truncated": None}
    thought = split_answer(
        text,
        reasoning=row.get("reasoning"),
        finish_reason=row.get("finish_reason"),
        tags=tags_for_model(str(row.get("model"))),
    )
    return {
        "reasoning": thought.reasoning,
        "answer": thought.answer,
        "truncated": thought.truncated,
    }
