"""HallusionBench's correctness check by a judge: ``hallusionbench-correct``.

The official evaluation (tianyi-lab/HallusionBench @ 744007c, ``utils.py``
``evaluate_by_chatgpt``, run by ``evaluation.py``) asks GPT-4 whether each answer conflicts with
the reference answer (``gt_answer_details``) and reads the reply by substring: ``incorrect``
anywhere (any case) is wrong ("0"), else ``correct`` is right ("1"), else unclear ("2"). Its
quirks are kept where it reads a reply ("not correct" holds ``correct`` and counts as right).

Departure (docs/definitions.md): the reference's "2" is also its default for a reply holding
none of its answers (empty, or neither ``correct`` nor ``unclear`` in it), which its metrics
then score (a figure-less visual-supplement question's "2" counts as right). Here such a reply
is unreadable and the answer ``unjudged``, never a guessed verdict; "2" is read only where the
judge said ``unclear``. Every answer goes to the judge (there are no rules first). aAcc, fAcc and qAcc are then computed from
these verdicts (``assign_correctness``, ``get_eval_all``, ``get_eval_fig``,
``get_eval_pair_all``: `lmmprobe.metrics.benchmark_choice.hallusion_scores`).

``check_same_by_chatgpt`` (the consistency check feeding only the failure analysis, not the
three accuracies) is not part of this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.schema import GenerationParams, Judgement

__all__ = ["HallusionBenchCorrect", "hallusion_prompt", "hallusion_reading"]

SOURCE = "tianyi-lab/HallusionBench@744007c232c292942c7f80eb61edb2465482da31:utils.py"


def hallusion_prompt(question: str, reference: str, prediction: str) -> str:
    """``evaluate_by_chatgpt``'s prompt, byte for byte (its curly quotes included)."""
    return (
        "Imagine you are an intelligent teacher. Thoroughly read the question, reference answer "
        "and the prediction answer to ensure a clear understanding of the information provided. "
        "Assess the correctness of the predictions. "
        "If the prediction answer does not conflict with the reference answer, please generate "
        "“correct”. If the prediction answer conflict with the reference answer, please generate "
        "“incorrect”. If the prediction answer is unclear about the answer, please generate "
        '"unclear". \n\n Question:'
        + question
        + "\nReference answer: "
        + reference
        + "\nPrediction answer:"
        + prediction
        + "\nOutput:"
    )


def hallusion_reading(reply: str) -> str | None:
    """``evaluate_by_chatgpt``'s reading: "0" wrong, "1" right, "2" unclear.

    None where the reply holds none of the reference's answers (``incorrect``, ``correct``,
    ``unclear``): the reference defaults such a reply to "2"; here it is unreadable (module
    docstring).
    """
    text = reply.lower()
    if "incorrect" in text:
        return "0"
    if "correct" in text:
        return "1"
    if "unclear" in text:
        return "2"
    return None


@dataclass
class HallusionBenchCorrect:
    """HallusionBench's correctness check: the judge compares the answer with the reference."""

    name: str = "hallusionbench-correct"
    version: str = "tianyi-lab/HallusionBench@744007c"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 1
    # The reference sets no decoding parameters (the API's defaults).
    gen: GenerationParams = field(default_factory=lambda: GenerationParams(max_new_tokens=256))

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: the official protocol judges every answer."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The check about the sample's question, its ``gt_answer_details`` and the answer."""
        reference = item.sample.metadata.get("gt_answer_details")
        return JudgePrompt(
            user=hallusion_prompt(
                item.sample.question, "" if reference is None else str(reference), item.answer
            )
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The verdict ("0", "1", "2") as `Reading.reading`, 1.0/0.0 as its value; None if unread."""
        verdict = hallusion_reading(reply)
        if verdict is None:
            return None
        return Reading(value=1.0 if verdict == "1" else 0.0, reading=verdict)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """Right only on "1" (a figure-less visual-supplement question's "2" is scored by the metric)."""
        for j in judgements:
            if j.decided_by != "unjudged" and j.reading is not None:
                return j.reading == "1"
        return None


HALLUSIONBENCH_CORRECT = JUDGE_PROTOCOLS.register("hallusionbench-correct")(HallusionBenchCorrect())
