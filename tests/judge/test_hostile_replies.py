"""Judge replies of any length and shape are read in bounded time (issue 34, item 1).

The readers of ``lmmprobe-choice``, ``lmmprobe-open`` and the pairwise judge backtracked on
long runs of spaces, dots or brackets: ``A`` + 100,000 spaces + ``x`` took 130 s, a pairwise
reply with 3,000 spaces 158 s (cubic). Every judge protocol's reader (and the thinking split
and the delimiting of answers every judge prompt of ours goes through) is run here on long
adversarial replies under a generous time bound (`tests.bounded`), and on replies drawn by
hypothesis from the same troublesome pieces. lmmprobe's own protocols read at most
`REPLY_LIMIT` characters, so their hostile replies come in two sizes: far over the limit (refused
unread) and just under it (read by patterns that must not backtrack).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.bounded import SHAPES, bounded, bounded_each

from lmmprobe.judge.pairwise import PAIRWISE
from lmmprobe.judge.protocol import REPLY_LIMIT, JudgeItem, delimit, reply_answer
from lmmprobe.judge.protocols.blink_choice import BlinkChoice
from lmmprobe.judge.protocols.charxiv_descriptive_grade import CharXivDescriptiveGrade
from lmmprobe.judge.protocols.charxiv_reasoning_grade import CharXivReasoningGrade
from lmmprobe.judge.protocols.hallusionbench_correct import HallusionBenchCorrect
from lmmprobe.judge.protocols.llava_wild_review import LlavaWildReview
from lmmprobe.judge.protocols.lmmprobe_choice import ChoiceProtocol
from lmmprobe.judge.protocols.lmmprobe_open import OpenProtocol
from lmmprobe.judge.protocols.mathverse_judge import MathVerseJudge
from lmmprobe.judge.protocols.mathvista_extract import MathVistaExtract
from lmmprobe.judge.protocols.mmbench_choice import MMBenchChoice
from lmmprobe.judge.protocols.mmiu_choice import MMIUChoice
from lmmprobe.judge.protocols.mmvet_grade import MMVetGrade
from lmmprobe.judge.protocols.tempcompass_caption_matching import TempCompassCaptionMatching
from lmmprobe.judge.protocols.tempcompass_captioning import TempCompassCaptioning
from lmmprobe.judge.protocols.tempcompass_choice import TempCompassChoice
from lmmprobe.judge.protocols.tempcompass_yes_no import TempCompassYesNo
from lmmprobe.metrics.benchmark_choice import mathvista_extract
from lmmprobe.schema import Response, Sample, Score

BIG = 100_000
UNDER = REPLY_LIMIT - 32  # the largest size whose shapes below all stay under the limit


def _choice_item(answer: str = "the feline one") -> JudgeItem:
    sample = Sample(id="s", question="Which animal?", choices=["cat", "dog"], answer=0)
    score = Score(model="m", sample_id="s", repeat=0, key="k", stage="unparsed", correct=False,
                  gold=0, gold_text="cat", marks=["A", "B"], options=["dog", "cat"],
                  order=[1, 0])  # fmt: skip
    return JudgeItem(sample, answer, score)


def _caption_item(answer: str = "Option 1") -> JudgeItem:
    captions = ["Option 1: A cat (sits) down.", "Option 2: A dog runs."]
    sample = Sample(id="c", question="Which caption?\n" + "\n".join(captions), choices=captions,
                    answer=0)  # fmt: skip
    score = Score(model="m", sample_id="c", repeat=0, key="k", stage="unparsed", gold=0,
                  gold_text=captions[0])  # fmt: skip
    return JudgeItem(sample, answer, score)


def _captioning_item() -> JudgeItem:
    sample = Sample(id="t", question="Describe the video.", choices=["cat", "dog"], answer=0,
                    metadata={"mc_question": "Which animal?\nA. cat\nB. dog"})  # fmt: skip
    score = Score(model="m", sample_id="t", repeat=0, key="k", stage="unparsed", gold=0,
                  gold_text="cat")  # fmt: skip
    return JudgeItem(sample, "A cat sits.", score)


def _open_item(answer: str = "Paris") -> JudgeItem:
    sample = Sample(id="o", question="Capital of France?", answer=["Paris"],
                    formulation="open_ended", metadata={"rubric": "names the city"})  # fmt: skip
    score = Score(model="m", sample_id="o", repeat=0, key="k", stage="match", gold=["Paris"],
                  gold_text="Paris")  # fmt: skip
    return JudgeItem(sample, answer, score)


def _stage(item: JudgeItem, extraction: str) -> JudgeItem:
    """`item` at a chained protocol's second stage, the first having read `extraction`."""
    return JudgeItem(item.sample, item.answer, item.score, stage=1, earlier=(extraction,))


