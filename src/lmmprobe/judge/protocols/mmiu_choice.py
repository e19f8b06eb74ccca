"""MMIU's choice extraction, its rule first and gpt-4o-mini for the rest: ``mmiu-choice``.

MMIU's evaluation (OpenGVLab/MMIU @ 36c48ec, ``evaluate.py`` ``process_data``) takes an answer
that is one option letter (after its clean-up, `lmmprobe.metrics.mmiu.mmiu_rule`) as the
choice, reads a failure text or an empty answer as ``Z``, and sends any other answer to
gpt-4o-mini (one user turn, ``max_tokens=512``, the API's default temperature) with
``build_prompt(question, options, prediction)``: the question, the release's ``options`` text
and the cleaned prediction in a fixed template. The judge's reply, stripped, is the choice as
it stands, and ``evaluate_correct.py`` counts it right when it is a substring of the gold
letter (`lmmprobe.metrics.mmiu.mmiu_correct`): ``A`` for gold ``A``, and an empty reply too.

Departure: a call that fails is ``GPT error`` there and its answer leaves its task's count; here
the answer is ``unjudged`` (asked again on resume), which the headline ``mmiu_accuracy`` counts
as not correct and ``mmiu_accuracy_judged_only`` leaves out, as the reference does. A reply over
`REPLY_LIMIT` characters (which cannot be a substring of a one-letter gold) is unjudged too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import (
    JUDGE_PROTOCOLS,
    JudgeItem,
    JudgePrompt,
    JudgeWhen,
    Reading,
    within_limit,
)
from lmmprobe.metrics.mmiu import MMIU_COMMIT, mmiu_correct, mmiu_prediction, mmiu_rule
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["MMIUChoice", "mmiu_prompt"]

SOURCE = f"OpenGVLab/MMIU@{MMIU_COMMIT}:evaluate.py"

_TEMPLATE = (
    "You are an AI assistant who will help me to match an answer with several options of a "
    "single-choice question. "
    "You are provided with a question, several options, and an answer, and you need to find "
    "which option is most similar to the answer. "
    "If the meaning of all options are significantly different from the answer, output Z. "
    "When the options are mostly numbers, if the model outputs numbers in the same format, "
    "please do not be too precise and try to match an answer as much as possible. "
    "Your should output a single uppercase character in A, B, C, D (if they are valid options), "
    "and Z. \n"
    "Example 1: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. "
    "dog\nAnswer: a cute teddy bear\nYour output: A\n"
    "Example 2: \n"
    "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. "
    "dog\nAnswer: Spider\nYour output: Z\n"
    "Example 3: \n"
    "Question: {}?\nOptions: {}\nAnswer: {}\nYour output: "
)


def mmiu_prompt(question: str, options: str, prediction: str) -> str:
    """``build_prompt(question, options, prediction)``, byte for byte."""
    return _TEMPLATE.format(question, options, prediction)


def _gold(item: JudgeItem) -> str:
    answer = item.sample.answer
    return answer[0] if isinstance(answer, list) and answer else str(answer)


@dataclass
class MMIUChoice:
    """MMIU's choice extraction: its letter rule, then gpt-4o-mini's reply as the choice."""

    name: str = "mmiu-choice"
    version: str = f"OpenGVLab/MMIU@{MMIU_COMMIT[:7]}"
    source: str = SOURCE
    # process_data asks the judge only about answers its rule does not read.
    when: tuple[JudgeWhen, ...] = ("miss",)
    repeats: int = 1
    # The request sets max_tokens=512 and no temperature (the API's default, 1.0).
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=512, temperature=1.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """The letter (or ``Z``) ``process_data`` reads itself; None sends it to the judge."""
        choice = mmiu_rule(item.answer)
        return None if choice is None else Reading(reading=choice)

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The release's question and options text, and the cleaned prediction."""
        meta = item.sample.metadata
        return JudgePrompt(
            user=mmiu_prompt(
                str(meta.get("mmiu_question", item.sample.question)),
                str(meta.get("options", "")),
                mmiu_prediction(item.answer),
            )
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The stripped reply is the choice, whatever it says (None only over the limit)."""
        choice = within_limit(reply)
        return None if choice is None else Reading(reading=choice)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The first decided choice is a substring of the gold letter (``choice in gt``)."""
        for j in judgements:
            if j.decided_by != "unjudged" and j.reading is not None:
                return mmiu_correct(j.reading, _gold(item))
        return None


MMIU_CHOICE = JUDGE_PROTOCOLS.register("mmiu-choice")(MMIUChoice())
