"""Dysca's question-type and covariate-shift sensitivity, scenario deltas and blind gap."""

from __future__ import annotations

import itertools

import pytest

from lmmprobe.metrics.synth import (
    accuracy_percent,
    blind_gap,
    covariate_shift_sensitivity,
    covariate_shift_sensitivity_from_scores,
    question_type_sensitivity,
    question_type_sensitivity_from_scores,
    scenario_deltas,
    scores_by,
)
from lmmprobe.schema import Score

_ids = itertools.count()


def row(correct=True, *, stage="mark", error=None, **meta):
    n = next(_ids)
    return Score(
        model="m", sample_id=f"s{n}", repeat=0, key=f"k{n}",
        stage="error" if error else stage, correct=None if error else correct,
        gold=0, gold_text="a", error_type=error, metadata=meta,
    )  # fmt: skip


def rows(n_right, n_wrong, **meta):
    return [row(True, **meta) for _ in range(n_right)] + [
        row(False, **meta) for _ in range(n_wrong)
    ]


def test_question_type_sensitivity_balanced():
    out = question_type_sensitivity(75.0, 62.5)
    assert out == pytest.approx({"TFSQ": 50.0, "MCSQ": 50.0, "SQ": 0.0})


def test_question_type_sensitivity_extreme():
    # TFSQ = 100, MCSQ = 0, m = 50: SQ = (50^2 + 50^2) / 2 = 2500.
    out = question_type_sensitivity(100.0, 25.0)
    assert out == pytest.approx({"TFSQ": 100.0, "MCSQ": 0.0, "SQ": 2500.0})


def test_question_type_sensitivity_below_chance_and_general():
    # S_tf = 40 -> TFSQ = -20; S_mc = 100 -> MCSQ = 100; m = 40; SQ = (60^2 + 60^2) / 2.
    out = question_type_sensitivity(40.0, 100.0)
    assert out == pytest.approx({"TFSQ": -20.0, "MCSQ": 100.0, "SQ": 3600.0})


@pytest.mark.parametrize("bad", [-1.0, 100.5, float("nan"), float("inf")])
def test_question_type_sensitivity_rejects_non_percentages(bad):
    with pytest.raises(ValueError, match="tf_score"):
        question_type_sensitivity(bad, 50.0)
    with pytest.raises(ValueError, match="mc_score"):
        question_type_sensitivity(50.0, bad)


def test_covariate_shift_sensitivity():
    # mean 70; deviations 10, -10, 0 -> (100 + 100 + 0) / 3.
    assert covariate_shift_sensitivity({"a": 80, "b": 60, "c": 70}) == pytest.approx(200 / 3)
    assert covariate_shift_sensitivity({"only": 42.0}) == 0.0
    with pytest.raises(ValueError, match="at least one"):
        covariate_shift_sensitivity({})
    with pytest.raises(ValueError, match="'b'"):
        covariate_shift_sensitivity({"a": 50, "b": 120})


def test_scores_by_counts_answers_only():
    scores = [
        *rows(3, 1, style="oil"),  # 75%
        row(False, stage="unparsed", style="oil"),  # unparsed is wrong: 3/5
        row(error="timeout", style="oil"),  # errors left out
        row(None, stage="match", style="oil"),  # no verdict: left out
        *rows(1, 1, style="anime"),  # 50%
        # An empty caption (stored as unparsed, no verdict) is not judged, as in `summarize`.
        row(None, stage="unparsed", style="anime"),
        row(error="oom", style="sketch"),  # a group of errors only has no accuracy
        row(True),  # no style: in no group
    ]
    assert scores_by(scores, "style") == pytest.approx({"anime": 50.0, "oil": 60.0})
    assert list(scores_by(scores, "style")) == ["anime", "oil"]
    assert scores_by([], "style") == {}
    assert accuracy_percent(scores) == pytest.approx(100 * 5 / 8)
    assert accuracy_percent([row(error="x")]) is None


def test_scores_by_stringifies_values():
    assert scores_by([*rows(1, 0, level=1), *rows(0, 1, level="1")], "level") == {"1": 50.0}


def test_question_type_sensitivity_from_scores():
    scores = [
        *rows(3, 1, question_type="true_false"),  # 75
        *rows(5, 3, question_type="multiple_choice"),  # 62.5
        *rows(0, 4, question_type="free_form"),  # ignored
        row(error="timeout", question_type="true_false"),
    ]
    out = question_type_sensitivity_from_scores(scores)
    assert out == pytest.approx({"TFSQ": 50.0, "MCSQ": 50.0, "SQ": 0.0, "S_tf": 75.0, "S_mc": 62.5})
    with pytest.raises(ValueError, match="'multiple_choice'"):
        question_type_sensitivity_from_scores(rows(1, 0, question_type="true_false"))


def test_covariate_shift_sensitivity_from_scores():
    scores = [*rows(4, 1, style="oil"), *rows(3, 2, style="anime"), *rows(7, 3, style="photo")]
    assert covariate_shift_sensitivity_from_scores(scores) == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match="'style'"):
        covariate_shift_sensitivity_from_scores(rows(1, 1, scenario="clean"))


def test_scenario_deltas():
    scores = [
        *rows(4, 1, scenario="clean"),  # 80
        *rows(3, 2, scenario="corruption"),  # 60
        *rows(1, 3, scenario="print_attack"),  # 25
        *rows(4, 0, scenario="adversarial"),  # 100
        row(error="timeout", scenario="corruption"),
    ]
    assert scenario_deltas(scores) == pytest.approx(
        {"adversarial": 20.0, "corruption": -20.0, "print_attack": -55.0}
    )
    assert scenario_deltas(scores, baseline="corruption")["clean"] == pytest.approx(20.0)
    with pytest.raises(ValueError, match="'clean'"):
        scenario_deltas(rows(1, 1, scenario="corruption"))


def test_blind_gap():
    normal = [*rows(3, 1), row(error="timeout")]  # 75
    blind = [*rows(1, 3), row(False, stage="unparsed")]  # 20
    assert blind_gap(normal, blind) == pytest.approx(55.0)
    assert blind_gap(blind, normal) == pytest.approx(-55.0)
    with pytest.raises(ValueError, match="blind run"):
        blind_gap(normal, [row(error="timeout")])
    with pytest.raises(ValueError, match="normal run"):
        blind_gap([], blind)


def test_scores_by_is_accuracy_percent_of_each_group():
    mixed = [
        *rows(3, 1, style="a"),
        row(True, stage="unparsed", style="a"),  # unreadable: wrong, whatever correct says
        row(None, stage="match", style="a"),  # no verdict (a caption): left out
        row(error="timeout", style="a"),  # failed: left out
        *rows(1, 2, style="b"),
        row(error="timeout", style="c"),  # a group with no judged row is left out
        row(None, stage="match", style="d"),
        *rows(2, 0, style=1),  # labels are str() of the value
        *rows(5, 5),  # no style: in no group
    ]
    groups: dict[str, list[Score]] = {}
    for s in mixed:
        if "style" in s.metadata:
            groups.setdefault(str(s.metadata["style"]), []).append(s)
    expected = {
        label: acc
        for label in sorted(groups)
        if (acc := accuracy_percent(groups[label])) is not None
    }
    assert scores_by(mixed, "style") == expected == {"1": 100.0, "a": 60.0, "b": 100 / 3}
