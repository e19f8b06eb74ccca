"""Prompt-stability metrics over repeats of a sample: instability and CircularEval accuracy.

Instability follows ReForm-Eval (Li et al., 2023): each sample is asked several times with other
instructions and reshuffled options; for each sample, the entropy ``H = -sum p ln p`` of the
distribution of its predicted option *texts* over those duplicates (an answer that maps to no
option counts as its own category: its raw text) is averaged over samples. 0 means the model
always picks the same option; uniform random picking over k options approaches ``ln k``.

CircularEval follows VLMEvalKit (MMBench): a question is asked once per rotation of its options
and counts as correct only if every rotation is answered correctly.

Failed requests are not answers: they are left out of the entropy, and a sample with a failed
rotation has no CircularEval verdict. Intervals resample samples, like `summarize`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from lmmprobe.metrics.bootstrap import (
    FloatArray,
    WeightArray,
    bootstrap_distribution,
    finite_or_none,
    percentile_interval,
    ratio,
)
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score


def entropy(categories: Sequence[str]) -> float:
    """Natural-log entropy of the empirical distribution of `categories` (0 when empty)."""
    return entropy_of_counts(Counter(categories).values())


def entropy_of_counts(counts: Iterable[int]) -> float:
    """`entropy` of categories seen `counts` times each (in order of first appearance)."""
    counts = list(counts)
    n = sum(counts)
    if n == 0:
        return 0.0
    return -sum((c / n) * math.log(c / n) for c in counts)


def category_key(text: str | None) -> str | bytes:
    """What stands for an answer's category (`instability`) where rows are reduced, not held.

    A short text is itself; a long one is its 16-byte BLAKE2b digest, so a model's free-form
    answers over many repeats cost no more than a few bytes each (texts are equal exactly where
    their digests are, up to a 2**-128 chance). A digest (bytes) never equals a text (str).
    """
    text = text or ""
    if len(text) <= 64:
        return text
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def instability_of(
    categories: dict[str, list[str | bytes]], *, n_boot: int = 1000, seed: int = 0
) -> MetricValue:
    """`instability` from each sample's answered categories (empty: no answered row).

    Args:
        categories: Per sample id, its answered rows' categories in row order (`category_key`
            of each), every sample of the rows present.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    """
    groups = dict(sorted(categories.items()))
    values = np.zeros(len(groups))
    defined = np.zeros(len(groups))
    rows = 0
    for i, answered in enumerate(groups.values()):
        if answered:
            values[i], defined[i] = entropy_of_counts(Counter(answered).values()), 1.0
            rows += len(answered)
    return mean_with_interval(values, defined, rows, n_boot, seed)


def circular_of(
    verdicts: dict[str, tuple[bool, bool]], *, n_boot: int = 1000, seed: int = 0
) -> MetricValue:
    """`circular_accuracy` from each sample's (some rotation failed, every rotation right).

    Args:
        verdicts: Per sample id: whether some row of it is a failed request, and whether
            every row of it is right.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    """
    groups = dict(sorted(verdicts.items()))
    values = np.zeros(len(groups))
    defined = np.zeros(len(groups))
    for i, (failed, right) in enumerate(groups.values()):
        if failed:
            continue  # an unanswered rotation leaves the sample without a verdict
        values[i], defined[i] = float(right), 1.0
    return mean_with_interval(values, defined, int(defined.sum()), n_boot, seed)


def add_verdict(
    verdicts: dict[str, tuple[bool, bool]], sample_id: str, failed: bool, correct: object
) -> None:
    """Add one row to `circular_of`'s per-sample verdicts (rows in any order)."""
    was_failed, was_right = verdicts.get(sample_id, (False, True))
    verdicts[sample_id] = (was_failed or failed, was_right and bool(correct))


def _category(score: Score) -> str:
    # ReForm-Eval's categories (`metric_eval` in run_loader_eval.py): the predicted option's
    # text, or the raw output when no option was read, in one space, so an unmatched output
    # that equals an option text falls in that option's category, as theirs does.
    return score.prediction_text or ""


