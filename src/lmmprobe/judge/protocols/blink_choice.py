"""BLINK's choice matching with a judge fallback: ``blink-choice``.

VLMEvalKit (open-compass/VLMEvalKit @ e8e78f0, ``vlmeval/dataset/utils/multiple_choice.py``
``extract_answer_from_item``) reads BLINK's answers as it reads every image MCQ's
(`mmbench-choice`: its rules first, a judge only where they cannot read a letter), but asks the
judge with ``build_prompt_blink``: BLINK's own examples (a refusal and a reply naming no option
read as ``Z``). Only the prompt differs from ``mmbench-choice``; the same departure holds (no
random option after three unreadable replies: the answer is ``unjudged``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt
from lmmprobe.judge.protocols.mmbench_choice import MMBenchChoice, shown_options

__all__ = ["BlinkChoice", "blink_prompt"]

_TEMPLATE = (
    "You are an AI assistant who will help me to match an answer with several options of a "
    "single-choice question. "
    "You are provided with a question, several options, and an answer, "
    "and you need to find which option is most similar to the answer. "
    "If the answer says things like refuse to answer, I'm sorry cannot help, etc., output Z."
    "If the meaning of all options are significantly different from the answer, "
    "or the answer does not select any option, output Z. "
    "Your should output one of the choices, A, B, C, D (if they are valid options), or Z.\n"
    "Example 1: \n"
    "Question: Which point is closer to the camera?\nSelect from the following choices.\n"
    "Options: A. Point A\nB. Point B\n(Z) Failed\n"
    "Answer: Point B, where the child is sitting, is closer to the camera.\nYour output: (B)\n"
    "Example 2: \n"
    "Question: Which point is closer to the camera?\nSelect from the following choices.\n"
    "Options: (A) Point A\n(B) Point B\n(Z) Failed\n"
    "Answer: I'm sorry, but I can't assist with that request.\nYour output: (Z)\n"
    "Example 3: \n"
    "Question: Which point is corresponding to the reference point?\nSelect from the following "
    "choices.\n"
    "Options: (A) Point A\n(B) Point B\n(Z) Failed\n"
    "Answer:The reference point (REF) on the first image is at the tip of the pot, "
    "which is the part used to Poke if the pots were used for that action. Looking at the "
    "second image, "
    "we need to find the part of the object that would correspond to poking.\n"
    "(A) Point A is at the tip of the spoon's handle, which is not used for poking.\n"
    "(B) Point B is at the bottom of the spoon, which is not used for poking.\n"
    "(C) Point C is on the side of the pspoonot, which is not used for poking.\n"
    "(D) Point D is at the tip of the spoon, which is not used for poking.\n"
    "\nTherefore, there is no correct answer in the choices\nYour output: (Z)\n"
    "Example 4: \n"
    "Question: {}?\nOptions: {}\n(Z) Failed\nAnswer: {}\nYour output: "
)


def blink_prompt(question: str, choices: Mapping[str, str], prediction: str) -> str:
    """``build_prompt_blink(question, build_option_str(choices), prediction)``, byte for byte."""
    options = "There are several options: \n" + "".join(
        f"{c}. {text}\n" for c, text in choices.items()
    )
    return _TEMPLATE.format(question, options, prediction)


@dataclass
class BlinkChoice(MMBenchChoice):
    """BLINK's option matching: VLMEvalKit's rules, its BLINK judge prompt where they fail."""

    name: str = "blink-choice"

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """``build_prompt_blink(question, build_option_str(choices), prediction)``."""
        return JudgePrompt(
            user=blink_prompt(item.sample.question, shown_options(item), item.answer)
        )


BLINK_CHOICE = JUDGE_PROTOCOLS.register("blink-choice")(BlinkChoice())
