import warnings

import numpy as np
import pytest

from lmmprobe.metrics import bootstrap
from lmmprobe.metrics.bootstrap import (
    GroupedSums,
    GroupRatioMean,
    Statistic,
    bootstrap_distribution,
    cluster_profiles,
    percentile_interval,
    profile_bootstrap_distribution,
    profile_weight_chunks,
    profiles_pay_off,
    ratio,
    ratio_intervals,
    resample_weights,
    weight_chunks,
)


def test_resample_weights_are_cluster_multiplicities() -> None:
    w = resample_weights(7, 50, np.random.default_rng(0))
    assert w.shape == (50, 7)
    assert w.dtype == np.float32
    assert np.all(w >= 0)
    assert np.array_equal(w, np.round(w))
    # Each resample draws exactly n_clusters clusters.
    assert np.all(w.sum(axis=1) == 7)


def test_resample_weights_draw_uniformly() -> None:
    w = resample_weights(5, 20_000, np.random.default_rng(1))
    # Each cluster is drawn once per resample on average.
    assert np.allclose(w.mean(axis=0), 1.0, atol=0.03)


def test_resample_weights_seeded() -> None:
    a = resample_weights(30, 10, np.random.default_rng(5))
    b = resample_weights(30, 10, np.random.default_rng(5))
    c = resample_weights(30, 10, np.random.default_rng(6))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_resample_weights_empty_and_invalid() -> None:
    assert resample_weights(4, 0, np.random.default_rng(0)).shape == (0, 4)
    with pytest.raises(ValueError, match="n_boot"):
        resample_weights(4, -1, np.random.default_rng(0))


def test_weight_chunks_cover_n_boot_within_bound() -> None:
    chunks = list(weight_chunks(10, 95, np.random.default_rng(0), max_elements=200))
    assert sum(c.shape[0] for c in chunks) == 95
    assert all(c.shape[0] * c.shape[1] <= 200 for c in chunks)
    assert len(chunks) == 5
    # More clusters than the bound still yields one resample per chunk.
    assert [c.shape[0] for c in weight_chunks(500, 3, np.random.default_rng(0), 100)] == [1, 1, 1]


def test_ratio_is_nan_where_denominator_is_zero() -> None:
    out = ratio([1.0, 2.0, 0.0], [2.0, 0.0, 0.0])
    assert out[0] == 0.5
    assert np.isnan(out[1:]).all()


