"""LLaVA-Bench (In-the-Wild)'s review: ``llava-wild-review``.

The official review (haotian-liu/LLaVA @ c121f04, ``llava/eval/eval_gpt_review_bench.py``: the
content built from the image's caption, the question, the reference answer as "Assistant 1"
and the model's answer as "Assistant 2", the system message and temperature 0.2;
``llava/eval/table/rule.json`` entries ``llava_bench_conv``, ``llava_bench_detail`` and
``llava_bench_complex``, whose prompt and role are the same; ``parse_score``) asks GPT-4 for a
1-10 score of each answer on the reply's first line. ``llava/eval/summarize_gpt_review.py``
then averages the score pairs per category and over all, rounds the two means to 3 decimals
and reports the relative score round(model / reference x 100, 1).

Departures: a reply whose first line is not two numbers is ``unjudged``; the reference stores
the pair [-1, -1] and averages it in. A pair read (as ``parse_score`` reads it) with a score
outside the 1-10 the prompt asks for (``8 -1e6``, ``10 1e300``, ``0 5``) is ``unjudged`` too,
its reason naming the score: the reference would average it in, and one such reply would set
the run's figure to any value (re-test 11 #18).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.schema import GenerationParams, Judgement

__all__ = [
    "REVIEW_PROMPT",
    "REVIEW_ROLE",
    "REVIEW_SYSTEM",
    "LlavaWildReview",
    "llava_content",
    "llava_scores",
    "off_scale",
]

SOURCE = (
    "haotian-liu/LLaVA@c121f0432da27facab705978f83c4ada465e46fd:llava/eval/eval_gpt_review_bench.py"
)

REVIEW_SYSTEM = "You are a helpful and precise assistant for checking the quality of the answer."
"""``get_eval``'s system message."""

REVIEW_ROLE = "Assistant"
"""``rule.json``'s role of the ``llava_bench_*`` entries."""

REVIEW_PROMPT = (
    "We would like to request your feedback on the performance of two AI assistants in response to the user question displayed above. The user asks the question on observing an image. For your reference, the visual content in the image is represented with a few sentences describing the image. \n"
    "Please rate the helpfulness, relevance, accuracy, level of details of their responses. Each assistant receives an overall score on a scale of 1 to 10, where a higher score indicates better overall performance.\n"
    "Please first output a single line containing only two values indicating the scores for Assistant 1 and 2, respectively. The two scores are separated by a space.\n"
    "In the subsequent line, please provide a comprehensive explanation of your evaluation, avoiding any potential bias and ensuring that the order in which the responses were presented does not affect your judgment."
)
"""``rule.json``'s prompt of the ``llava_bench_*`` entries, byte for byte."""


def llava_content(caption: str | list[str], question: str, reference: str, answer: str) -> str:
    """The review's user content: context, question, reference (1) and answer (2), the rule."""
    context = "\n".join(caption) if isinstance(caption, list) else caption
    role = REVIEW_ROLE
    return (
        f"[Context]\n{context}\n\n"
        f"[Question]\n{question}\n\n"
        f"[{role} 1]\n{reference}\n\n[End of {role} 1]\n\n"
        f"[{role} 2]\n{answer}\n\n[End of {role} 2]\n\n"
        f"[System]\n{REVIEW_PROMPT}\n\n"
    )


def llava_scores(review: str) -> tuple[float, float] | None:
    """``parse_score``: the first line's two numbers (commas as spaces); None where it fails."""
    words = review.split("\n")[0].replace(",", " ").split(" ")
    if len(words) != 2:
        return None
    try:
        pair = (float(words[0]), float(words[1]))
    except ValueError:
        return None
    return pair if all(math.isfinite(x) for x in pair) else None


SCALE: tuple[float, float] = (1.0, 10.0)
"""The scores the prompt asks for ("a scale of 1 to 10"); a score outside is no verdict."""


def off_scale(pair: tuple[float, float]) -> str | None:
    """Why a score pair read is no verdict (a score outside `SCALE`), or None when it is one."""
    low, high = SCALE
    for who, score in zip(("reference", "answer"), pair, strict=True):
        if not low <= score <= high:
            shown = f"{score:.6g}"
            return f"the judge's score {shown} for the {who} is outside {low:g}-{high:g}"
    return None


@dataclass
class LlavaWildReview:
    """LLaVA-Bench's review: the judge scores the reference answer and the model's, 1-10."""

    name: str = "llava-wild-review"
    version: str = "haotian-liu/LLaVA@c121f04"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=1024, temperature=0.2)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: every answer is reviewed."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The review of the answer beside the sample's reference answer (its first)."""
        m = item.sample.metadata
        answer = item.sample.answer
        reference = answer[0] if isinstance(answer, list) and answer else str(answer)
        caption = m.get("caption")
        if not isinstance(caption, list):
            caption = "" if caption is None else str(caption)
        return JudgePrompt(
            user=llava_content(caption, item.sample.question, reference, item.answer),
            system=REVIEW_SYSTEM,
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The model's score as `Reading.value`, the reference's as ``detail["reference"]``."""
        pair = llava_scores(reply)
        if pair is None:
            return None
        # Read as parse_score reads it; only a pair within the scale asked for is a verdict.
        return Reading(value=pair[1], detail={"reference": pair[0]}, refused=off_scale(pair))

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """None: the review is a score (its metric is the relative score)."""
        return None


LLAVA_WILD_REVIEW = JUDGE_PROTOCOLS.register("llava-wild-review")(LlavaWildReview())
