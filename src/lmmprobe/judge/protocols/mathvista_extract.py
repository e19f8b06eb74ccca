"""MathVista's answer extraction by a judge: ``mathvista-extract``.

The official MathVista evaluation (lupantech/MathVista @ 53d5258,
``evaluation/extract_answer.py`` ``extract_answer`` and ``create_test_prompt``, prompt in
``evaluation/prompts/ext_ans.py`` ``demo_prompt``) reads an answer in two steps: its rules first
(an empty response, a multiple-choice response that is one of the choices, an integer or float
response, and with ``--quick_extract`` the phrase ``The answer is "..."``), then GPT-4 with a
few-shot extraction prompt. The extraction is then scored by ``calculate_score.py``
(`lmmprobe.metrics.benchmark_choice.mathvista_normalize`, exact match with the answer).

Departures, both where the released code would score something the model did not answer: a
judge reply that is empty after stripping (the reference's ``verify_extraction`` rejects it and
extracts again on its next run) is unreadable, so the answer is ``unjudged``; and an empty
extraction of a multiple-choice answer (an empty response) is wrong, not sent to the nearest
option by edit distance (as `lmmprobe.metrics.benchmark_choice.mathvista_read` already does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.metrics.benchmark_choice import mathvista_extract, mathvista_judged_correct
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["DEMO_PROMPT", "MathVistaExtract", "mathvista_query"]

SOURCE = "lupantech/MathVista@53d525874bdde205128e6b160b7357a88277d479:evaluation/extract_answer.py"

DEMO_PROMPT = """
Please read the following example. Then extract the answer from the model response and type it at the end of the prompt.

Hint: Please answer the question requiring an integer answer and provide the final value, e.g., 1, 2, 3, at the end.
Question: Which number is missing?

Model response: The number missing in the sequence is 14.

Extracted answer: 14

Hint: Please answer the question requiring a floating-point number with one decimal place and provide the final value, e.g., 1.2, 1.3, 1.4, at the end.
Question: What is the fraction of females facing the camera?

Model response: The fraction of females facing the camera is 0.6, which means that six out of ten females in the group are facing the camera.

Extracted answer: 0.6

Hint: Please answer the question requiring a floating-point number with two decimal places and provide the final value, e.g., 1.23, 1.34, 1.45, at the end.
Question: How much money does Luca need to buy a sour apple candy and a butterscotch candy? (Unit: $)

Model response: Luca needs $1.45 to buy a sour apple candy and a butterscotch candy.

Extracted answer: 1.45

Hint: Please answer the question requiring a Python list as an answer and provide the final list, e.g., [1, 2, 3], [1.2, 1.3, 1.4], at the end.
Question: Between which two years does the line  graph saw its maximum peak?

Model response: The line graph saw its maximum peak between 2007 and 2008.

Extracted answer: [2007, 2008]

Hint: Please answer the question and provide the correct option letter, e.g., A, B, C, D, at the end.
Question: What fraction of the shape is blue?
Choices:
(A) 3/11
(B) 8/11
(C) 6/11
(D) 3/5

Model response: The correct answer is (B) 8/11.

Extracted answer: B
"""
"""``evaluation/prompts/ext_ans.py`` ``demo_prompt`` byte for byte (stripped when used, as the
reference does)."""


def mathvista_query(item: JudgeItem) -> str:
    """The row's ``query`` (hint, question, choices): the sample's prompt, braces unescaped."""
    prompt = item.sample.prompt
    if prompt is None:
        return item.sample.question
    return prompt.template.replace("{{", "{").replace("}}", "}")


@dataclass
class MathVistaExtract:
    """MathVista's answer extraction: rules, then a judge extracts the answer from the reply."""

    name: str = "mathvista-extract"
    version: str = "lupantech/MathVista@53d5258"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("miss", "always")
    repeats: int = 1
    # models/gpt.py GPT_Model defaults: temperature 0, max_tokens 1024.
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=1024, temperature=0.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """``extract_answer``'s steps before the judge (with ``quick_extract``); None past them."""
        m = item.sample.metadata
        response = item.answer
        if response == "":
            return Reading(reading="")
        choices = m.get("choices")
        extraction = mathvista_extract(
            response,
            str(m.get("mathvista_question_type")),
            str(m.get("answer_type")),
            list(choices) if choices is not None else None,
        )
        # The rules give "" only where none applied (the response itself is not empty).
        return Reading(reading=extraction) if extraction != "" else None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """``create_test_prompt(demo_prompt, query, response)``."""
        test_prompt = f"{mathvista_query(item)}\n\n{item.answer}"
        return JudgePrompt(user=f"{DEMO_PROMPT.strip()}\n\n{test_prompt}\n\nExtracted answer: ")

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The reply is the extraction, as stored; an empty one is unreadable."""
        if reply.strip() == "":
            return None
        return Reading(reading=reply)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The first decided extraction, normalized, equal to the answer (``calculate_score``)."""
        for j in judgements:
            if j.decided_by != "unjudged" and j.reading is not None:
                m = item.sample.metadata
                gold = item.sample.answer
                choices = m.get("choices")
                return mathvista_judged_correct(
                    j.reading,
                    gold[0] if isinstance(gold, list) else str(gold),
                    list(choices) if choices is not None else None,
                    str(m.get("mathvista_question_type")),
                    str(m.get("answer_type")),
                    m.get("precision"),
                )
        return None


MATHVISTA_EXTRACT = JUDGE_PROTOCOLS.register("mathvista-extract")(MathVistaExtract())
