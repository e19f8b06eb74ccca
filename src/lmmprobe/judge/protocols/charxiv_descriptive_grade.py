r"""CharXiv's descriptive grader: ``charxiv-descriptive-grade``, five answers a judge prompt.

CharXiv's descriptive questions are graded by GPT-4o (princeton-nlp/CharXiv @ 7ebe88f,
``src/evaluate.py`` in ``descriptive`` mode; ``src/descriptive_utils.py``; prompts in
``src/constants.py``) several answers at a time: ``preprocess_descriptive_grading_queries``
puts the answers in lists by question template (1 to 19), each in the data's order (figure by
figure, a figure's four questions in order), and ``build_descriptive_grading_queries`` cuts each
list five at a time, the last piece taking what is left. One prompt per piece:
``DESCRIPTIVE_GRADING_PREFIX`` with ``<|NUM_TRIPLETS|>`` (the piece's size), the template's
overarching question (``DESCRIPTIVE_GRADING_QMAP``) and ``<|JSON_KEYS|>`` (the Python list
``['extract_answer_T1', 'score_T1', ...]`` as ``str`` writes it) replaced in that order, then the
template's rubric with its worked example (``get_rubric``: ``DESCRIPTIVE_GRADING_ICL``), then
``T{i}:\nResponse {i}: RESPONSE\nGround Truth {i}: ANSWER\n\n`` for each answer. The judging
step forms these groups over the whole run (`lmmprobe.judge.step.group_asks`): this module
gives the grouping key, the prompt and the reading.

The reply is read as ``get_descriptive_result_gpt`` reads it: ``json.loads`` of the reply, then
``verify_grading_output``: for every answer T1..Tn, ``extract_answer_Ti`` and ``score_Ti``
present and the score 0 or 1 (Python's ``in [0, 1]``: ``True`` and ``1.0`` are 1). A reply
failing any of this for any answer is refused whole: the code asks again (up to 10 times, the
token limit doubled up to 1024 for a cut-off reply), then stores -1 for every answer of the
group, which ``get_stats.py`` counts 0 (and as ``N_invalid``). Keys beyond Tn are ignored.

Asked with gpt-4o-2024-05-13, JSON mode, temperature 0, top_p 1, seed 42, 256 tokens.

Departures: lmmprobe does not ask again: a refused reply leaves every answer of its group
``unjudged``, which the figure counts 0 as ``get_stats.py`` counts the -1; the judge is not put
in JSON mode (lmmprobe's backends send no ``response_format``). The reference merges the reply's
keys into its query record (``{**query, **result}``), so a reply holding a ``resp_keys`` key
would change which answers its scores go to; lmmprobe reads only the ``extract_answer_Ti`` and
``score_Ti`` keys. A reply is read only up to `REPLY_LIMIT` characters. An answer that
failed or was cut off is not graded (as for every protocol), so it is in no group and the later
answers of its template move up one place; the script grades whatever text its generation step
stored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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
    "GRADING_ICL",
    "GRADING_PREFIX",
    "GRADING_QUESTIONS",
    "CharXivDescriptiveGrade",
    "grading_prompt",
    "read_grades",
    "rubric",
]

CHARXIV_COMMIT = "7ebe88f78dee387691551f071abcb2b9e1a8025b"
SOURCE = f"princeton-nlp/CharXiv@{CHARXIV_COMMIT}:src/constants.py"
BATCH = 5
"""``build_descriptive_grading_queries``' ``nq_per_query``: answers per grading prompt."""

GRADING_PREFIX = """
You will be given <|NUM_TRIPLETS|> pairs of ground truth answers and model responses under an overarching question. You need to go through each of the pairs, extract the final answer from the model response, compare it with the ground truth answer, and then assign a binary score. Avoid providing explanations in your response. If there is no provided model response, please leave the extracted answer empty and give a score of 0. Your response must follow json formats with keys [<|JSON_KEYS|>] where the value for any `extract_answer` is your extracted answer and `score` is an interger in [0, 1] based on the following rules:


Overarching Question: <|OVERARCHING_QUESTION|>
"""
"""``DESCRIPTIVE_GRADING_PREFIX`` as Python reads it (its ``\\n`` is a line break)."""

