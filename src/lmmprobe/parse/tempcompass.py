"""TempCompass's multi-choice matching rules, reproduced, and the ``tempcompass`` matcher.

TempCompass's evaluation (llyx97/TempCompass @ e1b4631, ``eval_multi-choice.py``) removes
``</s>`` from the reply and strips it, then rates it by hand-crafted rules in order: the reply
is the gold answer line (``B. dunking a basketball``); the reply is one of the letters A-D;
it starts ``A.`` to ``D.`` (its text before the first dot is the letter); it starts ``A)`` to
``D)``. A reply no rule reads goes to ChatGPT, or with ``--disable_llm`` is rated 0.

Its yes/no task (``eval_yes_no.py``) cleans the reply alike, lower-cases it and reads ``yes``
when it starts with "yes", ``no`` when it starts with "no" (so "nope" and "none" read no), and
sends anything else to ChatGPT (rated 0 with ``--disable_llm``).

Its caption-matching task (``eval_caption_matching.py``'s ``eval_rule``) takes the question's
lines after the first as the captions (``Option 1: text``, ``Sentence A: text``,
``Caption B: text``) and reads the cleaned reply as a caption when it is, whole, a caption line;
a caption's text (or, when it holds ``") "``, its part after the first ``") "``); a caption's
name (``Option 1``) or bare index (``1``, ``A``), also with its dots removed. A later rule's match
overrides an earlier one's. The reading is right when it is the answer line, its name, its text
or its index; anything no rule reads goes to ChatGPT (rated 0 with ``--disable_llm``).

Its captioning task (``eval_captioning.py``) reads no caption by rule: every caption goes to
ChatGPT, which answers a multi-choice question from it (judge protocol
``tempcompass-captioning``); the ``tempcompass-captioning`` matcher reads nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed, yes_no_option
from lmmprobe.schema import FormulateConfig

__all__ = [
    "CAPTIONING_MC_QUESTION",
    "TEMPCOMPASS_COMMIT",
    "tempcompass_caption_matcher",
    "tempcompass_caption_rating",
    "tempcompass_caption_reading",
    "tempcompass_captioning_matcher",
    "tempcompass_letter",
    "tempcompass_matcher",
    "tempcompass_yes_no",
    "tempcompass_yes_no_matcher",
]

TEMPCOMPASS_COMMIT = "e1b463166400633e6061962d890a9ae85db29f70"
"""The llyx97/TempCompass commit whose evaluation is reproduced."""

CAPTIONING_MC_QUESTION = "mc_question"
"""The metadata key of a captioning sample holding the multi-choice question (as released) its
judge answers from the caption (``tempcompass-captioning``)."""

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
    return yes_no_option(tempcompass_yes_no(output), options)


def _after(text: str, sep: str) -> str:
    """``text.split(sep)[1]`` without the list: the part between the first and second `sep`."""
    rest = text.partition(sep)[2]
    return rest.partition(sep)[0]


def tempcompass_caption_reading(output: str, captions: Sequence[str]) -> str | None:
    """What ``eval_rule`` reads from the cleaned `output`, or None (the reply goes to the judge).

    Args:
        output: The model's reply, ``</s>`` removed and stripped as ``main`` does first.
        captions: The question's caption lines (``Option 1: text``), each holding ``": "``.

    """
    names = [c.split(": ")[0] for c in captions]
    bare = [
        n.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "") for n in names
    ]
    read = None
    for line in captions:  # each rule in turn; a later match overrides (its loops' order)
        if line == output:
            read = line
    tail = _after(output, ") ") if ") " in output else None
    for line in captions:
        text = _after(line, ": ")
        if text in (output, tail):
            read = text
    undotted = output.replace(".", "")
    for name in names + bare:
        if name in (output, undotted):
            read = name
    return read


def tempcompass_caption_rating(read: str, answer: str) -> int:
    """``eval_rule``'s rating of a reading against the answer line: 1 right, 0 wrong."""
    head = answer.split(": ")[0].split()
    index = head[1] if len(head) > 1 else None  # its split()[1]: the answer lines all have one
    right = read in (answer, answer.split(":")[0], _after(answer, ": "), index)
    return 1 if right else 0


@MATCHERS.register(
    "tempcompass-caption-matching",
    summary="TempCompass's caption-matching rules (eval_caption_matching.py eval_rule): the "
    "reply is a caption line, a caption's text, name or index; anything else unparsed",
)
def tempcompass_caption_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`tempcompass_caption_reading` as a matcher over the caption lines as options.

    The option read is the first whose line, taken as the answer, the reading rates right (the
    release's captions differ, so it is the only one).
    """
    lines = [str(o) for o in options]
    if not lines or any(": " not in line for line in lines):
        return unparsed("no options")
    read = tempcompass_caption_reading(output.replace("</s>", "").strip(), lines)
    if read is None:
        return unparsed("no_match")
    for index, line in enumerate(lines):
        if tempcompass_caption_rating(read, line):
            return Extraction(index, "text", "caption")
    return unparsed("no_match")


@MATCHERS.register(
    "tempcompass-captioning",
    summary="TempCompass's captioning task (eval_captioning.py) has no rules: every caption "
    "is unparsed, for its judge (tempcompass-captioning) to rate",
)
def tempcompass_captioning_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """Nothing read: a caption is rated only by its judge (a letter in it is no answer)."""
    return unparsed("no_match")
