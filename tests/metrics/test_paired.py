"""Paired statistics (`lmmprobe.metrics.paired`): what `compare` and the audits report."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from lmmprobe.metrics.bootstrap import ratio_intervals
from lmmprobe.metrics.paired import LEVEL, difference_interval, mcnemar, natural_key


def test_mcnemar_is_the_exact_binomial_test_of_the_discordant_items() -> None:
    assert mcnemar(0, 0) == 1.0  # nothing tells the sides apart
    assert mcnemar(7, 2) == pytest.approx(stats.binomtest(7, 9, 0.5).pvalue, rel=1e-12)
    assert mcnemar(2, 7) == mcnemar(7, 2)


def test_the_difference_resamples_samples_with_their_repeats() -> None:
    # Two repeats of s1 and s2, one of s10: three clusters, numbered by first appearance.
    ids = ["s1", "s1", "s2", "s2", "s10"]
    diffs = [1.0, 0.0, -1.0, -1.0, 0.5]
    low, high, samples = difference_interval(ids, diffs, n_boot=500, seed=3)
    num = np.array([[1.0], [-2.0], [0.5]])
    den = np.array([[2.0], [2.0], [1.0]])
    lo, hi = ratio_intervals(num, den, 500, np.random.default_rng(3), LEVEL)
    assert (low, high, samples) == (float(lo[0]), float(hi[0]), 3)
    assert difference_interval(ids, diffs, n_boot=0, seed=3) == (None, None, 3)
    assert difference_interval([], [], n_boot=100, seed=3) == (None, None, 0)


def test_pairs_come_in_natural_order() -> None:
    assert sorted(["s10", "s2", "s1"], key=natural_key) == ["s1", "s2", "s10"]
