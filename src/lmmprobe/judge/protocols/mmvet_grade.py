"""MM-Vet's 0-1 grader: ``mmvet-grade``.

The official grader (yuweihao/MM-Vet @ acde843, ``mm-vet_evaluator.py``: ``prompt``, ``runs``,
``export_result``) asks GPT-4 (temperature 0, at most 3 tokens) to complete a few-shot table
with a correctness score of the prediction against the ground truth, reads the first
space-separated word of the reply as a number in [0, 1], and averages the grades: per
capability and in total, each as sum / count x 100 per run, then the mean over runs (the paper
uses 5 runs: ``--num_run`` "we set it as 5 in the paper").

Departures: a reply that is no number in [0, 1] is ``unjudged`` (the reference asks again with
a second prompt and higher temperature, and after five tries scores 0.0); a reply reading
``nan`` is unreadable too (the reference would average a NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["GRADER_PROMPT", "MMVetGrade", "mmvet_grade", "mmvet_prompt"]

SOURCE = "yuweihao/MM-Vet@acde843e02dae30047bb456ee4a8ab28dee7e0ae:mm-vet_evaluator.py"

GRADER_PROMPT = """Compare the ground truth and prediction from AI models, to give a correctness score for the prediction. <AND> in the ground truth means it is totally right only when all elements in the ground truth are present in the prediction, and <OR> means it is totally right when any one element in the ground truth is present in the prediction. The correctness score is 0.0 (totally wrong), 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, or 1.0 (totally right). Just complete the last space of the correctness score.

Question | Ground truth | Prediction | Correctness
--- | --- | --- | ---
What is x in the equation? | -1 <AND> -5 | x = 3 | 0.0
What is x in the equation? | -1 <AND> -5 | x = -1 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -5 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -5 or 5 | 0.5
What is x in the equation? | -1 <AND> -5 | x = -1 or x = -5 | 1.0
Can you explain this meme? | This meme is poking fun at the fact that the names of the countries Iceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes, while Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues because the names of these countries do not accurately represent their landscapes. | The meme talks about Iceland and Greenland. It's pointing out that despite their names, Iceland is not very icy and Greenland isn't very green. | 0.4
Can you explain this meme? | This meme is poking fun at the fact that the names of the countries Iceland and Greenland are misleading. Despite its name, Iceland is known for its beautiful green landscapes, while Greenland is mostly covered in ice and snow. The meme is saying that the person has trust issues because the names of these countries do not accurately represent their landscapes. | The meme is using humor to point out the misleading nature of Iceland's and Greenland's names. Iceland, despite its name, has lush green landscapes while Greenland is mostly covered in ice and snow. The text 'This is why I have trust issues' is a playful way to suggest that these contradictions can lead to distrust or confusion. The humor in this meme is derived from the unexpected contrast between the names of the countries and their actual physical characteristics. | 1.0
"""
"""``mm-vet_evaluator.py`` ``prompt`` byte for byte."""


def mmvet_prompt(question: str, ground_truth: str, prediction: str) -> str:
    """The grading prompt of ``runs`` for one answer (its first try)."""
    truth = ground_truth.replace("<AND>", " <AND> ").replace("<OR>", " <OR> ")
    return GRADER_PROMPT + "\n" + " | ".join([question, truth, prediction, ""])


def mmvet_grade(reply: str) -> float | None:
    """``runs``' reading: the first space-separated word as a float in [0, 1]; None otherwise."""
    word = reply.split(" ")[0].strip()
    try:
        grade = float(word)
    except ValueError:
        return None
    if math.isnan(grade) or grade > 1.0 or grade < 0.0:
        return None
    return grade


@dataclass
class MMVetGrade:
    """MM-Vet's grader: a 0-1 correctness score against the ground truth, graded 5 times."""

    name: str = "mmvet-grade"
    version: str = "yuweihao/MM-Vet@acde843"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 5
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=3, temperature=0.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: every answer is graded."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The table with the question, the ground truth and the answer."""
        answer = item.sample.answer
        truth = answer[0] if isinstance(answer, list) and answer else str(answer)
        return JudgePrompt(user=mmvet_prompt(item.sample.question, truth, item.answer))

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The grade as `Reading.value`; None for a reply that is no grade."""
        grade = mmvet_grade(reply)
        return None if grade is None else Reading(value=grade)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """None: MM-Vet grades on a scale (its metric averages `Judgement.value`)."""
        return None


MMVET_GRADE = JUDGE_PROTOCOLS.register("mmvet-grade")(MMVetGrade())
