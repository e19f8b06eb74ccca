"""MathVerse's two-stage judge: ``mathverse-judge`` (an extraction, then a scoring).

MathVerse's 'w/o' scores (its leaderboard's primary metric) are made in two steps, each a call
to an LLM judge (ZrrSkywalker/MathVerse @ 937b090, ``evaluation/``):

1. ``extract_answer_s1.py``: the judge extracts the answer from the model's response with the
   few-shot prompt ``prompts.py`` ``demo_prompt_extract`` (``create_test_prompt``: the prompt
   stripped, a blank line, ``Model response: '{response}'`` and ``Extracted Answer: ``); the
   reply, with any ``Extracted Answer: `` in it removed and stripped, is the extraction.
2. ``score_answer_s2.py``: the judge says whether the extraction matches the standard answer
   with ``demo_prompt_score`` (stripped, then ``str.format`` with the row's ``question``, the
   answer as ``gt`` and the extraction); the reply, ``Judgement:`` removed and stripped, must
   be ``0`` or ``1``. With ``--quick_match`` the script decides by string equality instead
   (``'1' if answer == extraction else '0'``), without the judge.

``utils.py`` ``get_chat_response`` asks gpt-3.5-turbo by default with temperature 0 and at
most 256 tokens, and strips the reply. The judge is a stage of one verdict here: stage 0
extracts, stage 1 scores (`JudgeItem.stage`, `JudgeItem.earlier`), and the answer's verdict is
the scoring's 0 or 1 with the extraction as its reading.

Modes: ``always`` (the default) is the official pipeline, both stages by the judge. ``miss``
lets the scoring stage's rule decide where the extraction equals the answer (``quick_match``'s
1, which a judge asked whether two equal answers are consistent gives too) and asks the judge
about the others; the extraction is always the judge's (the released code has no rule for it).

Departures, where the released code would loop or score what nobody read: an empty reply
(``get_chat_response`` asks again until it is not empty) and a scoring reply that is not 0 or 1
(``score_answer_s2.py`` asks again, without end) are unreadable, so the answer is ``unjudged``;
a failed call (``extract_answer`` then stores an empty extraction and scores it) leaves it
unjudged too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import (
    JUDGE_PROTOCOLS,
    JudgeItem,
    JudgePrompt,
    JudgeWhen,
    Reading,
    first_verdict,
)
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["EXTRACT_PROMPT", "SCORE_PROMPT", "MathVerseJudge", "extract_prompt", "score_prompt"]

MATHVERSE_COMMIT = "937b090597aeafb8e82b35d310a4bc5b9e2ea29d"
SOURCE = f"ZrrSkywalker/MathVerse@{MATHVERSE_COMMIT}:evaluation/prompts.py"

EXTRACT_PROMPT = """
I am providing you a response from a model to a math problem, termed 'Model Response'. You should extract the answer from the response as 'Extracted Answer'. Directly output the extracted answer with no explanation.

1.
Model response: 'Rounded to two decimal places, the perimeter of the sector is approximately:\n\n(-2, 1)'
Extracted Answer: (-2, 1)

2.
Model response: 'at those points.\n\nTherefore, the correct option that represents the meaning of the intersection points of the graphs is:\n\nD. They give the solutions to the equation $f(t)=g(t)$.",'
Extracted Answer: D

3.
Model response: ' at 1 (there's a closed circle at y = 1), the range in interval notation is \\((-4, 1]\\).\n\nFinal values:\nDomain: \\((-3, 3]\\)\nRange: \\((-4, 1]\\)'
Extracted Answer: Domain: \\((-3, 3]\\)\nRange: \\((-4, 1]\\)

4.
Model response: 'As it stands, I cannot provide the correct option letter because there isn't enough information to solve for 'y'.'
Extracted Answer: null

5.
Model response: 'Given that AB = 17.6 meters, we can now substitute into the equation:\n\nd = 17.6 / cos(38\u00b0)\n\nTherefore, to one decimal place, the distance d between Ned and Bart is approximately 22.3 meters.'
Extracted answer: 22.3

6.
Model response:  have all the coefficients for the quadratic function:\n\\( f(x) = ax^2 + bx + c \\)\n\\( f(x) = -1x^2 - 2x + 1 \\)\n\nTherefore, the equation for the graphed function \\( f \\) is:\n\\( f(x) = -x^2 - 2x + 1 \\)"'
Extracted answer: f(x) = -x^2 - 2x + 1

7.
"""
"""``evaluation/prompts.py`` ``demo_prompt_extract`` as Python reads it (stripped when used)."""

SCORE_PROMPT = """
Below are two answers to a math question. Question is [Question], [Standard Answer] is the standard answer to the question, and [Model_answer] is the answer extracted from a model's output to this question.  Determine whether these two answers are consistent.
Please note that only when the [Model_answer] completely matches the [Standard Answer] means they are consistent. For non-multiple-choice questions, if the meaning is expressed in the same way, it is also considered consistent, for example, 0.5m and 50cm.
If they are consistent, Judement is 1; if they are different, Judement is 0.

