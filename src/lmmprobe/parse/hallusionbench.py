"""lmmprobe's rule reading of a HallusionBench answer, and the ``hallusionbench`` matcher.

HallusionBench's official evaluation has no rules: GPT-4 reads every answer (the
``hallusionbench-correct`` judge protocol). Without a judge lmmprobe reads the answer's yes or
no by its explicit words (`hallusion_yes_no`), which the official figures
(`lmmprobe.metrics.benchmark_choice.hallusion_correctness`) and, as the ``hallusionbench``
matcher, a run's answer rates (``accuracy``) share: a HallusionBench question is a choice
between ``yes`` and ``no`` that is never shown. An answer read as neither is ``unparsed``: where
a judge read it, the judge's verdict decides it in the headline (the judged headline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from lmmprobe.parse.matcher import MATCHERS, Extraction, yes_no_option
from lmmprobe.schema import FormulateConfig

__all__ = ["hallusion_yes_no", "hallusionbench_matcher"]

# Phrases by which an answer says it cannot tell. HallusionBench's judge (GPT-4, asked for
# "correct", "incorrect" or "unclear") gives "unclear" only to an answer that is unclear about
# the answer; an answer the rules cannot read is not thereby uncertain.
_UNSURE = re.compile(
    r"\b(?:can ?not|can[’']t|unable to|impossible to|not possible to|no way to)\s+"
    r"(?:be\s+)?(?:tell|say|determine|determined|know|answer|answered|confirm|confirmed|"
    r"judge|decide|verify|verified)\b"
    r"|\b(?:not sure|unsure|uncertain|unclear|hard to (?:say|tell)|difficult to (?:say|tell)"
    r"|(?:do not|don[’']t) know|not (?:enough|sufficient) information|insufficient information"
    r"|not clear)\b",
    re.IGNORECASE,
)


def hallusion_yes_no(answer: str) -> Literal["yes", "no", "unclear"] | None:
    """What an answer says by lmmprobe's rule: ``yes``, ``no``, ``unclear`` or None (unread).

    ``unclear`` only for an answer stating uncertainty ("I cannot tell", "not sure", "hard to
    say"...), as the judge's "unclear" is for an answer unclear about the answer. Otherwise
    the first sentence is read by its explicit words: ``yes`` when it has the word yes, ``no``
    when it has no or not; an answer with both or neither is unread (None).
    """
    if _UNSURE.search(answer):
        return "unclear"
    first = answer.split(".")[0] if "." in answer else answer
    words = {w.strip(",;:!?\"'()").lower() for w in first.split()}
    says_yes, says_no = "yes" in words, bool(words & {"no", "not"})
    if says_yes == says_no:
        return None
    return "yes" if says_yes else "no"


@MATCHERS.register(
    "hallusionbench",
    summary="lmmprobe's yes/no reading of a HallusionBench answer: the first sentence's 'yes' "
    "or 'no'/'not' (both or neither, or stated uncertainty: unparsed, the judge's part)",
)
def hallusionbench_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`hallusion_yes_no` as a matcher over the options ``yes`` and ``no``."""
    # None and "unclear" are no option: unparsed.
    return yes_no_option(hallusion_yes_no(output) or "", options)
