"""CharXiv's reasoning grader: ``charxiv-reasoning-grade``.

CharXiv's reasoning questions are graded by GPT-4o (princeton-nlp/CharXiv @ 7ebe88f,
``src/evaluate.py`` in ``reasoning`` mode; ``src/reasoning_utils.py``
``build_reasoning_grading_queries`` and ``get_reasoning_result_gpt``; prompts in
``src/constants.py``): one prompt per answer, ``REASONING_GRADING_PREFIX`` then the rules and
examples of the question's answer type (``REASONING_GRADING_INST[inst_category]``: text in the
chart, text in general, number in the chart, number in general), whose ``<|question|>``,
``<|ground_truth|>`` and ``<|response|>`` are replaced in that order (``str.replace``, so a
question holding ``<|ground_truth|>`` has it replaced too). The reply is a JSON object whose
``extracted_answer`` and ``score`` the code reads; ``src/get_stats.py`` counts a score that is
not 0 or 1 (Python's ``in [0, 1]``: ``True`` and ``1.0`` are 1) as an invalid 0.

Asked with gpt-4o-2024-05-13, JSON mode, temperature 0, top_p 1, seed 42, 256 tokens. A reply
that is no JSON object holding both keys is asked again (up to 10 times, the token limit
doubled up to 1024 for a cut-off one), then stored as score -1, which ``get_stats.py`` counts 0.

Departures: lmmprobe does not ask again: such a reply leaves the answer ``unjudged``, which the
figure counts 0 as ``get_stats.py`` counts the -1; the judge is not put in JSON mode (lmmprobe's
backends send no ``response_format``), so a judge that wraps its JSON in other text is
unreadable. A reply is read only up to `REPLY_LIMIT` characters (the reference's replies are at
most 1024 tokens).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from lmmprobe.judge.protocol import (
    JUDGE_PROTOCOLS,
    JudgeItem,
    JudgePrompt,
    JudgeWhen,
    Reading,
    first_verdict,
    within_limit,
)
from lmmprobe.schema import GenerationParams, Judgement, Sample

__all__ = [
    "GRADING_INST",
    "GRADING_PREFIX",
    "CharXivReasoningGrade",
    "grading_prompt",
    "read_grade",
]

CHARXIV_COMMIT = "7ebe88f78dee387691551f071abcb2b9e1a8025b"
SOURCE = f"princeton-nlp/CharXiv@{CHARXIV_COMMIT}:src/constants.py"

GRADING_PREFIX = """
You will be given a question, an ground truth answer and a model response. You need to extract the final answer from the model response, compare it with the ground truth answer, and then assign a binary score. Avoid providing explanations in your response. If there is no provided model response, please leave the extracted answer empty and give a score of 0.\x20

Your response must follow json formats with keys [extract_answer, score] where the value of the score is an interger in [0, 1]. You must follow the scoring rules:\n"""

GRADING_INST: dict[int, str] = {
    1: """
    ### Rules ###
    * Give a score of 1 if and only if the final answer and the ground truth answer are referring to the same term. It's acceptable to have different grammar or form (e.g., α and alpha; $R^2_{t,h,v,m}$ and R^2_t,h,v,m). It's also acceptable to have different orders of the terms when question asks for multiple terms.
    * Give a score of 0 if any term (e.g., ACC+ and ACC; P-101 and P=101) is different between the final answer and the ground truth.

    ### Example 1 Starts ###
    * Question: What is the name of the curve that intersects y=\\lambda exactly three times?
    * Ground Truth: P56962
    * Response: There is only one curve that intersects y=\\lambda exactly three times. The name of the curve is written as P55762.