def _mathvista_item(answer: str) -> JudgeItem:
    sample = Sample(id="v", question="How many?", answer=["3"], formulation="open_ended",
                    metadata={"mathvista_question_type": "free_form", "answer_type": "integer",
                              "precision": None, "choices": None})  # fmt: skip
    score = Score(model="m", sample_id="v", repeat=0, key="k", stage="match", gold=["3"],
                  gold_text="3")  # fmt: skip
    return JudgeItem(sample, answer, score)


def _charxiv_descriptive_item() -> JudgeItem:
    sample = Sample(id="0_0", question="q", answer=["a"], formulation="open_ended",
                    metadata={"qid": 13})  # fmt: skip
    score = Score(model="m", sample_id="0_0", repeat=0, key="k", stage="unparsed", gold=["a"],
                  gold_text="a")  # fmt: skip
    return JudgeItem(sample, "a", score)


def _response(text: str) -> Response:
    return Response(key="k", text=text, finish_reason="stop")


# Every reader of a judge reply, by protocol; each returns what the judging step would use.
READERS: dict[str, Callable[[str], object]] = {
    "lmmprobe-choice": lambda r: ChoiceProtocol().read(r, _choice_item()),
    "lmmprobe-open binary": lambda r: OpenProtocol().read(r, _open_item()),
    "lmmprobe-open 1-5": lambda r: OpenProtocol(scale="1-5").read(r, _open_item()),
    "lmmprobe-open 1-10": lambda r: OpenProtocol(scale="1-10").read(r, _open_item()),
    "lmmprobe-pairwise": PAIRWISE.read,
    "mmbench-choice": lambda r: MMBenchChoice().read(r, _choice_item()),
    "blink-choice": lambda r: BlinkChoice().read(r, _choice_item()),
    "mmbench-choice rule": lambda r: MMBenchChoice().rule(_choice_item(r)),
    "mathvista-extract": lambda r: MathVistaExtract().read(r, _mathvista_item("x")),
    "mathvista-extract rule": lambda r: MathVistaExtract().rule(_mathvista_item(r)),
    "mmvet-grade": lambda r: MMVetGrade().read(r, _open_item()),
    "hallusionbench-correct": lambda r: HallusionBenchCorrect().read(r, _open_item()),
    "llava-wild-review": lambda r: LlavaWildReview().read(r, _open_item()),
    "mathverse-judge extraction": lambda r: MathVerseJudge().read(r, _open_item()),
    "mathverse-judge scoring": lambda r: MathVerseJudge().read(r, _stage(_open_item(), r)),
    "mathverse-judge scoring rule": lambda r: MathVerseJudge().rule(_stage(_open_item(), r)),
    "charxiv-reasoning-grade": lambda r: CharXivReasoningGrade().read(r, _open_item()),
    "charxiv-descriptive-grade (a group of five)": lambda r: CharXivDescriptiveGrade().read_group(
        r, [_charxiv_descriptive_item()] * 5
    ),
    "tempcompass-choice": lambda r: TempCompassChoice().read(r, _choice_item()),
    "tempcompass-choice rule": lambda r: TempCompassChoice().rule(_choice_item(r)),
    "mmiu-choice": lambda r: MMIUChoice().read(r, _open_item()),
    "mmiu-choice rule": lambda r: MMIUChoice().rule(_open_item(r)),
    "tempcompass-yes-no": lambda r: TempCompassYesNo().read(r, _choice_item()),
    "tempcompass-yes-no rule": lambda r: TempCompassYesNo().rule(_choice_item(r)),
    "tempcompass-caption-matching": lambda r: TempCompassCaptionMatching().read(r, _caption_item()),
    "tempcompass-caption-matching rule": lambda r: TempCompassCaptionMatching().rule(
        _caption_item(r)
    ),
    "tempcompass-captioning": lambda r: TempCompassCaptioning().read(r, _captioning_item()),
    "reply_answer (thinking split)": lambda r: reply_answer("judge", _response(r)),
    "delimit (every prompt of ours)": lambda r: delimit(r, "model_answer"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_long_hostile_replies_are_read_in_bounded_time(reader: str) -> None:
    read = READERS[reader]
    bounded_each(
        {f"{reader} on {s} ({BIG})": partial(read, make(BIG)) for s, make in SHAPES.items()}
    )


OWN = ["lmmprobe-choice", "lmmprobe-open binary", "lmmprobe-open 1-5", "lmmprobe-pairwise"]


@pytest.mark.parametrize("reader", OWN)
def test_hostile_replies_just_under_the_limit_are_read_in_bounded_time(reader: str) -> None:
    # Refused unread over the limit; under it, the patterns themselves must not backtrack.
    replies = {f"{reader} on {s} ({UNDER})": make(UNDER) for s, make in SHAPES.items()}
    assert all(len(r.strip()) <= REPLY_LIMIT for r in replies.values())
    bounded_each({name: partial(READERS[reader], r) for name, r in replies.items()})


def test_the_issues_reproductions() -> None:
    # 130 s before: "A" + 100,000 spaces + "x" is no mark, read or not, so unjudged.
    assert bounded(READERS["lmmprobe-choice"], "A" + " " * BIG + "x") is None
    assert bounded(READERS["lmmprobe-open 1-5"], "4" + " " * BIG + "x") is None
    # 158 s before (cubic): pairwise replies around 3,000 spaces.
    assert bounded(PAIRWISE.read, " " * 3000 + "A" + " " * 3000 + "x") is None
    assert bounded(PAIRWISE.read, "Verdict:" + " " * 3000 + "x") is None
    assert bounded(PAIRWISE.read, "Verdict:" + " " * 3000 + "B") == "B"


def test_padding_and_the_limit_change_no_ordinary_verdict() -> None:
    item = _choice_item()
    # Surrounding whitespace is stripped before the limit applies: padding is no length.
    padded = ChoiceProtocol().read(" " * BIG + "(B)." + "\n" * BIG, item)
    assert padded is not None and padded.reading == "B"
    assert PAIRWISE.read("\n" * BIG + "Verdict: **B**" + " " * BIG) == "B"
    assert PAIRWISE.read("I weigh both.\n" * 100 + "Verdict: tie") == "tie"
    grade = OpenProtocol(scale="1-10").read("Grade: 7/10.\n" + "because " * 100, _open_item())
    assert grade is not None and grade.value == 7.0
    # A reply over the limit is unreadable (the answer unjudged), whatever it ends with.
    assert PAIRWISE.read("x" * REPLY_LIMIT + " Verdict: A") is None
    assert ChoiceProtocol().read("B" * (REPLY_LIMIT + 1), item) is None


@pytest.mark.parametrize(
    ("reply", "mark"),
    [("B", "B"), ("(b).", "B"), (" [A] ", "A"), ("A:", "A"), ("((B))..", "B"), ("NONE", "NONE"),
     ("(", None), ("()", None), ("A B", None), ("B)x", None), ("", None), (" \n", None)],
)  # fmt: skip
def test_choice_reading_is_unchanged_by_the_linear_strip(reply: str, mark: str | None) -> None:
    got = ChoiceProtocol().read(reply, _choice_item())
    assert (got.reading if got else None) == mark


# Pieces hypothesis strings together, with long runs: what the readers' patterns repeat.
PIECES = [" ", "  ", "\t", "\n", ".", "(", ")", "[", "]", "*", ":", "/", "A", "B", "x", "4",
          "tie", "Verdict:", "verdict", "Grade", "correct", "The answer is", '"', "<think>",
          "</think>", "<model_answer>", "</model_answer>", "\u00a0"]  # fmt: skip
RUNS = st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 3000)), max_size=8)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(runs=RUNS, reader=st.sampled_from(sorted(READERS)))
def test_fuzzed_replies_are_read_in_bounded_time(runs: list[tuple[str, int]], reader: str) -> None:
    reply = "".join(piece * count for piece, count in runs)
    bounded(READERS[reader], reply)


QUICK_PIECES = ['The answer is "', '"', ".", '".', "\n", "x", " ", "The answer is", "\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(QUICK_PIECES), max_size=12))
def test_mathvista_quick_extract_equals_the_released_pattern(pieces: list[str]) -> None:
    # extract_answer.py's quick_extract, read in linear time now: the same extraction always.
    response = "".join(pieces) or "x"
    found = re.search(r'The answer is "(.*)"\.', response)
    assert mathvista_extract(response, "free_form", "text", None) == (
        found.group(1) if found else ""
    )