GRADING_QUESTIONS: dict[int, str] = {
    1: "What is the title of the plot?",
    2: "What is the label of the x-axis?",
    3: "What is the label of the y-axis?",
    4: "What is the leftmost labeled tick on the x-axis?",
    5: "What is the rightmost labeled tick on the x-axis?",
    6: "What is the spatially lowest labeled tick on the y-axis?",
    7: "What is the spatially highest labeled tick on the y-axis?",
    8: "What is difference between consecutive numerical tick values on the x-axis?",
    9: "What is difference between consecutive numerical tick values on the y-axis?",
    10: "How many lines are there?",
    11: "Do any lines intersect?",
    12: "How many discrete labels are there in the legend?",
    13: "What are the names of the labels in the legend? (from top to bottom, then left to right)",
    14: "What is the difference between the maximum and minimum values of the tick labels on the continuous legend (i.e., colorbar)?",
    15: "What is the maximum value of the tick labels on the continuous legend (i.e., colorbar)?",
    16: "What is the general trend of data from left to right?",
    17: "What is the total number of explicitly labeled ticks across all axes?",
    18: "What is the layout of the subplots?",
    19: "What is the number of subplots?",
}
"""``DESCRIPTIVE_GRADING_QMAP``: the overarching question of each template."""

GRADING_ICL: dict[str, str] = {
    "title": """
Rubric:\x20
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are referring to the same term. It's acceptable to have different grammar or form (e.g., α and alpha; $R^2_{t,h,v,m}$ and R^2_t,h,v,m). It's acceptable to omit letter prefixes (e.g., (a) Increment over time and Increment over time).
    * Give a score of 0 if any term in the extracted answer is different from the ground truth answer.
    * When ground truth answer is "Not Applicable", the response must express "Not Applicable" to receive a score of 1.

    ### Example Start ###
    T1:
    Response 1: The title of the plot is "The number of students in each grade".
    Ground Truth 1: The variance of students in each grade

    T2:
    Response 2: There is no title.
    Ground Truth 2: Not Applicable

    T3:
    Response 3: A_v^t
    Ground Truth 3: A^t_v

    {
        "extract_answer_T1": "The number of students in each grade",
        "score_T1": 0
        "extract_answer_T2: "Not Applicable",
        "score_T2": 1
        "extract_answer_T3": "A_v^t",
        "score_T3": 1
    }
    ### Example End ###\x20\x20\x20\x20\x20\x20\x20\x20
""",
    "ocr": """
Rubric:\x20
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are referring to the same term. It's acceptable to have equivalent grammar or form (e.g., α and alpha; $R^2_{t,h,v,m}$ and R^2_t,h,v,m). If the ground truth is a number, the extracted answer should be the number with the exact same value.
    * Give a score of 0 if any term in the extracted answer is different from the ground truth answer, or if the extracted number is different in value from the ground truth number.
    * When ground truth answer is "Not Applicable", the response must express "Not Applicable" to receive a score of 1.

    ### Example Start ###
    T1:
    Response 1: The answer is 1.0
    Ground Truth 1: 1.00

    T2:
    Response 2: By manually inspecting the plot, the final answer should be 0.
    Ground Truth 2: Not Applicable

    T3:
    Response 3: A_v^t
    Ground Truth 3: A^t_v

    {
        "extract_answer_T1": 1.0,
        "score_T1": 1
        "extract_answer_T2: 0,
        "score_T2": 0
        "extract_answer_T3": "A_v^t",
        "score_T3": 1
    }
    ### Example End ###\x20\x20\x20\x20\x20\x20\x20\x20
""",
    "quant": """
Rubric:
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are numbers with the exact same value.
    * Give a score of 0 if the extracted answer is different in value from the ground truth answer.
    * When ground truth answer is "Not Applicable", the response must express "Not Applicable" to receive a score of 1.

    ### Example Start ###
    T1:
    Response 1: 5
    Ground Truth 1: 6

    T2:
    Response 2: 0
    Ground Truth 2: Not Applicable

    T3:
    Response 3: 4
    Ground Truth 3: 4

    {
        "extract_answer_T1": 5,
        "score_T1": 0
        "extract_answer_T2: 0,
        "score_T2": 0
        "extract_answer_T3": 4,
        "score_T3": 1
    }
    ### Example End ###\x20\x20\x20
""",
    "bool": """
Rubric:
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are the same.
    * Give a score of 0 if the extracted answer and the ground truth answer are different.
    * When ground truth answer is "Not Applicable", the response must express "Not Applicable" to receive a score of 1.

    ### Example Start ###
    T1:
    Response 1: No, there are no intersections.
    Ground Truth 1: no

    T2:
    Response 2: No, all the lines are parallel.
    Ground Truth 2: Yes

    T3:
    Response 3: There are no lines in the plot.
    Ground Truth 3: Not Applicable

    {
        "extract_answer_T1": "No",
        "score_T1": 1
        "extract_answer_T2: "No",
        "score_T2": 0
        "extract_answer_T3": "Not Applicable",
        "score_T3": 1
    }
    ### Example End ###\x20\x20\x20
""",
    "enum": """
Rubric:
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are referring to the same term. It's acceptable to have equivalent grammar or form (e.g., α and alpha; $R^2_{t,h,v,m}$ and R^2_t,h,v,m). The order of the terms must be the same.
    * Give a score of 0 if any term in the extracted answer is different from the ground truth answer, or if the order of the terms is different.
    * When ground truth answer is "Not Applicable", the response must express "Not Applicable" to receive a score of 1.

    ### Example Start ###
    T1:
    Response 1: Here are the names of the labels: A, B, C
    Ground Truth 1: B, A, C

    T2:
    Response 2: The labels are T56, B33.
    Ground Truth 2: T56,B33,A12

    T3:
    Response 3: \x07lpha, \x08eta, \\gamma^t_v
    Ground Truth 3: α, β, γ_v^t

    {
        "extract_answer_T1": "A, B, C",
        "score_T1": 0
        "extract_answer_T2: "T56, B33",
        "score_T2": 0
        "extract_answer_T3": "\x07lpha, \x08eta, \\gamma^t_v",
        "score_T3": 1
    }
    ### Example End ###
""",
    "trend": """
Rubric:
    * Give a score of 1 if and only if the extracted answer and the ground truth answer share the same general trend.
    * Give a score of 0 if the extracted answer and the ground truth answer are different in trend expression.

    ### Example Start ###
    T1:
    Response 1: there is an increase in the data from left to right
    Ground Truth 1: Decreases

    T2:
    Response 2: the curves move up and stay constant
    Ground Truth 2: Increases then stabilizes

    T3:
    Response 3: Decreases
    Ground Truth 3: Decreases then increases

    {
        "extract_answer_T1": "Increases",
        "score_T1": 0
        "extract_answer_T2: "Move up and stay constant",
        "score_T2": 1
        "extract_answer_T3": "Decreases",
        "score_T3": 0
    }
    ### Example End ###
""",
    "layout": """
Rubric:
    * Give a score of 1 if and only if the extracted answer and the ground truth answer are the same in terms of the number of rows and columns (e.g., n by m).
    * Give a score of 0 if the extracted answer is different from the ground truth answer.

    ### Example Start ###
    T1:
    Response 1: 2 by 3
    Ground Truth 1: 3 by 2

    T2:
    Response 2: the layout is 1 by 1
    Ground Truth 2: 1 by 1

    T3:
    Response 3: there are two rows and three columns
    Ground Truth 3: 2 by 3

    {
        "extract_answer_T1": "2 by 3",
        "score_T1": 0
        "extract_answer_T2: "1 by 1",
        "score_T2": 1
        "extract_answer_T3": "2 by 3",
        "score_T3": 1
    }
    ### Example End ###
""",
}
"""``DESCRIPTIVE_GRADING_ICL`` as Python reads it: in ``enum``, ``\\alpha`` and ``\\beta`` are the
escapes ``\\a`` (BEL) and ``\\b`` (backspace), written here ``\\x07`` and ``\\x08``; a line's
trailing spaces are written ``\\x20``, which the formatter would strip (the parity test compares
the prompts byte for byte)."""