\x20\x20\x20\x20
    {
        "extracted_answer": "P55762",
        "score": 0
    }
    ### Example 1 Ends ###


    ### Example 2 Starts ###
    * Question: What is the letter of the subplot where all bars are above 35?
    * Ground Truth: (b)
    * Response: The letter of the subplot where all bars are above 35 is b.

    {
        "extracted_answer": "b",
        "score": 1
    }
    ### Example 2 Ends ###

    ### Your Turn ###
    * Question: <|question|>
    * Ground Truth: <|ground_truth|>
    * Response: <|response|>

    """,
    2: """
    ### Rules ###
    * If there are predefined options in the question:
        * Give a score of 1 if the final answer matches the ground truth answer exactly.
        * Give a score of 0 if the final answer does not match the ground truth answer.
    * If there are no predefined options in the question:
        * Give a score of 1 if the final answer shares the same semantic meaning with the ground truth answer (e.g., "increasing then decreasing" and "moving up then down"; "converge" and "move closer together").
        * Give a score of 0 if the final answer shares different semantic meanings from the ground truth answer (e.g., "increasing then decreasing" and "remain constant"; "converge" and "diverge").

    ### Example 1 Starts ###
    * Question: What is the trend of the red curve between t=10 and t=25?
    * Ground Truth: increasing then decreasing
    * Response: The red curve is increasing between t=10 and t=25.

    {
        "extracted_answer": "increasing",
        "score": 0
    }
    ### Example 1 Ends ###

    ### Example 2 Starts ###
    * Question: What is the interval where the blue curve achieves the maximum value among [0, 50], [50, 100], [100, 150], and [150, 200]?
    * Ground Truth: [50, 100]
    * Response: The interval where the blue curve achieves the maximum value is [50, 100].

    {
        "extracted_answer": "[50, 100]",
        "score": 1
    }
    ### Example 2 Ends ###

    ### Your Turn ###
    * Question: <|question|>
    * Ground Truth: <|ground_truth|>
    * Response: <|response|>

    """,
    3: """
    ### Rules ###
    * Give a score of 1 if and only if the two numbers are exactly equal in values. It's acceptable to have different notations (e.g., 0.01 and 10^-2; 1500 and 1.5e3).
    * Give a score of 0 if the two numbers are different in values.

    ### Example 1 Starts ###
    * Question: What is the value of the red curve at t=10?
    * Ground Truth: 0.01
    * Response: The value of the red curve at t=10 is 0.012.

    {
        "extracted_answer": "0.012",
        "score": 0
    }
    ### Example 1 Ends ###

    ### Example 2 Starts ###
    * Question: What is the value of the blue curve at t=50?
    * Ground Truth: 1500
    * Response: The value of the blue curve at t=50 is 1.5e3.

    {
        "extracted_answer": "1.5e3",
        "score": 1
    }
    ### Example 2 Ends ###

    ### Your Turn ###
    * Question: <|question|>
    * Ground Truth: <|ground_truth|>
    * Response: <|response|>

    """,
    4: """
    ### Rules ###
    * Give a score of 1 if and only if the two numbers are exactly equal in values. It's acceptable to have different notations (e.g., 0.01 and 10^-2; 1500 and 1.5e3).
    * Give a score of 0 if the two numbers are different in values.

    ### Example 1 Starts ###
    * Question: What is the value of the red curve at t=10?
    * Ground Truth: 0.01
    * Response: The value of the red curve at t=10 is 0.012.

    {
        "extracted_answer": "0.012",
        "score": 0
    }
    ### Example 1 Ends ###

    ### Example 2 Starts ###
    * Question: What is the value of the blue curve at t=50?
    * Ground Truth: 1500
    * Response: The value of the blue curve at t=50 is 1.5e3.

    {
        "extracted_answer": "1.5e3",
        "score": 1
    }
    ### Example 2 Ends ###

    ### Your Turn ###
    * Question: <|question|>
    * Ground Truth: <|ground_truth|>
    * Response: <|response|>

    """,
}

"""``src/constants.py`` ``REASONING_GRADING_PREFIX`` and ``REASONING_GRADING_INST`` as Python
reads them (written here with ``\\lambda``'s backslash escaped and a line's trailing spaces as
``\\x20``, which the linter would strip: the same text; the parity test compares them)."""


def grading_prompt(inst_category: int, question: str, ground_truth: str, response: str) -> str:
    """``build_reasoning_grading_queries``' prompt for one answer (replacements in its order)."""
    return GRADING_PREFIX + (
        GRADING_INST[inst_category]
        .replace("<|question|>", question)
        .replace("<|ground_truth|>", ground_truth)
        .replace("<|response|>", response)
    )


def read_grade(reply: str) -> tuple[str, float] | None:
    """(extracted answer, score) as ``get_stats.py`` counts it; None where the code asks again.

    The reply must be a JSON object with ``extracted_answer`` and ``score``; a score that is
    not 0 or 1 (``score not in [0, 1]``) counts 0.
    """
    text = within_limit(reply)
    if text is None:
        return None
    try:
        content = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(content, dict) or "extracted_answer" not in content or "score" not in content:
        return None
    score = content["score"]
    # Python's own comparison, as the reference's: True == 1 and 1.0 == 1.
    right = score in [0, 1] and score == 1
    return str(content["extracted_answer"]), 1.0 if right else 0.0


@dataclass
class CharXivReasoningGrade:
    """CharXiv's reasoning grader: the judge extracts the answer and scores it 0 or 1."""

    name: str = "charxiv-reasoning-grade"
    version: str = "princeton-nlp/CharXiv@7ebe88f"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=256, temperature=0.0, top_p=1.0)
    )

    def applies(self, item: JudgeItem) -> bool:
        """An answer (not failed, not cut off) to a CharXiv reasoning question.

        The grading prompt is built from the question's ``inst_category`` and ``raw_question``;
        an answer to other data has neither, so it is not this protocol's to grade.
        """
        return (
            item.score.error_type is None
            and item.score.stage not in ("error", "truncated")
            and self.fits(item.sample)
        )

    def fits(self, sample: Sample) -> bool:
        """`applies` of an answer to `sample`, the sample's part: its category and question."""
        m = sample.metadata
        category = m.get("inst_category")
        return (
            isinstance(category, int)
            and not isinstance(category, bool)
            and category in GRADING_INST
            and isinstance(m.get("raw_question"), str)
        )

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: every answer is graded by the judge."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The grading prompt of the question's answer type."""
        m = item.sample.metadata
        answer = item.sample.answer
        truth = answer[0] if isinstance(answer, list) and answer else str(answer)
        category = int(m["inst_category"])
        return JudgePrompt(
            user=grading_prompt(category, str(m["raw_question"]), truth, item.answer)
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The score (1.0 or 0.0) with the extracted answer; None for a reply asked again."""
        grade = read_grade(reply)
        if grade is None:
            return None
        extracted, value = grade
        return Reading(value=value, reading=extracted)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The score is 1."""
        return first_verdict(judgements)


CHARXIV_REASONING_GRADE = JUDGE_PROTOCOLS.register("charxiv-reasoning-grade")(
    CharXivReasoningGrade()
)