[Question]: Write the set of numbers represented on the number line in interval notation.
[Standard Answer]: (-2,1]
[Model_answer] : Extracted Answer: \\((-2, 1)\\)
Judgement: 0

[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then the length of BC is ()\nChoices:\nA:2\nB:2\u221a{{3}}\nC:\u221a{{3}}\nD:2\u221a{{2}}
[Standard Answer]: C
[Model_answer] : B:2\u221a{{3}}
Judgement: 0

[Question]: Find the domain and range of the function f using interval notation.
[Standard Answer]: domain: [-4, 0) and range: (-3, 1]
[Model_answer] : Range: \\((-4, 1]\\)
Judgement: 0

[Question]: As shown in the figure, circle O has a radius 1.0, if angle BAC = 60.0, then the length of BC is ()\nChoices:\nA:2\nB:2\u221a{{3}}\nC:\u221a{{3}}\nD:2\u221a{{2}}
[Standard Answer]: C
[Model_answer] : null
Judgement: 0

[Question]: Given the graph of the ellipse that intersects with x-axis at 9 and -9 and with y-axis at 3 and -3, determine its equation.A. \\frac{{x^2}}{{81}} + \\frac{{y^2}}{{9}} = 1 B. Can not determine.\n
[Standard Answer]: A
[Model_answer] : \\frac{{x^2}}{{81}} + \\frac{{y^2}}{{9}} = 1
Judgement: 1

[Question]: {question}
[Standard Answer]: {gt}
[Model_answer] : {extraction}
Judgement: """
"""``evaluation/prompts.py`` ``demo_prompt_score`` as Python reads it (a `str.format` template:
``{{3}}`` is a literal ``{3}``; stripped, then formatted, when used)."""

EXTRACT = 0
"""The extraction stage (``extract_answer_s1.py``)."""
SCORE = 1
"""The scoring stage (``score_answer_s2.py``)."""


def extract_prompt(response: str) -> str:
    """``extract_answer_s1.py`` ``create_test_prompt`` for a model's response."""
    return f"{EXTRACT_PROMPT.strip()}\n\nModel response: '{response}'\nExtracted Answer: "


def score_prompt(question: str, answer: str, extraction: str) -> str:
    """``score_answer_s2.py`` ``create_test_prompt`` for the row's question, answer, extraction."""
    return SCORE_PROMPT.strip().format(question=question, gt=answer, extraction=extraction)


def read_extraction(reply: str) -> str | None:
    """The extraction ``extract_answer_s1.py`` stores from a reply; None for an empty reply."""
    # get_chat_response strips the reply before the script reads it.
    text = reply.strip()
    return None if text == "" else text.replace("Extracted Answer: ", "").strip()


def read_judgement(reply: str) -> float | None:
    """The 0 or 1 ``score_answer_s2.py`` takes from a reply; None for any other reply."""
    text = reply.strip().replace("Judgement:", "").strip()
    return float(text) if text in ("0", "1") else None


def _gold(item: JudgeItem) -> str:
    answer = item.sample.answer
    return answer[0] if isinstance(answer, list) and answer else str(answer)


@dataclass
class MathVerseJudge:
    """MathVerse's judge: extracts the answer, then scores the extraction 0 or 1."""

    name: str = "mathverse-judge"
    version: str = "ZrrSkywalker/MathVerse@937b090"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always", "miss")
    repeats: int = 1
    stages: int = 2
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=256, temperature=0.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """At the scoring stage, ``quick_match``'s 1 for an extraction equal to the answer.

        None otherwise: the extraction is always the judge's, and an extraction that differs
        from the answer goes to the judge (``quick_match`` would score it 0).
        """
        if item.stage != SCORE or not item.earlier:
            return None
        extraction = item.earlier[-1]
        return Reading(value=1.0, reading=extraction) if extraction == _gold(item) else None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The extraction prompt (stage 0) or the scoring prompt (stage 1)."""
        if item.stage == EXTRACT:
            return JudgePrompt(user=extract_prompt(item.answer))
        return JudgePrompt(user=score_prompt(item.sample.question, _gold(item), item.earlier[-1]))

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The extraction (stage 0), or the judgement with the extraction (stage 1)."""
        if item.stage == EXTRACT:
            extraction = read_extraction(reply)
            return None if extraction is None else Reading(reading=extraction)
        value = read_judgement(reply)
        if value is None:
            return None
        return Reading(value=value, reading=item.earlier[-1])

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The scoring's judgement (None before the scoring stage has one)."""
        return first_verdict(judgements)


MATHVERSE_JUDGE = JUDGE_PROTOCOLS.register("mathverse-judge")(MathVerseJudge())