_RUBRIC = {
    **dict.fromkeys([1], "title"),
    **dict.fromkeys([2, 3, 4, 5, 6, 7], "ocr"),
    **dict.fromkeys([8, 9, 10, 12, 14, 15, 17, 19], "quant"),
    **dict.fromkeys([11], "bool"),
    **dict.fromkeys([13], "enum"),
    **dict.fromkeys([16], "trend"),
    **dict.fromkeys([18], "layout"),
}


def rubric(qid: int) -> str:
    """``get_rubric``: the rubric and worked example of template `qid`."""
    return GRADING_ICL[_RUBRIC[qid]]


def _json_keys(n: int) -> str:
    """``build_json_keys``: the keys the reply must hold, as ``str`` of a Python list."""
    return str([k for i in range(1, n + 1) for k in (f"extract_answer_T{i}", f"score_T{i}")])


def grading_prompt(qid: int, pairs: Sequence[tuple[str, str]]) -> str:
    """The prompt grading `pairs` (response, ground truth) of template `qid`, in order.

    ``build_descriptive_grading_queries`` for one piece: the prefix's replacements in its order
    (``str.replace``: a question template holding a later placeholder would have it replaced
    too), the rubric, then ``populate_grading_inputs``.
    """
    head = (
        GRADING_PREFIX.replace("<|NUM_TRIPLETS|>", str(len(pairs)))
        .replace("<|OVERARCHING_QUESTION|>", GRADING_QUESTIONS[qid])
        .replace("<|JSON_KEYS|>", _json_keys(len(pairs)))
    )
    body = "".join(
        f"T{i}:\nResponse {i}: {response}\nGround Truth {i}: {truth}\n\n"
        for i, (response, truth) in enumerate(pairs, start=1)
    )
    return head + rubric(qid) + body


