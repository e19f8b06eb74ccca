"""TempCompass's captioning rating, a judge for every caption: ``tempcompass-captioning``.

TempCompass's evaluation of its captioning task (llyx97/TempCompass @ e1b4631,
``eval_captioning.py``) has no rules: every caption the model wrote goes to gpt-3.5-turbo-1106
(``get_llm_output``: the system prompt, temperature 1.0, top_p 1 and 128 tokens of its other
tasks) with ``caption_evaluation_prompt``, then ``Video Description:`` and the caption (``</s>``
removed, stripped), then ``Multi-Choice Question:`` and the *first* multi-choice question of the
same video and aspect (``questions/multi-choice.json``). The judge answers that question from
the caption; ``parse_llm_output`` reads its answer (`captioning_answer`: the last line holding
``Answer``, else the whole reply) and rates it right when its text before the first ``". "``
is the ground-truth letter and it names exactly one of ``A.`` to ``D.`` (`captioning_rating`).

Departures (docs/definitions.md): the reference rates -1 (which its sums then subtract) for an
empty reply, a refused request or ten failed tries; here such an answer is ``unjudged`` (counted
0 in the headline, left out of ``judge_coverage``'s judged share). ``presence_penalty=1`` is not
sent (no such generation parameter), as in ``tempcompass-choice``. Its Gemini and Reka caption
clean-ups, keyed to the model's name upstream, are not applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, JudgePrompt, JudgeWhen, Reading
from lmmprobe.judge.protocols.tempcompass_choice import SYSTEM, first_rating_right
from lmmprobe.parse.tempcompass import CAPTIONING_MC_QUESTION, TEMPCOMPASS_COMMIT
from lmmprobe.schema import GenerationParams, Judgement, Sample

__all__ = [
    "TempCompassCaptioning",
    "captioning_answer",
    "captioning_rating",
    "tempcompass_captioning_prompt",
]

SOURCE = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT}:eval_captioning.py"

BASE_PROMPT = (
    "\nYou will receive a video description and a multi-choice question. Your task is to choose "
    "the correct answer and briefly explain the reason why you choose the answer. If none of "
    "the choice candidates are correct or the video description lacks enough information to "
    'answer the question, just answer "None of the choices are correct". Please organize your '
    "response in this format:\n```\nReasoning: [Your reason to obtain the answer]\nAnswer: "
    "[Your answer]\n```\n\nHere are some examples of video description, multi-choice question "
    "and the expected answer:\n```\nVideo Description: A person is palying football.\n"
    "Multi-Choice Question:\nWhat is the person doing in the video?\nA. cooking\nB. palying "
    "football\nC. playing basketball\nD. reading book\nReasoning: The video description "
    "mentions that the person is playing football.\nAnswer: B. palying football\n\nVideo "
    "Description: A bird is flying clockwise.\nMulti-Choice Question:\nIn which direction is "
    "the bird flying?\nA. backwark\nB. counter-clockwise\nC. clockwise\nD. downward\n"
    "Reasoning: The video description mentions that the bird is flying clockwise\nAnswer: C. "
    "clockwise\n\nVideo Description: An air balloon is inflating.\nMulti-Choice Question:\n"
    "What is happening to the air balloon?\nA. exploding\nB. getting smaller\nC. flying\n"
    "Reasoning: The video description mentions that the air balloon is inflating, while none "
    "of the coices can be explained as inflating.\nAnswer: None of the choices are correct\n"
    "```\n"
)
"""``prompt_templates.caption_evaluation_prompt`` (its line continuations joined; its typos
kept)."""

_PREFIXES = ("A.", "B.", "C.", "D.")
_KEPT = 500
"""Characters of the judge's answer and reasoning kept beside the rating (`Reading.detail`)."""


def tempcompass_captioning_prompt(caption: str, mc_question: str) -> str:
    """The prompt ``main`` builds about one caption, byte for byte.

    Args:
        caption: The model's caption, ``</s>`` removed and stripped.
        mc_question: The video's first multi-choice question of the aspect, options included.

    """
    return f"{BASE_PROMPT}\nVideo Description:{caption}\nMulti-Choice Question:\n{mc_question}\n"


