"""TempCompass's caption-matching rating, rules first and a judge for the rest.

TempCompass's evaluation (llyx97/TempCompass @ e1b4631, ``eval_caption_matching.py``) reads a
reply by its ``eval_rule`` (`lmmprobe.parse.tempcompass.tempcompass_caption_reading`: the
cleaned reply is a caption line, a caption's text, name or index), and a reply it cannot read
goes to gpt-3.5-turbo-1106 as in its multi-choice task
(`lmmprobe.judge.protocols.tempcompass_choice`: the same system prompt, generation settings and
``llm_output_to_rating``) with ``caption_matching_evaluation_prompt`` followed by the question
(its caption lines in it), the ground-truth caption line and the prediction. Its departures are
that protocol's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.judge.protocols.tempcompass_choice import (
    SYSTEM,
    first_rating_right,
    rating_reading,
)
from lmmprobe.parse.tempcompass import (
    TEMPCOMPASS_COMMIT,
    tempcompass_caption_rating,
    tempcompass_caption_reading,
)
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["TempCompassCaptionMatching", "tempcompass_caption_prompt"]

SOURCE = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT}:eval_caption_matching.py"

BASE_PROMPT = (
    "\nYou will receive a caption matching question, the ground-truth answer and the "
    "prediction from a question answering (QA) model. Your task is to determine whether QA "
    "model prediction is correct, based on the question and ground-truth answer. If the "
    'prediction is correct, respond "Correct". If the prediction is incorrect, respond '
    '"Incorrect".\n'
)
"""``prompt_templates.caption_matching_evaluation_prompt`` (its line continuations joined)."""


def tempcompass_caption_prompt(question: str, answer: str, prediction: str) -> str:
    """The prompt ``main`` builds for a reply ``eval_rule`` cannot read, byte for byte."""
    return (
        f"{BASE_PROMPT}\nCaption Matching Question:\n{question}\nGround-Truth Answer: {answer}\n"
        f"Model Prediction: {prediction}"
    )


def _gold(item: JudgeItem) -> str:
    """The ground-truth caption line, as the release writes it."""
    choices = item.sample.choices or []
    gold = item.sample.answer
    return str(choices[gold]) if isinstance(gold, int) and 0 <= gold < len(choices) else ""


@dataclass
class TempCompassCaptionMatching:
    """TempCompass's caption-matching rating: its rules, then the judge for a reply they miss."""

    name: str = "tempcompass-caption-matching"
    version: str = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT[:7]}"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("miss",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=128, temperature=1.0, top_p=1.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """``eval_rule``'s rating ("1" or "0"); None sends the reply to the judge."""
        captions = [str(c) for c in item.sample.choices or []]
        gold = _gold(item)
        if not gold or ": " not in gold or any(": " not in c for c in captions):
            return None  # not a caption-matching item: the judge decides
        prediction = item.answer.replace("</s>", "").strip()
        read = tempcompass_caption_reading(prediction, captions)
        if read is None:
            return None
        rating = tempcompass_caption_rating(read, gold)
        return Reading(value=float(rating), reading=str(rating))

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The question with its caption lines, the gold caption line and the reply."""
        prediction = item.answer.replace("</s>", "").strip()
        return JudgePrompt(
            user=tempcompass_caption_prompt(item.sample.question, _gold(item), prediction),
            system=SYSTEM,
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The rating as `Reading.reading` ("1" or "0") and value; None if unreadable."""
        return rating_reading(reply)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """Right on the first decided rating "1"."""
        return first_rating_right(judgements)


TEMPCOMPASS_CAPTION_MATCHING = JUDGE_PROTOCOLS.register("tempcompass-caption-matching")(
    TempCompassCaptionMatching()
)
