"""VLMEvalKit's multiple-choice answer reading, reproduced exactly, and the ``vlmevalkit`` matcher.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/utils/matching_util.py`` ``can_infer``,
called by ``vlmeval/dataset/utils/multiple_choice.py`` ``prefetch_answer``) reads an option
letter from an answer by rules; only where they read nothing does its judge get a matching
prompt (lmmprobe's ``mmbench-choice`` judge protocol). `can_infer` is that rule. The
``vlmevalkit`` matcher is the rule alone: what VLMEvalKit scores under its ``exact_matching``
policy (no judge), where an answer the rules cannot read, or read as ``Z`` (a refusal or no
option), is wrong. The VLMEvalKit-style choice benchmarks (MMBench v1.1, CCBench,
SEEDBench2-Plus, MMT-Bench...) read their answers with it, so a run without a judge gives
VLMEvalKit's exact-matching figures.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig

__all__ = ["can_infer", "vlmevalkit_matcher"]

_API_FAILED = "Failed to obtain answer via API"
_REJECTS = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_PUNCTUATION = ".()[],:;!*#{}"
# "The correct answer is **B**." / "The answer is C." (matching_util._VERBOSE_ANSWER_RE).
_VERBOSE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def _infer_option(answer: str, choices: Mapping[str, str]) -> str | None:
    """``can_infer_option``: a letter standing alone near the end, ``Z`` for a refusal."""
    if _API_FAILED in answer:
        return None
    if any(reject in answer for reject in _REJECTS):
        return "Z"
    spaced = answer
    for ch in _PUNCTUATION:
        spaced = spaced.replace(ch, " ")
    splits = [x.strip() for x in spaced.split()]
    count = sum(1 for c in choices if c in splits)
    if count == 1:
        for c in choices:
            # The reference checks the position against the last five words.
            if c in splits and splits.index(c) > len(splits) - 5:
                return c
    elif count == 0 and sum(1 for c in ("Z", "") if c in splits) == 1:
        return "Z"
    found = _VERBOSE.search(answer)
    if found and found.group(1).upper() in choices:
        return found.group(1).upper()
    return None


def _infer_text(answer: str, choices: Mapping[str, str]) -> str | None:
    """``can_infer_text``: the one option whose text the (short enough) answer contains."""
    answer = answer.lower()
    if len(answer) > 2 * sum(len(str(v)) for v in choices.values()):
        return None
    found = [k for k, v in choices.items() if str(v).lower() in answer]
    return found[0] if len(found) == 1 else None


def can_infer(answer: str, choices: Mapping[str, str]) -> str | None:
    """VLMEvalKit's ``can_infer``: the option letter the rules read, ``Z`` or None.

    Args:
        answer: The text to read (a model's answer or a judge's reply).
        choices: Option letter to option text, in the order shown.

    Returns:
        A letter of `choices`, ``Z`` (the answer matches no option or refuses), or None where
        the rules cannot read it.

    """
    return _infer_option(str(answer), choices) or _infer_text(str(answer), choices)


@MATCHERS.register(
    "vlmevalkit",
    summary="VLMEvalKit's rule (can_infer): a lone option letter near the end, else the one "
    "option text the answer holds; else unread (its exact_matching policy)",
)
def vlmevalkit_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`can_infer` as a matcher: the options keyed by the marks shown, in display order.

    A letter is stage ``mark``, an option text ``text`` (VLMEvalKit's two rules); ``Z`` (a
    refusal, or no option) and no reading are unparsed, as VLMEvalKit scores them wrong.
    """
    if not options:
        return unparsed("no options")
    choices = dict(zip(marks, options, strict=True))
    letter = _infer_option(output, choices)
    if letter is not None and letter != "Z":
        return Extraction(list(marks).index(letter), "mark", "option letter")
    if letter is None:
        letter = _infer_text(output, choices)
        if letter is not None:
            return Extraction(list(marks).index(letter), "text", "option text")
    return unparsed("refusal" if letter == "Z" else "no_match")