def policy_spread_of(
    rows: dict[str, dict[str, list[int]]],
    labels: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> MetricValue:
    """`frame_sensitivity`: the best policy's accuracy minus the worst's, with an interval.

    Each policy's accuracy is its right rows over its answered rows (failed requests left
    out, as `accuracy` leaves them). Intervals resample samples, every policy's rows of a
    sample together, as `summarize` does: the spread is paired, not two independent figures.

    Args:
        rows: Per sample id (every sample of the rows, answered or not), per policy label,
            [right rows, answered rows].
        labels: The run's policies, in order.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The spread in accuracy (None when some policy has no answered row); ``n`` counts the
        answered rows.

    """
    groups = dict(sorted(rows.items()))
    right = np.zeros((len(groups), len(labels)))
    answered = np.zeros((len(groups), len(labels)))
    for i, per in enumerate(groups.values()):
        for j, label in enumerate(labels):
            r, a = per.get(label, (0, 0))
            right[i, j], answered[i, j] = r, a
    n_rows = int(answered.sum())
    if not groups or not (answered.sum(axis=0) > 0).all():
        return MetricValue(None, None, None, n_rows)
    accuracy = right.sum(axis=0) / answered.sum(axis=0)
    point = float(accuracy.max() - accuracy.min())
    low = high = None
    if n_boot:

        def stat(w: WeightArray) -> FloatArray:
            per_policy = ratio(w @ right, w @ answered)  # NaN where a policy drew no row
            spread: FloatArray = per_policy.max(axis=1) - per_policy.min(axis=1)
            return spread[:, None]

        dist = bootstrap_distribution(stat, len(groups), n_boot, np.random.default_rng(seed))
        lo, hi = percentile_interval(dist)
        low, high = finite_or_none(lo[0]), finite_or_none(hi[0])
    return MetricValue(point, low, high, n_rows)


def mean_with_interval(
    values: FloatArray, defined: FloatArray, n_rows: int, n_boot: int, seed: int
) -> MetricValue:
    """Mean of per-sample values over the defined samples, with a cluster-bootstrap interval.

    Args:
        values: One value per sample.
        defined: 1.0 where the sample's value is defined, else 0.0.
        n_rows: The ``n`` to report (rows behind the values).
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The mean (None when no sample is defined) with its 95% percentile interval.

    """
    if not defined.any():
        return MetricValue(None, None, None, n_rows)
    point = float(values[defined > 0].mean())
    low = high = None
    if n_boot:

        def stat(w: WeightArray) -> FloatArray:
            return ratio((w @ (values * defined))[:, None], (w @ defined)[:, None])

        dist = bootstrap_distribution(stat, values.size, n_boot, np.random.default_rng(seed))
        lo, hi = percentile_interval(dist)
        low, high = finite_or_none(lo[0]), finite_or_none(hi[0])
    return MetricValue(point, low, high, n_rows)


def instability(scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0) -> MetricValue:
    """ReForm-Eval instability: mean per-sample entropy of predicted option texts.

    Args:
        scores: One model's rows; a sample's duplicates share its ``sample_id``.
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The mean entropy (nats) over samples with at least one answered row; ``n`` counts the
        answered rows it is computed from.

    """
    categories: dict[str, list[str | bytes]] = {}
    for s in scores:
        found = categories.setdefault(s.sample_id, [])
        if s.error_type is None and s.stage != "error":
            found.append(_category(s))
    return instability_of(categories, n_boot=n_boot, seed=seed)


def circular_accuracy(scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0) -> MetricValue:
    """CircularEval accuracy: share of samples answered correctly under every rotation.

    Args:
        scores: One model's rows, one per (sample, rotation).
        n_boot: Bootstrap resamples (0: no interval).
        seed: Resampling seed.

    Returns:
        The share over samples whose rotations all got an answer; ``n`` counts those samples.

    """
    verdicts: dict[str, tuple[bool, bool]] = {}
    for s in scores:
        add_verdict(
            verdicts, s.sample_id, s.error_type is not None or s.stage == "error", s.correct
        )
    return circular_of(verdicts, n_boot=n_boot, seed=seed)
