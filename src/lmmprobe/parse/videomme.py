"""Video-MME's answer reading, reproduced exactly, and the ``videomme`` matcher.

Video-MME's own scoring script (MME-Benchmarks/Video-MME @ 4e7566d, the last commit holding
``evaluation/eval_your_results.py``, ``extract_characters_regex``) strips the answer, removes
its answer-phrase prefixes, reads nothing from an answer of more than ten words without a
capital A-D, and otherwise reads the first capital A-D anywhere in it. Two entries of its
prefix list lack the comma between them, so Python joins them: ``"The best option isThe
correct option is"`` and ``"Best answer:Best option:"`` are removed, and "The correct option
is", "Best answer:" and "Best option:" alone are not; the copy keeps that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, option_letter
from lmmprobe.schema import FormulateConfig

__all__ = ["VIDEOMME_COMMIT", "videomme_letter", "videomme_matcher"]

VIDEOMME_COMMIT = "4e7566d36f63121fc72f040654d6f38f83f30125"
"""The MME-Benchmarks/Video-MME commit whose ``evaluation/eval_your_results.py`` is reproduced."""

# The list as the script writes it: adjacent literals without a comma are one string.
_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    # The script's adjacent literals without a comma, joined as Python joins them.
    "The best option isThe correct option is",
    "Best answer:Best option:",
)
_LETTER = re.compile(r"[ABCD]")


def videomme_letter(output: str) -> str:
    """``extract_characters_regex``: the option letter A-D it reads, or ``""``."""
    text = output.strip()
    for prefix in _PREFIXES:
        text = text.replace(prefix, "")
    found = _LETTER.search(text)
    if len(text.split()) > 10 and found is None:
        return ""
    return "" if found is None else found.group(0)


@MATCHERS.register(
    "videomme",
    summary="Video-MME's rule (eval_your_results.py extract_characters_regex): answer "
    "prefixes removed, then the first capital A-D; none in over ten words reads nothing",
)
def videomme_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`videomme_letter` as a matcher: the letter names the option at its position."""
    return option_letter(videomme_letter(output), options, "ABCD")