def captioning_answer(reply: str) -> tuple[str, str | None]:
    """(the judge's answer, its reasoning) as ``parse_llm_output`` reads a stripped reply.

    Each line is stripped; the last holding ``Reasoning`` gives the reasoning, the last holding
    ``Answer`` the answer (``Reasoning:``/``Answer:`` removed, stripped); with no such line the
    answer is the whole reply and the reasoning None.
    """
    answer: str | None = None
    reasoning: str | None = None
    for raw in reply.split("\n"):
        line = raw.strip()
        if "Reasoning" in line:
            reasoning = line.replace("Reasoning:", "").strip()
        if "Answer" in line:
            answer = line.replace("Answer:", "").strip()
    return (reply if answer is None else answer), reasoning


def captioning_rating(answer: str, gold: str) -> int:
    """``parse_llm_output``'s rating: 1 when `answer` gives `gold`'s letter and one option.

    Right when the text before the first ``". "`` of each is the same and ``A.``, ``B.``,
    ``C.`` and ``D.`` occur once in all in `answer` (so ``Answer: B`` is wrong: no ``B.``).
    """
    count = sum(answer.count(prefix) for prefix in _PREFIXES)
    return 1 if count == 1 and answer.partition(". ")[0] == gold.partition(". ")[0] else 0


def _gold(sample: Sample) -> str:
    """The multi-choice ground truth as the release writes it: ``B. text``."""
    choices = sample.choices or []
    gold = sample.answer
    if not isinstance(gold, int) or not 0 <= gold < min(len(choices), 4):
        return ""
    return f"{'ABCD'[gold]}. {choices[gold]}"


@dataclass
class TempCompassCaptioning:
    """TempCompass's captioning rating: the judge answers the question from the caption."""

    name: str = "tempcompass-captioning"
    version: str = f"llyx97/TempCompass@{TEMPCOMPASS_COMMIT[:7]}"
    source: str = SOURCE
    when: tuple[JudgeWhen, ...] = ("always",)
    repeats: int = 1
    gen: GenerationParams = field(
        default_factory=lambda: GenerationParams(max_new_tokens=128, temperature=1.0, top_p=1.0)
    )

    def applies(self, item: JudgeItem) -> bool:
        """A caption (not failed, not cut off) for a sample carrying its judged question."""
        return (
            item.score.error_type is None
            and item.score.stage not in ("error", "truncated")
            and self.fits(item.sample)
        )

    def fits(self, sample: Sample) -> bool:
        """`applies` of an answer to `sample`, the sample's part: its question and gold."""
        question = sample.metadata.get(CAPTIONING_MC_QUESTION)
        return isinstance(question, str) and bool(question) and bool(_gold(sample))

    def rule(self, item: JudgeItem) -> Reading | None:
        """None: ``eval_captioning.py`` reads no caption by rule; the judge rates every one."""
        return None

    def prompt(self, item: JudgeItem) -> JudgePrompt:
        """The caption and the video's multi-choice question, after the instructions."""
        caption = item.answer.replace("</s>", "").strip()
        question = str(item.sample.metadata.get(CAPTIONING_MC_QUESTION, ""))
        return JudgePrompt(user=tempcompass_captioning_prompt(caption, question), system=SYSTEM)

    def read(self, reply: str, item: JudgeItem) -> Reading | None:
        """The rating ("1" or "0") of the judge's answer; None for an empty or refused reply.

        The answer and reasoning read are kept in `Reading.detail` (their first 500 characters).
        """
        text = reply.strip()  # get_llm_output strips the reply
        if not text or text == "invalid_request_error":
            return None  # rated -1 there: unjudged here
        answer, reasoning = captioning_answer(text)
        rating = captioning_rating(answer, _gold(item.sample))
        detail: dict[str, float | str] = {"answer": answer[:_KEPT]}
        if reasoning is not None:
            detail["reasoning"] = reasoning[:_KEPT]
        return Reading(value=float(rating), reading=str(rating), detail=detail)

    def correct(self, item: JudgeItem, judgements: list[Judgement]) -> bool | None:
        """Right on the first decided rating "1"."""
        return first_rating_right(judgements)


TEMPCOMPASS_CAPTIONING = JUDGE_PROTOCOLS.register("tempcompass-captioning")(TempCompassCaptioning())
