"""LongVideoBench's answer reading, reproduced, and the ``longvideobench`` matcher.

lmms-eval (EvolvingLMMs-Lab/lmms-eval @ 75571cf, ``lmms_eval/tasks/longvideobench/utils.py``
``parse_multi_choice_response``, "the same as the original LongVideoBench paper (from author
Haoning Wu)") strips the reply, removes eight answer phrases, and reads the first capital A-E;
where it reads none (no capital at all, or more than ten words without one) it picks a random
option. lmmprobe reads the same letter and counts a reply it reads none from as unparsed and
wrong, never as a random option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, option_letter
from lmmprobe.schema import FormulateConfig

__all__ = ["longvideobench_letter", "longvideobench_matcher"]

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
_LETTER = re.compile(r"[ABCDE]")


def longvideobench_letter(output: str) -> str:
    """The letter ``parse_multi_choice_response`` reads, or ``""`` where it would guess."""
    text = output.strip()
    for prefix in _PREFIXES:
        text = text.replace(prefix, "")
    found = _LETTER.search(text)
    if found is None:  # over ten words or not, no capital A-E: the reference guesses
        return ""
    return found.group(0)


@MATCHERS.register(
    "longvideobench",
    summary="LongVideoBench's rule (lmms-eval's parse_multi_choice_response): answer phrases "
    "removed, then the first capital A-E; none: unparsed (the reference picks at random)",
)
def longvideobench_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`longvideobench_letter` as a matcher: the letter names the option at its position."""
    return option_letter(longvideobench_letter(output), options, "ABCDE")
