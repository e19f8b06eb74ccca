"""Agreement statistics: parity with scikit-learn, statsmodels and krippendorff on random data."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from lmmprobe.metrics.agreement import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    position_consistency,
)

LABELS = st.sampled_from(["A", "B", "tie"])


@st.composite
def two_raters(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    n = draw(st.integers(1, 40))
    return draw(st.lists(LABELS, min_size=n, max_size=n)), draw(
        st.lists(LABELS, min_size=n, max_size=n)
    )


@given(two_raters())
@settings(max_examples=300, deadline=None)
def test_cohen_kappa_equals_scikit_learn(pair: tuple[list[str], list[str]]) -> None:
    a, b = pair
    ours = cohen_kappa(a, b)
    if a == b:
        assert ours == 1.0  # scikit-learn gives NaN when one label is used throughout
        return
    assert ours == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


@given(st.integers(1, 30), st.integers(2, 6), st.data())
@settings(max_examples=300, deadline=None)
def test_fleiss_kappa_equals_statsmodels(items: int, raters: int, data: st.DataObject) -> None:
    rows = [
        data.draw(st.lists(st.integers(0, 3), min_size=raters, max_size=raters))
        for _ in range(items)
    ]
    ours = fleiss_kappa(rows)
    if all(len(set(row)) == 1 for row in rows):
        assert ours == 1.0
        return
    table, _ = aggregate_raters(np.array(rows))
    assert ours == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "interval", "ordinal"])
@given(st.integers(2, 5), st.integers(2, 25), st.data())
@settings(max_examples=150, deadline=None)
def test_krippendorff_alpha_equals_the_package(
    level: str, raters: int, items: int, data: st.DataObject
) -> None:
    value = st.one_of(st.none(), st.integers(1, 5))
    rows = [data.draw(st.lists(value, min_size=items, max_size=items)) for _ in range(raters)]
    pairable = [[row[i] for row in rows if row[i] is not None] for i in range(items)]
    pairable = [v for v in pairable if len(v) >= 2]
    if not pairable:
        with pytest.raises(ValueError, match="rated by 2 raters"):
            krippendorff_alpha(rows, level)  # type: ignore[arg-type]
        return
    ours = krippendorff_alpha(rows, level)  # type: ignore[arg-type]
    if len({v for values in pairable for v in values}) == 1:
        assert ours == 1.0
        return
    matrix = np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float)
    assert ours == pytest.approx(krippendorff.alpha(matrix, level_of_measurement=level), abs=1e-9)


def test_nominal_alpha_takes_string_labels() -> None:
    labels = [["A", "B", None, "tie"], ["A", "B", "B", "A"]]
    coded = [[0, 1, None, 2], [0, 1, 1, 0]]
    assert krippendorff_alpha(labels, "nominal") == krippendorff_alpha(coded, "nominal")


def test_interval_alpha_refuses_labels_naming_rater_and_item() -> None:
    with pytest.raises(ValueError, match=r"rater 1, item 0: 'x' is not a number"):
        krippendorff_alpha([[1, 2], ["x", 2]], "interval")


def test_percent_agreement_and_position_consistency() -> None:
    assert percent_agreement(["A", "B", "tie", "A"], ["A", "A", "tie", "B"]) == 0.5
    # a tie both ways is consistent; a win that becomes a tie is not
    assert position_consistency(["A", "tie", "B", "A"], ["A", "tie", "tie", "B"]) == 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda: cohen_kappa([], []),
        lambda: percent_agreement(["A"], ["A", "B"]),
        lambda: position_consistency(["A"], []),
        lambda: fleiss_kappa([]),
        lambda: fleiss_kappa([["A", "B"], ["A"]]),
        lambda: fleiss_kappa([["A"], ["B"]]),
        lambda: krippendorff_alpha([[1, 2]]),
        lambda: krippendorff_alpha([[1, 2], [1]]),
    ],
)
def test_bad_shapes_are_clear_errors(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]


def test_one_category_throughout_is_perfect_agreement() -> None:
    assert cohen_kappa(["tie"] * 3, ["tie"] * 3) == 1.0
    assert fleiss_kappa([["A", "A", "A"]] * 4) == 1.0
    assert krippendorff_alpha([["A", None, "A"], ["A", "A", None]]) == 1.0
