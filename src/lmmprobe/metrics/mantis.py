"""Mantis-Eval's answer reading and correctness, as its released evaluation code computes them.

Mantis (Jiang et al. 2024; TIGER-AI-Lab/Mantis ``mantis/benchmark/eval.py`` at `MANTIS_COMMIT`)
scores each answer with ``get_prediction``, reproduced here with its quirks:

- ``parse_answer``: the text after the first ``final answer:``, else after ``the answer is``,
  else after ``answer:`` (case-insensitive, in that order of preference), stripped; else the
  whole answer, unstripped.
- A multi-choice question: the gold answer is stripped of ``()``, line breaks and spaces (and
  cut to its first letter if longer). The chosen option is the letter after a leading
  ``Answer: `` or else the first alphabetic character of the parsed answer, upper-cased; if it
  names one of the options it decides. Otherwise the whole raw answer, stripped, must equal the
  gold option's text (its ``X.``, ``X:`` or ``(X)`` prefix removed).
- A short-answer question: the parsed answer equals the gold answer, case-insensitively.

Departure: a first alphabetic character whose upper case is two characters (``ß``: ``SS``)
makes ``get_prediction`` raise (``ord`` of two characters) and the whole run stop; here it
reads as no option (the raw-text comparison decides).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["MANTIS_COMMIT", "mantis_correct", "mantis_gold_letter", "mantis_parse_answer"]

MANTIS_COMMIT = "f3a319202d882a1794d28440b77bba7c58869a9e"
"""The TIGER-AI-Lab/Mantis commit whose ``mantis/benchmark/eval.py`` is reproduced."""

_MARKERS = ("final answer:", "the answer is", "answer:")
_ANSWER_LETTER = re.compile(r"Answer: [A-Z]")


def mantis_parse_answer(raw: str) -> str:
    """``parse_answer``: the text after the first answer marker found, else `raw` as is."""
    lowered = raw.lower()
    for marker in _MARKERS:
        if marker in lowered:
            # The raw text indexed by the lowered text's position, as the reference does (a
            # character whose lower case is longer shifts it there too).
            return raw[lowered.index(marker) + len(marker) :].strip()
    return raw


def _option(parsed: str) -> str | None:
    """``get_option``: the letter after ``Answer: ``, else the first letter, upper-cased."""
    if _ANSWER_LETTER.match(parsed):
        return parsed[8]
    for ch in parsed:
        if ch.isalpha():
            return ch.upper()
    return None


def mantis_gold_letter(answer: str) -> str | None:
    """The gold letter of a multi-choice question as ``get_prediction`` cuts it; None: no letter."""
    ref = answer.strip("()\n ")
    if len(ref) != 1:
        ref = next((c for c in ref if c.isalpha()), ref)
    return ref if len(ref) == 1 else None


def mantis_correct(question_type: str, raw: str, answer: str, options: Sequence[str]) -> bool:
    """Whether Mantis's ``get_prediction`` counts `raw` correct.

    Args:
        question_type: ``multi-choice`` or ``short-answer``.
        raw: The model's answer.
        answer: The gold answer as the dataset writes it (``(A)``, ``A``, or a short answer).
        options: The question's options (multi-choice).

    Raises:
        ValueError: A multi-choice gold answer without a single letter (the reference asserts).

    """
    parsed = mantis_parse_answer(raw)
    ref = answer.strip("()\n ")
    if question_type != "multi-choice":
        return ref.lower() == parsed.lower()
    letter = mantis_gold_letter(answer)
    if letter is None:
        raise ValueError(f"Mantis gold answer {answer!r} is not a single letter")
    chosen = _option(parsed)
    if chosen is not None and len(chosen) == 1 and ord(chosen) - ord("A") < len(options):
        return chosen == letter.upper()
    gold_index = ord(letter.upper()) - ord("A")
    if gold_index >= len(options):
        return False
    text = options[gold_index]
    for prefix in (letter + ".", letter + ":", "(" + letter + ")"):
        if text.startswith(prefix):
            return raw.strip() == text[len(prefix) :].strip()
    return raw.strip() == text.strip()