def test_percentile_interval_drops_nan_resamples() -> None:
    column = np.arange(101, dtype=float)
    dist = np.stack([column, np.where(column > 50, np.nan, column), np.full(101, np.nan)], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = percentile_interval(dist)
    assert low[0] == pytest.approx(2.5)
    assert high[0] == pytest.approx(97.5)
    assert low[1] == pytest.approx(np.percentile(np.arange(51), 2.5))
    assert high[1] == pytest.approx(np.percentile(np.arange(51), 97.5))
    assert np.isnan(low[2]) and np.isnan(high[2])


def test_percentile_interval_level() -> None:
    low, high = percentile_interval(np.arange(101, dtype=float)[:, None], level=0.5)
    assert (low[0], high[0]) == (pytest.approx(25.0), pytest.approx(75.0))
    with pytest.raises(ValueError, match="level"):
        percentile_interval(np.zeros((3, 1)), level=1.0)


def test_bootstrap_distribution_shape_and_chunks() -> None:
    seen: list[int] = []

    def statistic(w: np.ndarray) -> np.ndarray:
        seen.append(w.shape[0])
        return np.stack([w.sum(axis=1), w[:, 0]], axis=1)

    dist = bootstrap_distribution(statistic, 8, 30, np.random.default_rng(0), max_elements=80)
    assert dist.shape == (30, 2)
    assert np.all(dist[:, 0] == 8)
    assert max(seen) == 10
    assert bootstrap_distribution(statistic, 8, 0, np.random.default_rng(0)).shape == (0, 0)


def _all_weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    return np.concatenate(list(weight_chunks(n_clusters, n_boot, np.random.default_rng(seed))))


def test_ratio_intervals_resample_numerator_and_denominator_together() -> None:
    rng = np.random.default_rng(0)
    den = rng.integers(1, 5, size=(40, 2)).astype(float)
    num = np.floor(den * rng.random((40, 2)))
    weights = _all_weights(40, 300, seed=9)
    naive = (weights @ num) / (weights @ den)
    low, high = ratio_intervals(num, den, 300, np.random.default_rng(9))
    assert low == pytest.approx(np.percentile(naive, 2.5, axis=0))
    assert high == pytest.approx(np.percentile(naive, 97.5, axis=0))


def test_ratio_intervals_edge_cases() -> None:
    num, den = np.ones((5, 1)), np.ones((5, 1))
    low, high = ratio_intervals(num, den, 0, np.random.default_rng(0))
    assert np.isnan(low).all() and np.isnan(high).all()
    low, high = ratio_intervals(num, np.zeros((5, 1)), 50, np.random.default_rng(0))
    assert np.isnan(low).all() and np.isnan(high).all()
    with pytest.raises(ValueError, match="equal shape"):
        ratio_intervals(np.ones((5, 1)), np.ones((5, 2)), 10, np.random.default_rng(0))


@pytest.mark.parametrize("dense", [True, False])
def test_grouped_sums_match_naive(dense: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap, "DENSE_GROUP_COLUMNS", 10**6 if dense else 0)
    cluster = np.array([0, 1, 2, 2, 3, 4])
    group = np.array([7, 3, 7, 3, 9, 3])
    values = np.arange(12, dtype=float).reshape(6, 2)
    grouped = GroupedSums(cluster, group, values, n_clusters=5)
    assert (grouped._dense is not None) == dense
    weights = _all_weights(5, 20, seed=2)
    out = grouped.sums(weights)
    assert out.shape == (20, 2, 3)
    assert list(grouped.groups) == [3, 7, 9]
    for g_index, g in enumerate(grouped.groups):
        in_group = group == g
        expected = weights[:, cluster[in_group]] @ values[in_group]
        assert out[:, :, g_index] == pytest.approx(expected)


def test_grouped_sums_without_units() -> None:
    grouped = GroupedSums(np.array([], dtype=int), np.array([], dtype=int), np.zeros((0, 2)), 4)
    assert grouped.sums(np.ones((3, 4), dtype=np.float32)).shape == (3, 2, 0)


def _naive_group_ratio_mean(
    weights: np.ndarray, cluster: np.ndarray, group: np.ndarray, num: np.ndarray, den: np.ndarray
) -> np.ndarray:
    out = []
    for w in weights:
        ratios = []
        for g in np.unique(group):
            m = group == g
            d = float(w[cluster[m]] @ den[m])
            if d > 0:
                ratios.append(float(w[cluster[m]] @ num[m]) / d)
        out.append(np.mean(ratios) if ratios else np.nan)
    return np.array(out)


@pytest.mark.parametrize("dense", [True, False])
def test_group_ratio_mean_matches_naive(dense: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bootstrap, "DENSE_GROUP_COLUMNS", 10**6 if dense else 0)
    # Groups 0 and 1 have several units; 2, 3 and 4 are single units (4 with no denominator).
    cluster = np.array([0, 1, 1, 2, 3, 4, 5, 6])
    group = np.array([0, 0, 1, 1, 1, 2, 3, 4])
    num = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 3.0, 0.0, 0.0])
    den = np.array([2.0, 1.0, 2.0, 3.0, 1.0, 3.0, 2.0, 0.0])
    mean = GroupRatioMean(cluster, group, num, den, n_clusters=7)
    weights = _all_weights(7, 200, seed=4)
    expected = _naive_group_ratio_mean(weights, cluster, group, num, den)
    assert mean(weights) == pytest.approx(expected, nan_ok=True)
    full = mean(np.ones((1, 7)))
    assert full[0] == pytest.approx((1 / 3 + 3 / 6 + 1.0 + 0.0) / 4)


def test_group_ratio_mean_undefined_when_nothing_drawn() -> None:
    mean = GroupRatioMean([0, 1], [5, 6], [1.0, 1.0], [1.0, 1.0], n_clusters=3)
    weights = np.array([[0.0, 0.0, 3.0], [3.0, 0.0, 0.0]])
    out = mean(weights)
    assert np.isnan(out[0])
    assert out[1] == 1.0


def test_cluster_profiles_group_equal_rows_in_key_order() -> None:
    keys = np.array([[1, 5], [0, 7], [1, 5], [0, 7], [0, 2]])
    profile, first, sizes = cluster_profiles(keys)
    # Profiles follow the lexicographic order of the keys: (0, 2), (0, 7), (1, 5).
    assert list(profile) == [2, 1, 2, 1, 0]
    assert list(first) == [4, 1, 0]
    assert list(sizes) == [1, 2, 2]
    # Reordering the clusters reorders `profile` but keeps the numbering.
    order = np.array([3, 0, 4, 2, 1])
    assert list(cluster_profiles(keys[order])[0]) == list(profile[order])


