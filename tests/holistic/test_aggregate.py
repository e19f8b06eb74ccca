"""HEMM's aggregation on small examples worked out by hand."""

from __future__ import annotations

import math

import pytest

from lmmprobe.holistic import (
    ALL_MODELS,
    Catalog,
    bootstrap_ci,
    compare_all_categories,
    compare_categories,
    compare_model_groups,
    dimension_means,
    load_catalog,
    normalize_scores,
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _p_two_sided_df2(t: float) -> float:
    # Student's t with 2 degrees of freedom has CDF 1/2 + t / (2 sqrt(t^2 + 2)).
    return 1.0 - abs(t) / math.sqrt(t * t + 2.0)


def _p_two_sided_df1(t: float) -> float:
    # With 1 degree of freedom it is the Cauchy distribution.
    return 1.0 - 2.0 * math.atan(abs(t)) / math.pi


def test_normalize_min_is_worst_model_max_is_identity_or_one() -> None:
    raw = {
        "m1": {"VQA": -4.0, "color": 0.5},
        "m2": {"VQA": -3.0, "color": 0.75},
        "m3": {"VQA": -2.0, "color": 1.0, "NoCaps": -2.5},
    }
    out = normalize_scores(raw, {"VQA": -1.0, "NoCaps": -0.5})
    # VQA: lo = -4 (m1), hi = identity score -1: (v + 4) / 3.
    assert out["m1"]["VQA"] == pytest.approx(0.0)
    assert out["m2"]["VQA"] == pytest.approx(1 / 3)
    assert out["m3"]["VQA"] == pytest.approx(2 / 3)
    # color is bounded by 1: lo = 0.5, hi = 1.
    assert [out[m]["color"] for m in ("m1", "m2", "m3")] == pytest.approx([0.0, 0.5, 1.0])
    # A dataset only one model ran: that model is the worst, so it gets 0.
    assert out["m3"]["NoCaps"] == 0.0
    assert set(out["m1"]) == {"VQA", "color"}


def test_normalize_edge_cases() -> None:
    # Every model at the ceiling: all 1.
    assert normalize_scores({"a": {"d": 1.0}, "b": {"d": 1.0}}) == {
        "a": {"d": 1.0},
        "b": {"d": 1.0},
    }
    # Percent scores need their own maximum.
    out = normalize_scores({"a": {"d": 40.0}, "b": {"d": 70.0}}, {"d": 100.0})
    assert out["b"]["d"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"above its maximum 1\.0"):
        normalize_scores({"a": {"d": 40.0}, "b": {"d": 70.0}})
    with pytest.raises(ValueError, match="score of model 'a' on 'd'"):
        normalize_scores({"a": {"d": math.nan}})


# Normalized scores: VQA is fine-grained, NoCaps and Hateful Memes coarse; VQA and NoCaps
# are redundancy, Hateful Memes synergy (HEMM table 1).
NORMALIZED = {
    "m1": {"VQA": 0.2, "NoCaps": 0.4, "Hateful Memes": 0.0},
    "m2": {"VQA": 0.6, "NoCaps": 0.8, "Hateful Memes": 0.3},
    "m3": {"VQA": 1.0, "NoCaps": 0.0, "Hateful Memes": 0.9},
}


def test_dimension_means_and_sds(catalog: Catalog) -> None:
    rows = dimension_means(NORMALIZED, catalog, n_boot=0)
    by_key = {(r.dimension, r.category, r.model): r for r in rows}

    fine = by_key[("granularity", "fine", ALL_MODELS)]
    # 0.2, 0.6, 1.0: mean 0.6; squared deviations 0.16 + 0 + 0.16 over n - 1 = 2.
    assert (fine.mean, fine.n, fine.datasets) == (pytest.approx(0.6), 3, 1)
    assert fine.sd == pytest.approx(0.4)

    coarse = by_key[("granularity", "coarse", ALL_MODELS)]
    # 0.4, 0.0, 0.8, 0.3, 0.0, 0.9: sum 2.4, mean 0.4; squared deviations sum to 0.74.
    assert coarse.mean == pytest.approx(0.4)
    assert coarse.sd == pytest.approx(math.sqrt(0.74 / 5))
    assert (coarse.n, coarse.datasets) == (6, 2)

    m1 = by_key[("granularity", "coarse", "m1")]
    assert m1.mean == pytest.approx(0.2)
    assert m1.sd == pytest.approx(0.4 / math.sqrt(2))
    # One score: no standard deviation.
    assert by_key[("granularity", "fine", "m1")].sd is None

    synergy = by_key[("interaction", "synergy", ALL_MODELS)]
    assert synergy.mean == pytest.approx(0.4)
    # Uniqueness has no dataset here, so no row.
    assert not [r for r in rows if r.category == "uniqueness"]
    assert [(r.category, r.model) for r in rows[:4]] == [
        ("redundancy", "all"),
        ("redundancy", "m1"),
        ("redundancy", "m2"),
        ("redundancy", "m3"),
    ]
    assert all(r.ci_low is None and r.ci_high is None for r in rows)


def test_dimension_means_intervals_and_unknown_datasets(catalog: Catalog) -> None:
    scores = {m: {**s, "MyPrivateSet": 0.5} for m, s in NORMALIZED.items()}
    rows = dimension_means(scores, catalog, n_boot=200, seed=1)
    assert rows == dimension_means(scores, catalog, n_boot=200, seed=1)
    for row in rows:
        assert row.ci_low is not None and row.ci_high is not None
        assert row.ci_low - 1e-6 <= row.mean <= row.ci_high + 1e-6
    # The unannotated dataset is left out of every mean unless strict.
    fine = next(r for r in rows if (r.category, r.model) == ("fine", "all"))
    assert fine.n == 3
    with pytest.raises(ValueError, match="MyPrivateSet"):
        dimension_means(scores, catalog, strict=True)


def test_compare_categories_paired_over_models(catalog: Catalog) -> None:
    res = compare_categories(NORMALIZED, catalog, "granularity", "fine", "coarse", n_boot=0)
    # Per model: fine mean vs coarse mean = (0.2, 0.2), (0.6, 0.55), (1.0, 0.45).
    # Differences 0, 0.05, 0.55: mean 0.2, sample variance 0.185 / 2.
    sd = math.sqrt(0.185 / 2)
    t = 0.2 / (sd / math.sqrt(3))
    assert res.units == ("m1", "m2", "m3")
    assert res.n == 3
    assert (res.mean_a, res.mean_b) == (pytest.approx(0.6), pytest.approx(0.4))
    assert res.mean_diff == pytest.approx(0.2)
    assert res.statistic == pytest.approx(t)
    assert res.statistic == pytest.approx(1.138989, abs=1e-6)
    assert res.p_value == pytest.approx(_p_two_sided_df2(t))
    assert not res.significant()
    assert res.dimension == "granularity" and res.paired_over == "models"


def test_compare_categories_two_models_one_degree_of_freedom(catalog: Catalog) -> None:
    scores = {"m1": NORMALIZED["m1"], "m2": NORMALIZED["m2"]}
    res = compare_categories(scores, catalog, "interaction", "redundancy", "synergy", n_boot=0)
    # Redundancy (VQA, NoCaps) means 0.3 and 0.7; synergy 0.0 and 0.3; differences 0.3, 0.4.
    t = 0.35 / (math.sqrt(0.005) / math.sqrt(2))
    assert res.statistic == pytest.approx(t)
    assert res.statistic == pytest.approx(7.0)
    assert res.p_value == pytest.approx(_p_two_sided_df1(t))


def test_compare_model_groups_paired_over_datasets() -> None:
    res = compare_model_groups(
        NORMALIZED, ["m3"], ["m1", "m2"], labels=("big", "small"), n_boot=500, seed=3
    )
    # Per dataset (sorted): Hateful Memes 0.9 vs 0.15, NoCaps 0.0 vs 0.6, VQA 1.0 vs 0.4.
    diffs = [0.75, -0.6, 0.6]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    t = mean / (sd / math.sqrt(3))
    assert res.units == ("Hateful Memes", "NoCaps", "VQA")
    assert (res.label_a, res.label_b, res.paired_over) == ("big", "small", "datasets")
    assert res.mean_diff == pytest.approx(0.25)
    assert res.statistic == pytest.approx(t)
    assert res.p_value == pytest.approx(_p_two_sided_df2(t))
    assert res.ci_low is not None and res.ci_high is not None
    # The interval lies within the range of the differences (up to rounding).
    assert min(diffs) - 1e-12 <= res.ci_low <= 0.25 <= res.ci_high <= max(diffs) + 1e-12


def test_comparison_errors(catalog: Catalog) -> None:
    with pytest.raises(ValueError, match="not a category of granularity"):
        compare_categories(NORMALIZED, catalog, "granularity", "fine", "huge")
    with pytest.raises(ValueError, match="unknown dimension"):
        compare_categories(NORMALIZED, catalog, "colour", "a", "b")
    with pytest.raises(ValueError, match="at least 2 models"):
        compare_categories({"m1": NORMALIZED["m1"]}, catalog, "granularity", "fine", "coarse")
    with pytest.raises(ValueError, match="in both groups: m1"):
        compare_model_groups(NORMALIZED, ["m1"], ["m1", "m2"])
    # Only the testable pairs: uniqueness has no dataset here.
    pairs = compare_all_categories(NORMALIZED, catalog, "interaction", n_boot=0)
    assert [(r.label_a, r.label_b) for r in pairs] == [("redundancy", "synergy")]


def test_bootstrap_ci() -> None:
    values = [0.0] * 4 + [1.0] * 4
    # Values one by one: the mean of 8 draws is k/8; P(k <= 1) = 9/256 > 2.5%.
    assert bootstrap_ci(values, n_boot=4000, seed=0) == pytest.approx((0.125, 0.875))
    # Two clusters of identical values: the mean is 0, 1/2 or 1 with chances 1/4, 1/2, 1/4.
    clustered = bootstrap_ci(values, clusters=["a"] * 4 + ["b"] * 4, n_boot=4000, seed=0)
    assert clustered == pytest.approx((0.0, 1.0))
    assert bootstrap_ci([0.3, 0.3, 0.3], n_boot=100) == pytest.approx((0.3, 0.3))
    assert bootstrap_ci(values, n_boot=0) == (None, None)
    assert bootstrap_ci([], n_boot=10) == (None, None)
    assert bootstrap_ci(values, seed=5) == bootstrap_ci(values, seed=5)
    with pytest.raises(ValueError, match="clusters has 1 labels for 8 values"):
        bootstrap_ci(values, clusters=["a"])
