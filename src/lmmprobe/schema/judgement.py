"""A judge's verdict on one answer: who judged, with which prompt, what it decided."""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "DecidedBy",
    "JudgeConfig",
    "Judgement",
    "judge_values",
    "judges_figure",
    "judges_verdict",
]

DecidedBy = Literal["rule", "judge", "unjudged"]
"""Which path decided an answer where a judge protocol applies.

rule: the protocol's rules read the answer and no judge was asked (``--judge-when miss``);
judge: a judge's reply was read; unjudged: the judge failed or replied unreadably — the answer
is counted apart (coverage), never guessed, and judged again on resume.
"""


class Judgement(BaseModel):
    """One judge's verdict (or a rule's reading) on one scored answer."""

    judge: str | None = Field(
        description="Judge model spec as given (``--judge``); None when a rule decided."
    )
    protocol: str = Field(description="Judge protocol name (e.g. ``mathvista-extract``).")
    version: str = Field(description="Version of the protocol's prompt and reading.")
    decided_by: DecidedBy = Field(description="Which path decided the answer.")
    key: str | None = Field(
        default=None,
        description="Store key of the judge's response (None when a rule decided).",
    )
    attempt: int = Field(
        default=0, description="Index of the judge's repeat, where a protocol judges N times."
    )
    value: float | None = Field(
        default=None,
        description="The numeric verdict: 1.0/0.0 for correct/wrong, a grade on the protocol's "
        "scale (MM-Vet 0-1, LLaVA-Bench 1-10); for a reading, the correctness its protocol "
        "gives it (1.0/0.0); None when unjudged.",
    )
    reading: str | None = Field(
        default=None,
        description="The answer the judge (or rule) read from the model's reply: an option "
        "letter, MathVista's extraction; None when the verdict is a grade.",
    )
    detail: dict[str, float | str] = Field(
        default_factory=dict,
        description="Protocol-specific figures beside the verdict (LLaVA-Bench's score of the "
        "reference answer, MMBench's matched option text).",
    )
    reason: str | None = Field(
        default=None,
        description="Why the answer is unjudged (error type, unreadable reply), or why a rule "
        "settled it with no judge asked (an empty answer).",
    )


class JudgeConfig(BaseModel):
    """How a run's answers are judged (``lmmprobe run --judge ...``, `RunSpec.judge`)."""

    judges: list[str] = Field(
        min_length=1, description="Judge model specs (``--judge``, repeatable), in order."
    )
    protocol: str | None = Field(
        default=None,
        description="Judge protocol for every row (``--judge-protocol``); None: a benchmark "
        "row's official judge, else ``lmmprobe-choice`` for single-choice rows and "
        "``lmmprobe-open`` for open-ended rows with a reference or rubric.",
    )
    when: Literal["miss", "always"] | None = Field(
        default=None,
        description="``miss``: rules first, the judge only where they cannot read the answer; "
        "``always``: every answer goes to the judge; None: each protocol's default.",
    )
    sees_image: bool = Field(
        default=False, description="Send the sample's images to the judge too."
    )
    prompt: str | None = Field(
        default=None,
        description="A judge prompt template of one's own (``--judge-prompt FILE``), for "
        "``lmmprobe-open``.",
    )
    scale: Literal["binary", "1-5", "1-10"] = Field(
        default="binary", description="The scale of ``lmmprobe-open`` (``--judge-scale``)."
    )


def judge_values(judgements: Iterable[Judgement]) -> dict[str, float]:
    """Each judge's figure on one answer: the mean of its readable repeats' values.

    Judges whose every repeat failed, was unreadable or holds no value are left out; so are
    rules' readings (no judge).
    """
    per: dict[str, list[float]] = {}
    for j in judgements:
        if j.decided_by == "judge" and j.judge is not None and j.value is not None:
            per.setdefault(j.judge, []).append(j.value)
    return {judge: fmean(values) for judge, values in per.items()}


def judges_figure(values: Iterable[float]) -> float | None:
    """The judges' figure on one answer from each judge's own (`judge_values`).

    Where every judge's figure is 0 or 1 (a verdict), the majority, a tie deciding nothing
    (None: never a coin flip); otherwise (grades on a scale) their mean; None with no judge.
    """
    found = list(values)
    if not found:
        return None
    if all(v in (0.0, 1.0) for v in found):
        yes = sum(found)
        no = len(found) - yes
        if yes == no:
            return None  # a tie between judges decides nothing
        return 1.0 if yes > no else 0.0
    return fmean(found)


def judges_verdict(judgements: Iterable[Judgement]) -> bool | None:
    """Right or wrong as the judges read one answer: their figure where it is 1 or 0.

    What the headline answer rates count for an answer lmmprobe's rules could not read
    (``stage == "unparsed"``) where a judge read it (docs/definitions.md, "Judges"). Only
    judges' readings count (an option letter, ``correct``/``incorrect``, an extraction: a
    `Judgement.reading`, whose value is the correctness its protocol gives it), never a rule's
    reading nor a grade on a scale (MM-Vet's, LLaVA-Bench's, ``lmmprobe-open``'s 1-5: no
    reading, and a grade of 1 is no verdict of right). None where none decided (every judge
    failed or replied unreadably, judges tied, a judge split over its repeats).
    """
    read = [j for j in judgements if j.reading is not None]
    figure = judges_figure(judge_values(read).values())
    if figure is None or figure not in (0.0, 1.0):
        return None
    return figure == 1.0
