"""Open-ended items whose gold is yes or no (HEMM's yes/no datasets): what a row says.

A sample marked ``yes_no_reading`` is correct when the answer says its gold by lmmprobe's
yes/no reading; the row keeps the answer's text (what HEMM's BARTScore scores) and its stage.
An unmarked sample is read as before: the whole answer against the reference.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmmprobe.parse.open_ended import read_yes_no
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import YES_NO_READING, FormulateConfig, Request, Response, Sample, Score


def _scored(answer: str, gold: str, *, marked: bool = True) -> Score:
    metadata = {YES_NO_READING: True} if marked else {}
    sample = Sample(
        id="s",
        question="Is it hateful?",
        answer=[gold],
        formulation="open_ended",
        metadata=metadata,
    )
    request = Request(key="k", sample_id="s", method="generate", messages=[], prompt="?")
    return score_response("m", sample, request, Response(key="k", text=answer), FormulateConfig())


@pytest.mark.parametrize(
    ("answer", "gold", "correct"),
    [
        ("Yes, it is.", "yes", True),
        ("Yes, it is.", "no", False),
        ("No. The meme is a joke about cats.", "no", True),
        ("The meme is not hateful.", "no", True),
        ("yes", "yes", True),
        ("It is hateful.", "yes", False),  # says neither: unread, never a guess
        ("Yes and no.", "yes", False),  # says both
        ("I cannot tell from the picture.", "no", False),  # says it cannot tell
    ],
)
def test_a_marked_sample_reads_what_the_answer_says(answer: str, gold: str, correct: bool) -> None:
    score = _scored(answer, gold)
    assert (score.correct, score.stage) == (correct, "match")
    # The row keeps the model's sentence: a metric of the text reads it, not "yes".
    assert score.prediction_text == answer


def test_an_unmarked_sample_still_needs_the_whole_answer() -> None:
    assert _scored("Yes, it is.", "yes", marked=False).correct is False
    assert _scored("Yes.", "yes", marked=False).correct is True


def test_an_empty_answer_is_unparsed_either_way() -> None:
    for marked in (True, False):
        score = _scored("  ", "yes", marked=marked)
        assert (score.stage, score.correct) == ("unparsed", False)


def test_a_value_other_than_true_does_not_mark_a_sample() -> None:
    # Metadata is free text in a user's file: only the JSON value true asks for the reading.
    sample = Sample(
        id="s", question="?", answer=["yes"], formulation="open_ended",
        metadata={YES_NO_READING: "false"},
    )  # fmt: skip
    request = Request(key="k", sample_id="s", method="generate", messages=[], prompt="?")
    got = score_response(
        "m", sample, request, Response(key="k", text="Yes, sure."), FormulateConfig()
    )
    assert got.correct is False


@settings(max_examples=300, deadline=None)
@given(answer=st.text(max_size=80), gold=st.sampled_from(["yes", "no"]))
def test_the_verdict_is_the_reading_and_the_text_is_kept(answer: str, gold: str) -> None:
    score = _scored(answer, gold)
    assert score.prediction_text == answer
    if score.stage == "match":
        assert score.correct is (read_yes_no(answer) == gold)
    else:  # nothing but whitespace and punctuation
        assert (score.stage, score.correct) == ("unparsed", False)
