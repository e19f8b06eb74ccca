"""TempCompass's yes/no rating, rules first and a judge for the rest: ``tempcompass-yes-no``.

TempCompass's evaluation (llyx97/TempCompass @ e1b4631, ``eval_yes_no.py``) reads a reply by its
rules (`lmmprobe.parse.tempcompass.tempcompass_yes_no`: the lower-cased reply starts "yes" or
"no"), and a reply they cannot read goes to gpt-3.5-turbo-1106 as in its multi-choice task
(`lmmprobe.judge.protocols.tempcompass_choice`: the same system prompt, generation settings
and ``llm_output_to_rating``) with ``yes_no_evaluation_prompt`` followed by the question, the
ground-truth answer and the prediction. Its departures are that protocol's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.judge.protocols.tempcompass_choice import (
    SYSTEM,
    first_rating_right,
    rating_reading,
)
from lmmprobe.parse.tempcompass import TEMPCOMPASS_COMMIT, tempcompass_yes_no
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["TempCompassYesNo", "tempcompass_yes_no_prompt"]

SOURCE = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT}:eval_yes_no.py"

BASE_PROMPT = (
    "\nYou will receive a Yes/No question, the ground-truth answer and the prediction from a "
    "question answering (QA) model. Your task is to determine whether QA model prediction is "
    "correct, based on the question and ground-truth answer. If the prediction is correct, "
    'respond "Correct". If the prediction is incorrect, respond "Incorrect".\n'
)
"""``prompt_templates.yes_no_evaluation_prompt`` (its line continuations joined)."""


def tempcompass_yes_no_prompt(question: str, answer: str, prediction: str) -> str:
    """The prompt ``main`` builds for a reply its rules cannot read, byte for byte."""
    return (
        f"{BASE_PROMPT}\nYes/No Question:\n{question}\nGround-Truth Answer: {answer}\n"
        f"Model Prediction: {prediction}"
    )


def _gold(item: JudgeItem) -> str:
    """The ground-truth answer as the release writes it: ``yes`` or ``no``."""
    choices = item.sample.choices or []
    gold = item.sample.answer
    return choices[gold] if isinstance(gold, int) and 0 <= gold < len(choices) else ""


@dataclass
class TempCompassYesNo:
    """TempCompass's yes/no rating: its rules, then the judge for a reply they miss."""

    name: str = "tempcompass-yes-no"
    version: str = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT[:7]}"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("miss",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=128, temperature=1.0, top_p=1.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """The rules' rating ("1" or "0"); None sends the reply to the judge."""
        word = tempcompass_yes_no(item.answer)
        if not word:
            return None
        right = word == _gold(item)
        return Reading(value=1.0 if right else 0.0, reading="1" if right else "0")

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The question, the gold ``yes`` or ``no`` and the reply."""
        prediction = item.answer.replace("</s>", "").strip()
        return JudgePrompt(
            user=tempcompass_yes_no_prompt(item.sample.question, _gold(item), prediction),
            system=SYSTEM,
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The rating as `Reading.reading` ("1" or "0") and value; None if unreadable."""
        return rating_reading(reply)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """Right on the first decided rating "1"."""
        return first_rating_right(judgements)


TEMPCOMPASS_YES_NO = JUDGE_PROTOCOLS.register("tempcompass-yes-no")(TempCompassYesNo())
