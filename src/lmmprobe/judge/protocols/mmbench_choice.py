"""MMBench's choice matching with a judge fallback: ``mmbench-choice``.

The official MMBench evaluation is VLMEvalKit's (open-compass/VLMEvalKit @ e8e78f0,
``vlmeval/dataset/utils/multiple_choice.py`` ``extract_answer_from_item``, ``build_prompt``,
``build_prompt_cn``; rules in ``vlmeval/utils/matching_util.py`` ``can_infer``): the rules read
an option letter from the answer (`can_infer`); only where they cannot does a judge get the
matching prompt, and its reply is read by the same rules.

Departure: after three judge replies the rules cannot read, VLMEvalKit picks a random option
(``rd.choice``). lmmprobe never guesses: the answer is ``unjudged`` (counted apart, judged again
on resume). A reply holding ``Failed to obtain answer via API`` is unreadable too, as there.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.metrics.benchmark_judged import mmbench_letter_correct
from lmmprobe.parse.vlmevalkit import can_infer
from lmmprobe.schema import GenerationParams, Judgement

__all__ = [
    "MMBenchChoice",
    "can_infer",
    "choice_prompt",
    "shown_options",
]

SOURCE = (
    "open-compass/VLMEvalKit@e8e78f05f3080fe28154f2130321f17951c3be94:"
    "vlmeval/dataset/utils/multiple_choice.py"
)


def shown_options(item: JudgeItem) -> dict[str, str]:
    """Option letter to text as the model saw them (`Score.options`, else the sample's)."""
    options = item.score.options or item.sample.choices or []
    return {string.ascii_uppercase[i]: text for i, text in enumerate(options)}


def _cn(text: str) -> bool:
    return re.search("[\u4e00-\u9fff]", text) is not None


def choice_prompt(question: str, choices: Mapping[str, str], prediction: str) -> str:
    """``build_prompt`` (``build_prompt_cn`` for a question in Chinese), byte for byte."""
    options = "There are several options: \n" + "".join(
        f"{c}. {text}\n" for c, text in choices.items()
    )
    if _cn(question):
        tmpl = (
            "你是一个帮助我匹配答案与单选题中多个选项的 AI 助手。"
            "你会被提供：一个问题，多个选项，一个答案。你的任务是找到与答案意义最相近的选项。"
            "如果所有选项的意义都与答案显著不同，则输出 Z。"
            "你应该输出一个单个的大写字母，例如 A, B, C, D（如果它们是有效选项），或 Z。"
            "例 1:"
            "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 一只可爱的泰迪熊\n输出: A\n"
            "例 2: \n"
            "问题: 图中最主要的物体是什么?\n选项: A. 泰迪熊 B. 兔子 C. 猫 D. 狗\n答案: 蜘蛛\n输出: Z\n"
            "例 3: \n"
            "问题: {}?\n选项: {}\n答案: {}\n输出: "
        )
    else:
        tmpl = (
            "You are an AI assistant who will help me to match "
            "an answer with several options of a single-choice question. "
            "You are provided with a question, several options, and an answer, "
            "and you need to find which option is most similar to the answer. "
            "If the meaning of all options are significantly different from the answer, output Z. "
            "Your should output a single uppercase character in A, B, C, D (if they are valid options), and Z. \n"
            "Example 1: \n"
            "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
            "Answer: a cute teddy bear\nYour output: A\n"
            "Example 2: \n"
            "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat D. dog\n"
            "Answer: Spider\nYour output: Z\n"
            "Example 3: \n"
            "Question: {}?\nOptions: {}\nAnswer: {}\nYour output: "
        )
    return tmpl.format(question, options, prediction)


@dataclass
class MMBenchChoice:
    """MMBench's option matching: VLMEvalKit's rules, a judge only where they fail."""

    name: str = "mmbench-choice"
    version: str = "open-compass/VLMEvalKit@e8e78f0"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("miss", "always")
    repeats: int = 1
    # VLMEvalKit's judge wrappers default to temperature 0; the reply is one letter.
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=2048, temperature=0.0)
    )

    def rule(self, item: JudgeItem) -> Reading | None:
        """``can_infer`` on the answer (``prefetch_answer``); None sends it to the judge."""
        letter = can_infer(item.answer, shown_options(item))
        return Reading(reading=letter) if letter else None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """``build_prompt(question, build_option_str(choices), prediction)``."""
        return JudgePrompt(
            user=choice_prompt(item.sample.question, shown_options(item), item.answer)
        )

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """``can_infer`` on the judge's reply; None (unjudged, never a random option) if unread."""
        letter = can_infer(reply, shown_options(item))
        return Reading(reading=letter) if letter else None

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """The first decided letter is the gold option (``Z`` is wrong)."""
        for j in judgements:
            if j.decided_by != "unjudged" and j.reading is not None:
                return mmbench_letter_correct(j.reading, item.score.order, item.score.gold)
        return None


MMBENCH_CHOICE = JUDGE_PROTOCOLS.register("mmbench-choice")(MMBenchChoice())
