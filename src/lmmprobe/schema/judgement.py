"""A judge's verdict on one answer: who judged, with which prompt, what it decided."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["DecidedBy", "Judgement"]

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
        "scale (MM-Vet 0-1, LLaVA-Bench 1-10); None when the verdict is a reading or unjudged.",
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
        default=None, description="Why the answer is unjudged (error type, unreadable reply)."
    )
