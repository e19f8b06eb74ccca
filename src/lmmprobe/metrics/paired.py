"""Paired statistics of two sides' verdicts on the same items: what `compare` and audits report.

Two models (or two tools' readings) answered the same (sample, repeat) items. The difference of
their mean credit comes with a cluster-bootstrap interval over samples (a sample's repeats
travel together, as in the run metrics' intervals), and right/wrong verdicts with McNemar's
exact test on the items where exactly one side is right. ``lmmprobe compare`` (and the web
app's compare page) and the audits of ``compare --audit`` / ``score --audit`` compute them here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from lmmprobe._optional import require
from lmmprobe.metrics.bootstrap import finite_or_none, ratio_intervals

__all__ = ["LEVEL", "difference_interval", "mcnemar", "natural_key"]

LEVEL = 0.95
"""Confidence level of the difference's interval."""


def natural_key(sample_id: str) -> list[Any]:
    """Sort key putting ``s2`` before ``s10``: ids are usually a prefix and a number.

    Pairs are listed, and their samples numbered for the resampling, in this order.
    """
    # The split alternates text and runs of decimal digits (any script's, which int() reads);
    # only the runs are numbers. Text can hold characters str.isdigit takes but int() refuses
    # ("1²" leaves "²"), so it is never converted (a number there also met text in another
    # id's key, which does not compare). A run past int()'s digit limit sorts after every
    # number.
    return [_run_value(p) if i % 2 else p for i, p in enumerate(re.split(r"(\d+)", sample_id))]


def _run_value(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # past sys.get_int_max_str_digits() (4,300 digits)
        return math.inf


def mcnemar(only_a: int, only_b: int) -> float:
    """McNemar's exact (two-sided binomial) p-value on the discordant items.

    Args:
        only_a: Items only side A got right.
        only_b: Items only side B got right.

    Returns:
        The p-value; 1.0 when no item tells the sides apart.

    Raises:
        ImportError: scipy is missing (with the extra that installs it).

    """
    if only_a + only_b == 0:
        return 1.0  # no answer where only one side is right: nothing tells them apart
    (stats,) = require("scipy.stats", extra="metrics", purpose="McNemar's exact test")
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def difference_interval(
    sample_ids: Sequence[str], differences: Sequence[float], *, n_boot: int, seed: int
) -> tuple[float | None, float | None, int]:
    """The cluster-bootstrap interval of the mean paired difference, and the samples it spans.

    Args:
        sample_ids: Each pair's sample (its cluster), in the pairs' order.
        differences: Each pair's credit of A minus credit of B.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Seed of ``numpy.random.default_rng``.

    Returns:
        ``(low, high, samples)``: the `LEVEL` percentile interval of the mean difference (None
        without pairs or resamples), and the number of distinct samples. Samples are numbered
        by first appearance, so the pairs' order fixes the draws.

    """
    index: dict[str, int] = {}
    where = [index.setdefault(sid, len(index)) for sid in sample_ids]
    if not where or n_boot == 0:
        return None, None, len(index)
    # Per-sample sums of the difference and the pair counts, added in pair order.
    num = np.zeros((len(index), 1))
    den = np.zeros((len(index), 1))
    rows = np.asarray(where, dtype=np.intp)
    np.add.at(num[:, 0], rows, np.asarray(differences, dtype=np.float64))
    np.add.at(den[:, 0], rows, 1.0)
    lo, hi = ratio_intervals(num, den, n_boot, np.random.default_rng(seed), LEVEL)
    return finite_or_none(float(lo[0])), finite_or_none(float(hi[0])), len(index)