def read_grades(reply: str, n: int) -> list[tuple[str, float]] | None:
    """(extracted answer, score) of each of `n` answers; None where the code asks again.

    ``verify_grading_output``: the reply is a JSON object holding ``extract_answer_Ti`` and
    ``score_Ti`` for i in 1..n, each score 0 or 1 as Python's ``in [0, 1]`` has it.
    """
    text = within_limit(reply)
    if text is None:
        return None
    try:
        content: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(content, dict):
        return None
    out = []
    for i in range(1, n + 1):
        extracted, score = content.get(f"extract_answer_T{i}"), content.get(f"score_T{i}")
        if f"extract_answer_T{i}" not in content or f"score_T{i}" not in content:
            return None
        # Python's own comparison, as the reference's: True == 1 and 1.0 == 1.
        if score not in [0, 1]:
            return None
        out.append((str(extracted), 1.0 if score == 1 else 0.0))
    return out


def _truth(item: JudgeItem) -> str:
    answer = item.sample.answer
    return answer[0] if isinstance(answer, list) and answer else str(answer)


@dataclass
class CharXivDescriptiveGrade:
    """CharXiv's descriptive grader: the judge scores five answers of one template a prompt."""

    name: str = "charxiv-descriptive-grade"
    version: str = "princeton-nlp/CharXiv@7ebe88f"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=256, temperature=0.0, top_p=1.0)
    )
    batch: int = BATCH

    def applies(self, item: JudgeItem) -> bool:
        """An answer (not failed, not cut off) to a question of one of CharXiv's templates."""
        return (
            item.score.error_type is None
            and item.score.stage not in ("error", "truncated")
            and self.fits(item.sample)
        )

    def fits(self, sample: Sample) -> bool:
        """`applies` of an answer to `sample`, the sample's part: a CharXiv template's qid."""
        qid = sample.metadata.get("qid")
        return isinstance(qid, int) and not isinstance(qid, bool) and qid in GRADING_QUESTIONS

    def group(self, item: JudgeItem) -> str:
        """The question's template: answers of one template share prompts."""
        return str(item.sample.metadata["qid"])

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: every answer is graded by the judge."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The prompt grading `item` alone (a group of one, as the last of a template can be)."""
        return self.prompt_group([item])

    def prompt_group(self, items: Sequence[JudgeItem]) -> JudgePrompt:
        """The one prompt grading `items`, answers of one template in the data's order."""
        qid = int(items[0].sample.metadata["qid"])
        return JudgePrompt(user=grading_prompt(qid, [(i.answer, _truth(i)) for i in items]))

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The verdict of a reply about `item` alone."""
        return self.read_group(reply, [item])[0]

    def read_group(self, reply: str, items: Sequence[JudgeItem]) -> list[Reading | None]:
        """Each answer's score (1.0 or 0.0) and extraction; all None for a reply asked again."""
        grades = read_grades(reply, len(items))
        if grades is None:
            return [None] * len(items)
        return [Reading(value=value, reading=extracted) for extracted, value in grades]

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The score is 1."""
        return first_verdict(judgements)


CHARXIV_DESCRIPTIVE_GRADE = JUDGE_PROTOCOLS.register("charxiv-descriptive-grade")(
    CharXivDescriptiveGrade()
)
