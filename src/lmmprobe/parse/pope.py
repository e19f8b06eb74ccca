"""POPE's reading of a yes/no answer, reproduced, and the ``pope`` matcher.

POPE's ``evaluate.py`` (RUCAIBox/POPE) keeps an answer's first sentence and reads it ``no``
when one of its words is ``No``, ``not`` or ``no``, else ``yes`` (`pope_read`): every answer is
read. Its scores (`lmmprobe.metrics.benchmark_choice.pope_scores`) and, as the ``pope``
matcher, a run's answer rates (``accuracy``) share that reading: a POPE question is a choice
between ``yes`` and ``no`` that is never shown. The matcher leaves only an answer with no text
unparsed (POPE's script reads it ``yes``, which ``pope_accuracy`` and the other official
figures keep): there is nothing in it to read.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed, yes_no_option
from lmmprobe.schema import FormulateConfig

__all__ = ["pope_matcher", "pope_read"]


def pope_read(answer: str) -> str:
    """POPE's reading: the first sentence is "no" when a word is No, not or no, else "yes"."""
    text = answer
    if text.find(".") != -1:
        text = text.split(".")[0]
    words = text.replace(",", "").split(" ")
    return "no" if ("No" in words or "not" in words or "no" in words) else "yes"


@MATCHERS.register(
    "pope",
    summary="POPE's yes/no reading (evaluate.py): the first sentence is 'no' when a word is "
    "No, not or no, else 'yes'; an empty answer unparsed",
)
def pope_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`pope_read` as a matcher over the options ``yes`` and ``no``."""
    if not output.strip():
        return unparsed("empty")
    return yes_no_option(pope_read(output), options)
