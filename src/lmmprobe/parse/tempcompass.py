"""TempCompass's multi-choice matching rules, reproduced, and the ``tempcompass`` matcher.

TempCompass's evaluation (llyx97/TempCompass @ e1b4631, ``eval_multi-choice.py``) removes
``</s>`` from the reply and strips it, then rates it by hand-crafted rules in order: the reply
is the gold answer line (``B. dunking a basketball``); the reply is one of the letters A-D;
it starts ``A.`` to ``D.`` (its text before the first dot is the letter); it starts ``A)`` to
``D)``. A reply no rule reads goes to ChatGPT, or with ``--disable_llm`` is rated 0.

Its yes/no task (``eval_yes_no.py``) cleans the reply alike, lower-cases it and reads ``yes``
when it starts with "yes", ``no`` when it starts with "no" (so "nope" and "none" read no), and
sends anything else to ChatGPT (rated 0 with ``--disable_llm``).
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig

__all__ = [
    "TEMPCOMPASS_COMMIT",
    "tempcompass_letter",
    "tempcompass_matcher",
    "tempcompass_yes_no",
    "tempcompass_yes_no_matcher",
]

TEMPCOMPASS_COMMIT = "e1b463166400633e6061962d890a9ae85db29f70"
"""The llyx97/TempCompass commit whose evaluation is reproduced."""

_LETTERS = ("A", "B", "C", "D")


def tempcompass_letter(output: str, option_lines: Sequence[str]) -> str:
    """The letter the rules read from `output`, or ``""`` (the reply goes to the judge).

    Args:
        output: The model's reply.
        option_lines: The options as the question writes them (``A. text``), in order.

    """
    text = output.replace("</s>", "").strip()
    for letter, line in zip(_LETTERS, option_lines, strict=False):
        if text == line:  # the reply is an answer line (the gold one, or another: wrong)
            return letter
    if text in _LETTERS:
        return text
    if any(text.startswith(f"{letter}.") for letter in _LETTERS):
        return text.split(".")[0]
    if any(text.startswith(f"{letter})") for letter in _LETTERS):
        return text.split(")")[0]
    return ""


@MATCHERS.register(
    "tempcompass",
    summary="TempCompass's multi-choice rules (eval_multi-choice.py): the reply is an answer "
    "line, a letter A-D, or starts 'X.' or 'X)'; anything else unparsed (its judge's part)",
)
def tempcompass_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`tempcompass_letter` as a matcher, over the options as shown (``MARK. text``)."""
    if not options:
        return unparsed("no options")
    lines = [f"{m}. {o}" for m, o in zip(marks, options, strict=False)]
    letter = tempcompass_letter(output, lines)
    index = [str(m) for m in marks].index(letter) if letter in marks else -1
    if not 0 <= index < len(options):
        return unparsed("no_match")
    return Extraction(index, "mark", "option letter")


def tempcompass_yes_no(output: str) -> str:
    """``yes`` or ``no`` as ``eval_yes_no.py``'s rules read `output`, or ``""`` (the judge's)."""
    text = output.replace("</s>", "").strip().lower()
    if text.startswith("yes"):
        return "yes"
    if text.startswith("no"):
        return "no"
    return ""


@MATCHERS.register(
    "tempcompass-yes-no",
    summary="TempCompass's yes/no rules (eval_yes_no.py): the reply, lower-cased, starts "
    "'yes' or 'no'; anything else unparsed (its judge's part)",
)
def tempcompass_yes_no_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`tempcompass_yes_no` as a matcher over the options ``yes`` and ``no``."""
    word = tempcompass_yes_no(output)
    shown = [o.strip().lower() for o in options]
    if not word or word not in shown:
        return unparsed("no_match")
    return Extraction(shown.index(word), "text", "yes/no")
