"""TempCompass's multi-choice rating, rules first and a judge for the rest: ``tempcompass-choice``.

TempCompass's evaluation (llyx97/TempCompass @ e1b4631, ``eval_multi-choice.py``) rates a reply
by its hand-crafted rules (`lmmprobe.parse.tempcompass`), and a reply they cannot read goes to
gpt-3.5-turbo-1106 (``utils/eval_utils.py`` ``get_llm_output``: its system prompt, temperature
1.0, top_p 1, at most 128 tokens) with ``multi_choice_evaluation_prompt`` followed by the
question, the ground-truth answer and the prediction. ``llm_output_to_rating`` reads the reply:
starting ``Correct`` is right, starting ``Incorrect`` wrong, else ``Correct`` without
``Incorrect`` in it right, else ``Incorrect`` in it wrong.

Departures (docs/definitions.md): a reply holding neither word makes the reference retry up to
ten times and then rate the answer 0; here it is unreadable and the answer ``unjudged`` (which
the headline counts as not correct too). ``presence_penalty=1`` of the reference's request has
no field in lmmprobe's generation parameters and is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.parse.tempcompass import TEMPCOMPASS_COMMIT, tempcompass_letter
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["TempCompassChoice", "tempcompass_prompt", "tempcompass_rating"]

SOURCE = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT}:eval_multi-choice.py"

SYSTEM = "You are an AI assistant for question answering."
"""``get_llm_output``'s default system prompt."""

BASE_PROMPT = (
    "\nYou will receive a multi-choice question, the ground-truth answer and the prediction "
    "from a question answering (QA) model. Your task is to determine whether QA model "
    "prediction is correct, based on the question and ground-truth answer. If the prediction "
    'is correct, respond "Correct". If the prediction is incorrect, respond "Incorrect".\n'
)
"""``prompt_templates.multi_choice_evaluation_prompt`` (its line continuations joined)."""


def tempcompass_prompt(question: str, answer: str, prediction: str) -> str:
    """The prompt ``main`` builds for a reply its rules cannot read, byte for byte."""
    return (
        f"{BASE_PROMPT}\nMulti-Choice Question:\n{question}\nGround-Truth Answer: {answer}\n"
        f"Model Prediction: {prediction}"
    )


def tempcompass_rating(reply: str) -> int | None:
    """``llm_output_to_rating`` on the stripped reply; None where it would fail its assert."""
    text = reply.strip()
    if "Correct" not in text and "Incorrect" not in text:
        return None
    if text.startswith("Correct"):
        return 1
    if text.startswith("Incorrect"):
        return 0
    return 1 if "Incorrect" not in text else 0


def _lines(item: JudgeItem) -> tuple[str, str, list[str]]:
    """(the question with its option lines, the gold answer line, the option lines).

    As the release writes them: the question's stem, then ``A. text`` per option, in order.
    """
    choices = item.sample.choices or []
    lines = [f"{'ABCD'[k]}. {text}" for k, text in enumerate(choices[:4])]
    gold = item.sample.answer
    answer = lines[gold] if isinstance(gold, int) and 0 <= gold < len(lines) else ""
    return "\n".join([item.sample.question, *lines]), answer, lines


def rating_reading(reply: str) -> Reading | None:
    """A TempCompass rating reply as a reading ("1" or "0") and its value; None if unreadable."""
    rating = tempcompass_rating(reply)
    if rating is None:
        return None
    return Reading(value=float(rating), reading=str(rating))


def first_rating_right(judgements: list[Judgement]) -> bool | None:
    """Right on the first decided rating "1" (TempCompass's protocols ask once)."""
    for j in judgements:
        if j.decided_by != "unjudged" and j.reading is not None:
            return j.reading == "1"
    return None


@dataclass
class TempCompassChoice:
    """TempCompass's multi-choice rating: its rules, then the judge for a reply they miss."""

    name: str = "tempcompass-choice"
    version: str = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT[:7]}"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("miss",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=128, temperature=1.0, top_p=1.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """The rules' rating ("1" or "0"); None sends the reply to the judge."""
        _question, answer, lines = _lines(item)
        text = item.answer.replace("</s>", "").strip()
        if text == answer:
            return Reading(value=1.0, reading="1")
        letter = tempcompass_letter(text, lines)
        if not letter:
            return None
        right = letter == answer[:1]
        return Reading(value=1.0 if right else 0.0, reading="1" if right else "0")

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The question with its options, the gold answer line and the reply."""
        question, answer, _lines_shown = _lines(item)
        prediction = item.answer.replace("</s>", "").strip()
        return JudgePrompt(user=tempcompass_prompt(question, answer, prediction), system=SYSTEM)

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The rating as `Reading.reading` ("1" or "0") and value; None if unreadable."""
        return rating_reading(reply)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """Right on the first decided rating "1"."""
        return first_rating_right(judgements)


TEMPCOMPASS_CHOICE = JUDGE_PROTOCOLS.register("tempcompass-choice")(TempCompassChoice())