def test_cluster_profiles_wide_and_sparse_keys() -> None:
    # Columns whose ranges multiply past int64 are renumbered on the way, not overflowed.
    rng = np.random.default_rng(0)
    keys = rng.integers(-(2**40), 2**40, size=(50, 20))
    keys[25:] = keys[:25]
    profile, first, sizes = cluster_profiles(keys)
    assert list(sizes) == [2] * 25
    assert np.array_equal(keys[first[profile]], keys)
    _, expected = np.unique(keys, axis=0, return_inverse=True)
    assert np.array_equal(profile, expected.ravel())
    empty = cluster_profiles(np.zeros((0, 3), dtype=int))
    assert all(a.size == 0 for a in empty)


def test_profiles_pay_off_only_when_clusters_are_many_times_more() -> None:
    assert profiles_pay_off(10, 10 * bootstrap.CLUSTERS_PER_PROFILE)
    assert not profiles_pay_off(10, 10 * bootstrap.CLUSTERS_PER_PROFILE - 1)


def test_profile_weight_chunks_are_multinomial_draws_per_profile() -> None:
    sizes = np.array([3, 1, 6])
    chunks = list(profile_weight_chunks(sizes, 5000, np.random.default_rng(0), max_elements=3000))
    assert [c.shape for c in chunks] == [(1000, 3)] * 5
    weights = np.concatenate(chunks)
    assert weights.dtype == np.float32
    assert np.all(weights.sum(axis=1) == 10)
    # Each profile gets its share of the draws on average.
    assert weights.mean(axis=0) == pytest.approx(sizes, abs=0.1)
    again = np.concatenate(list(profile_weight_chunks(sizes, 5000, np.random.default_rng(0))))
    assert np.array_equal(weights, again)
    assert next(profile_weight_chunks(np.zeros(0, int), 4, np.random.default_rng(0))).shape == (
        4,
        0,
    )


def test_profile_bootstrap_matches_cluster_bootstrap_in_distribution() -> None:
    # 300 clusters in 3 profiles with different per-cluster numerator/denominator pairs.
    profile_values = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 2.0]])
    sizes = np.array([90, 150, 60])
    cluster_values = np.repeat(profile_values, sizes, axis=0)

    def statistic(values: np.ndarray) -> Statistic:
        return lambda w: ratio((w @ values)[:, :1], (w @ values)[:, 1:])

    n_boot = 4000
    by_cluster = bootstrap_distribution(
        statistic(cluster_values), 300, n_boot, np.random.default_rng(1)
    )
    by_profile = profile_bootstrap_distribution(
        statistic(profile_values), sizes, n_boot, np.random.default_rng(2)
    )
    assert by_profile.shape == (n_boot, 1)
    for q in (2.5, 50, 97.5):
        assert np.percentile(by_profile, q) == pytest.approx(np.percentile(by_cluster, q), abs=0.01)
    assert by_profile.std() == pytest.approx(by_cluster.std(), rel=0.1)


@pytest.mark.parametrize("dense", [True, False])
def test_grouped_sums_of_one_float64_resample_equal_the_products_exactly(
    dense: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point values' one resample is summed unit by unit (no cluster matrix made) and
    gives, bit for bit and in the same dtype, what the matrix product of many gives."""
    monkeypatch.setattr(bootstrap, "DENSE_GROUP_COLUMNS", 10**6 if dense else 0)
    rng = np.random.default_rng(4)
    cluster = rng.integers(0, 300, size=900)
    group = rng.integers(0, 6, size=900)
    values = rng.integers(0, 5, size=(900, 2)).astype(float)
    one = np.asarray(rng.integers(0, 3, size=(1, 300)), dtype=np.float64)
    grouped = GroupedSums(cluster, group, values, n_clusters=300)
    got = grouped.sums(one)
    assert grouped._dense_matrix is None and grouped._by_group is None  # nothing made for it
    want = GroupedSums(cluster, group, values, n_clusters=300).sums(np.vstack([one, one]))[:1]
    assert got.dtype == want.dtype and got.shape == want.shape == (1, 2, 6)
    assert np.array_equal(got, want)
