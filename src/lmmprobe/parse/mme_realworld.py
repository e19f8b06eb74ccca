"""MME-RealWorld's answer reading, reproduced exactly, and the ``mme-realworld`` matcher.

lmms-eval (EvolvingLMMs-Lab/lmms-eval @ 75571cf, ``lmms_eval/tasks/mme_realworld/utils.py``
``extract_characters_regex``) reads MME-RealWorld's answers: answer-phrase prefixes are removed,
an answer of more than ten words without a capital A-E reads nothing, else the first capital
A-E anywhere in it is the option; without one, the first of ``(A)`` ... ``(E)`` whose text
holds the whole (lower-cased) answer. So an empty answer reads as A, and "a" as A, as there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, option_letter
from lmmprobe.schema import FormulateConfig

__all__ = ["mme_realworld_letter", "mme_realworld_matcher"]

_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
_CHOICES = ("(A)", "(B)", "(C)", "(D)", "(E)")
_LETTER = re.compile(r"[ABCDE]")


def mme_realworld_letter(output: str) -> str:
    """``extract_characters_regex``: the option letter A-E it reads, or ``""``."""
    text = output.strip()
    for prefix in _PREFIXES:
        text = text.replace(prefix, "")
    found = _LETTER.search(text)
    if len(text.split()) > 10 and found is None:
        return ""
    if found is None:
        for choice in _CHOICES:
            if text.lower() in choice.lower():
                return choice[1]
        return ""
    return found.group(0)


@MATCHERS.register(
    "mme-realworld",
    summary="MME-RealWorld's rule (lmms-eval's extract_characters_regex): the first capital "
    "A-E, else the '(X)' holding the answer; an empty answer reads as A",
)
def mme_realworld_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`mme_realworld_letter` as a matcher: the letter names the option at its position."""
    return option_letter(mme_realworld_letter(output), options, "ABCDE")
