"""The audit: every item where two verdicts differ, with its cause, adding up to the gap exactly."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmmprobe.predictions.audit import CAUSES, Verdict, audit, cause_of
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.verdicts import audit_imported, score_verdict
from lmmprobe.run.scoring import score_response
from lmmprobe.schema import FormulateConfig, Request, Response, Sample, Score
from lmmprobe.schema.benchmark import BenchmarkTag

MMMU_TAG = BenchmarkTag(name="mmmu", split="validation", metric="mmmu_accuracy")


def _mmmu_sample(sid: str, answer: str, options: list[str] | None = None) -> Sample:
    letters = [chr(ord("A") + i) for i in range(len(options or []))]
    return Sample(
        id=sid,
        question=f"question {sid}",
        answer=[answer],
        formulation="open_ended",
        metadata={
            "question_type": "multiple-choice" if options else "open",
            "option_letters": letters,
            "option_texts": options or [],
            "answers": [answer],
        },
        benchmark=MMMU_TAG,
    )


def _scored(sample: Sample, text: str) -> Score:
    request = Request(sample_id=sample.id, method="generate", messages=[], prompt=sample.question)
    return score_response("m", sample, request, Response(key="k", text=text), FormulateConfig())


OPTS = ["oil", "ink", "fresco", "tempera"]


def test_mmmu_file_audit_explains_the_gap_by_cause() -> None:
    # Five answers of one file, read by lmmprobe (MMMU's rules, unread = wrong) and recorded by
    # the official scorer (its parsed letter and verdict).
    cases = [
        # id, gold, options, text, their letter, their verdict, their gold
        ("validation_Art_1", "B", OPTS, "I think (B)", "B", 1.0, "B"),  # agree
        ("validation_Art_2", "C", OPTS, "hmm, hard to say", "C", 1.0, "C"),  # guessed right
        ("validation_Art_3", "A", OPTS, "The answer is (A)", "A", 0.0, "D"),  # older key
        ("validation_Art_4", "B", OPTS, "B", "D", 0.0, "B"),  # their reading differs
        ("validation_Math_5", "A", OPTS, "A.", "A", 0.0, "A"),  # same letter, their verdict
    ]
    scores, preds = [], []
    for i, (sid, gold, opts, text, letter, verdict, their_gold) in enumerate(cases, 1):
        scores.append(_scored(_mmmu_sample(sid, gold, opts), text))
        preds.append(
            ImportedPrediction(
                row=i,
                sample_id=sid,
                prediction=text,
                gold=their_gold,
                tool_extraction=letter,
                tool_verdict=verdict,
            )
        )
    result = audit_imported(scores, preds, label="MMMU", n_boot=200)
    assert result.n == 5
    assert (result.credit_a, result.credit_b) == (4, 2)
    causes = {it.a.sample_id: it.cause for it in result.items}
    assert causes == {
        "validation_Art_2": "random_fallback",
        "validation_Art_3": "gold",
        "validation_Art_4": "extraction",
        "validation_Math_5": "normalization",
    }
    # A - B, as `lmmprobe compare`: lmmprobe's credit minus the tool's.
    assert sum(c.net for c in result.by_cause.values()) == result.gap == 2
    assert result.by_cause["random_fallback"].net == -1
    fallback = result.by_cause["random_fallback"]
    assert (fallback.a_higher, fallback.b_higher) == (0, 1)  # MMMU's guess was right
    assert result.guessed == 1
    assert result.summary()[0] == (
        "lmmprobe 80.00 vs MMMU 40.00 on 5 paired items: gap +40.00 points "
        "(lmmprobe - MMMU; +2 items)"
    )
    # Each cause here holds one item: said in the singular (re-test 13 left "1 items").
    lines = result.summary()
    assert sum(": 1 item (" in line for line in lines) == 4, lines
    assert not any(" 1 items" in line for line in lines), lines
    assert result.mcnemar_p is not None


def test_a_letter_the_tool_read_in_the_text_is_no_guess() -> None:
    # lmms-eval's MMMU parser reads "B." where MMMU's own reads nothing (and would guess):
    # the difference is extraction; a letter found nowhere in the text is a guess.
    scores = [
        _scored(_mmmu_sample("validation_Art_1", "B", OPTS), "B. because of the brushwork"),
        _scored(_mmmu_sample("validation_Art_2", "C", OPTS), "cannot tell"),
    ]
    preds = [
        ImportedPrediction(
            row=1,
            sample_id="validation_Art_1",
            prediction=scores[0].prediction_text or "",
            tool_extraction="B",
            tool_verdict=1.0,
        ),
        ImportedPrediction(
            row=2,
            sample_id="validation_Art_2",
            prediction="cannot tell",
            tool_extraction="C",
            tool_verdict=1.0,
        ),
    ]
    causes = {it.a.sample_id: it.cause for it in audit_imported(scores, preds, n_boot=0).items}
    assert causes == {"validation_Art_1": "extraction", "validation_Art_2": "random_fallback"}


def test_lmmprobe_reading_of_a_scored_row_is_the_official_one() -> None:
    v = score_verdict(_scored(_mmmu_sample("validation_Art_9", "C", OPTS), "hmm"))
    assert v is not None and (v.credit, v.reading, v.guessed) == (0.0, None, True)
    v = score_verdict(_scored(_mmmu_sample("validation_Art_9", "C", OPTS), "(C) fresco"))
    assert v is not None and (v.credit, v.reading, v.guessed) == (1.0, "C", False)


def test_a_run_audit_names_a_different_model_answer() -> None:
    a = [Verdict("s1", 1.0, raw="(A)", reading="A"), Verdict("s2", 0.0, raw="B", reading="B")]
    b = [Verdict("s1", 0.0, raw="(B)", reading="B"), Verdict("s2", 1.0, raw="B", reading="B")]
    result = audit(a, b, n_boot=0)
    assert [it.cause for it in result.items] == ["answer", "normalization"]
    assert result.gap == 0 and result.low is None


def test_unrecorded_and_judged_readings() -> None:
    a = Verdict("s", 0.0, raw="x", reading=None)
    assert cause_of(a, Verdict("s", 1.0, raw="x", recorded=False)) == "unrecorded"
    assert cause_of(a, Verdict("s", 1.0, raw="x", reading="A", judged=True)) == "judge"


def test_two_verdicts_for_one_item_are_refused() -> None:
    with pytest.raises(ValueError, match="'s' repeat 0 has two verdicts"):
        audit([Verdict("s", 1.0), Verdict("s", 0.0)], [])


def test_partial_credit_adds_up_exactly() -> None:
    # lmms-eval's VQA-style per-sample metrics are fractions: sums stay exact.
    a = [Verdict(f"s{i}", 0.1 * i, raw="x", reading="x") for i in range(10)]
    b = [Verdict(f"s{i}", 0.3 * (i % 4), raw="x", reading="y") for i in range(10)]
    result = audit(a, b, n_boot=0)
    assert sum(c.net for c in result.by_cause.values()) == result.gap
    assert result.mcnemar_p is None


_verdict = st.builds(
    Verdict,
    sample_id=st.sampled_from([f"s{i}" for i in range(30)]),
    credit=st.sampled_from([0.0, 1.0, 0.5, 1 / 3]),
    repeat=st.integers(0, 1),
    raw=st.sampled_from([None, "A", "(A)", "b"]),
    reading=st.sampled_from([None, "A", "B"]),
    recorded=st.booleans(),
    gold=st.sampled_from([None, ("A",), ("B",), ("a",)]),
    judged=st.booleans(),
    guessed=st.booleans(),
)


def _unique(vs: list[Verdict]) -> list[Verdict]:
    return list({v.key: v for v in vs}.values())


@settings(max_examples=200, deadline=None)
@given(st.lists(_verdict, max_size=40), st.lists(_verdict, max_size=40))
def test_explained_counts_add_up_to_the_gap(xs: list[Verdict], ys: list[Verdict]) -> None:
    result = audit(_unique(xs), _unique(ys), n_boot=0)
    assert sum((c.net for c in result.by_cause.values()), Fraction(0)) == result.gap
    assert sum(c.items for c in result.by_cause.values()) == len(result.items)
    assert all(c.items == c.a_higher + c.b_higher for c in result.by_cause.values())
    assert list(result.by_cause) == [c for c in CAUSES if c in result.by_cause]
