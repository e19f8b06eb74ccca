"""Cluster (percentile) bootstrap over weighted per-cluster sums.

A resample draws ``n_clusters`` clusters with replacement. Rather than copying rows, it is
represented by how many times each cluster was drawn: a row of a ``(n_boot, n_clusters)``
weight matrix. Any statistic built from per-cluster sums is then a matrix product away, so
thousands of resamples of thousands of clusters cost a few vectorized passes. Weights are
produced in chunks of resamples so memory stays bounded whatever the number of clusters.

Clusters that contribute identically to every statistic (the same *profile*, e.g. two
samples with the same gold class and the same verdicts) are interchangeable: a statistic
then depends on a resample only through how many draws fell on each profile, and those
counts follow a multinomial law with the profiles' shares as probabilities. When profiles
are much fewer than clusters, `profile_bootstrap_distribution` draws these counts directly,
which gives the same bootstrap distribution as drawing every cluster at a small fraction of
the cost (the random numbers, hence the exact interval ends, differ).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
WeightArray = npt.NDArray[np.floating[Any]]
IntArray = npt.NDArray[np.intp]

Statistic = Callable[[WeightArray], npt.NDArray[np.floating[Any]]]
"""Maps a ``(b, n_clusters)`` weight chunk to a ``(b, m)`` array of resampled statistics."""

MAX_CHUNK_ELEMENTS = 1 << 16
"""Weight-matrix entries per chunk. Measured fastest: the counting pass stays in cache, the
temporaries stay small enough for the allocator to reuse rather than page in afresh, and the
matrix products stay small enough that BLAS does not wake (and spin) extra threads."""

CLUSTERS_PER_PROFILE = 32
"""Draw per profile (`profiles_pay_off`) when clusters are at least this many times more than
profiles. Measured on 10,000 clusters: a multinomial count per profile (one binomial draw)
costs 10 to 30 times what a drawn cluster does (an integer draw and a count); the two break
even near 30 clusters per profile; at 250 (the demo) drawing per profile is over ten times
faster."""

DENSE_GROUP_COLUMNS = 32
"""Up to this many (group, value) columns, `GroupedSums` uses one dense matrix product; past
it the sparse path measured faster."""


def resample_weights(
    n_clusters: int, n_boot: int, rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Draw bootstrap resamples as cluster multiplicities.

    Args:
        n_clusters: Number of clusters (e.g. samples) to resample; each resample has as many.
        n_boot: Number of resamples.
        rng: Source of randomness, e.g. ``numpy.random.default_rng(seed)``.

    Returns:
        A float32 ``(n_boot, n_clusters)`` array whose entry ``[b, c]`` counts how many times
        cluster ``c`` was drawn in resample ``b``; each row sums to ``n_clusters``.

    """
    if n_clusters < 0 or n_boot < 0:
        raise ValueError(f"n_clusters and n_boot must be >= 0, got {n_clusters} and {n_boot}")
    size = n_boot * n_clusters
    if size == 0:
        return np.zeros((n_boot, n_clusters), dtype=np.float32)
    # int32 draws generate faster and suffice while the offset indices below fit in them,
    # which chunked callers always ensure.
    dtype = np.int32 if size < 2**31 else np.int64
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters), dtype=dtype)
    draws += np.arange(0, size, n_clusters).astype(draws.dtype)[:, None]
    # One bincount over row-offset indices counts every resample at once.
    counts = np.bincount(draws.ravel(), minlength=size)
    return counts.reshape(n_boot, n_clusters).astype(np.float32)


def weight_chunks(
    n_clusters: int,
    n_boot: int,
    rng: np.random.Generator,
    max_elements: int = MAX_CHUNK_ELEMENTS,
) -> Iterator[npt.NDArray[np.float32]]:
    """Yield the rows of a bootstrap weight matrix in chunks of bounded size.

    Args:
        n_clusters: Number of clusters to resample.
        n_boot: Total number of resamples across all chunks.
        rng: Source of randomness, consumed in order, so a seed fixes every chunk.
        max_elements: Upper bound on ``rows * n_clusters`` per chunk (at least one row).

    Yields:
        Float32 ``(b, n_clusters)`` weight chunks, their ``b`` summing to ``n_boot``.

    """
    rows = max(1, max_elements // max(1, n_clusters))
    for start in range(0, n_boot, rows):
        yield resample_weights(n_clusters, min(rows, n_boot - start), rng)


def cluster_profiles(keys: npt.ArrayLike) -> tuple[IntArray, IntArray, IntArray]:
    """Group clusters whose rows of integer keys are equal into profiles.

    Args:
        keys: ``(n_clusters, k)`` integer key columns (e.g. per-cluster sums); clusters with
            equal rows share a profile.

    Returns:
        ``(profile, first, sizes)``: the profile of each cluster, the first cluster of each
        profile and each profile's number of clusters. Profiles are numbered in the
        lexicographic order of their keys, so the numbering depends on the keys alone, not on
        the order of the clusters.

    """
    matrix = np.asarray(keys, dtype=np.int64)
    n = matrix.shape[0]
    return cluster_profiles_of_columns(list(matrix.reshape(n, -1).T) if n else [], n)


def cluster_profiles_of_columns(
    columns: Sequence[npt.NDArray[Any]], n: int
) -> tuple[IntArray, IntArray, IntArray]:
    """`cluster_profiles` of key columns given one by one, no ``(n, k)`` matrix made.

    Args:
        columns: The ``k`` key columns, each of ``n`` integral values (read as int64).
        n: The number of clusters.

    Returns:
        `cluster_profiles`'s ``(profile, first, sizes)``.

    """
    if n == 0:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, empty
    # One int64 code per cluster, mixing the columns in radix order so that sorting the codes
    # sorts the keys. Each step is vectorized; renumbering keeps the code from overflowing.
    code = np.zeros(n, dtype=np.int64)
    span = 1
    for given in columns:
        column = np.asarray(given, dtype=np.int64)
        if column.shape != (n,):
            raise ValueError(f"a key column of shape {column.shape}, not ({n},)")
        low = int(column.min())
        radix = int(column.max()) - low + 1
        if radix > n:  # sparse values: their ranks sort the same and span at most n
            _, ranks = np.unique(column, return_inverse=True)
            values, radix = ranks.astype(np.int64), int(ranks.max()) + 1
        else:
            values = column - low
        if span * radix >= 2**62:
            _, compact = np.unique(code, return_inverse=True)
            code, span = compact.astype(np.int64), int(compact.max()) + 1
        code = code * radix + values
        span *= radix
    _, first, profile, sizes = np.unique(
        code, return_index=True, return_inverse=True, return_counts=True
    )
    return profile.astype(np.intp), first.astype(np.intp), sizes.astype(np.intp)


def profiles_pay_off(n_profiles: int, n_clusters: int) -> bool:
    """Whether `profile_bootstrap_distribution` beats drawing every cluster.

    Args:
        n_profiles: Number of distinct profiles.
        n_clusters: Number of clusters they hold.

    Returns:
        True when clusters are at least `CLUSTERS_PER_PROFILE` times more than profiles.

    """
    return n_profiles * CLUSTERS_PER_PROFILE <= n_clusters


def profile_weight_chunks(
    sizes: npt.ArrayLike,
    n_boot: int,
    rng: np.random.Generator,
    max_elements: int = MAX_CHUNK_ELEMENTS,
) -> Iterator[npt.NDArray[np.float32]]:
    """Yield bootstrap resamples as draws per profile, in chunks of bounded size.

    A resample draws ``n = sum(sizes)`` clusters uniformly with replacement; the number of
    draws that fall on each profile is then ``Multinomial(n, sizes / n)``, drawn here directly.

    Args:
        sizes: Number of clusters of each profile.
        n_boot: Total number of resamples across all chunks.
        rng: Source of randomness, consumed in order, so a seed fixes every chunk.
        max_elements: Upper bound on ``rows * n_profiles`` per chunk (at least one row).

    Yields:
        Float32 ``(b, n_profiles)`` counts (as `weight_chunks`), each row summing to ``n``,
        ``b`` summing to ``n_boot``.

    """
    counts = np.asarray(sizes, dtype=np.int64)
    n, n_profiles = int(counts.sum()), counts.size
    rows = max(1, max_elements // max(1, n_profiles))
    for start in range(0, n_boot, rows):
        b = min(rows, n_boot - start)
        if n == 0:
            yield np.zeros((b, n_profiles), dtype=np.float32)
        else:
            yield rng.multinomial(n, counts / n, size=b).astype(np.float32)


def _evaluate(statistic: Statistic, chunks: Iterator[WeightArray]) -> FloatArray:
    """Stack a statistic's values on every chunk of resample weights."""
    parts = [np.asarray(statistic(w), dtype=np.float64) for w in chunks]
    if not parts:
        return np.empty((0, 0), dtype=np.float64)
    return np.concatenate(parts, axis=0)


def profile_bootstrap_distribution(
    statistic: Statistic,
    sizes: npt.ArrayLike,
    n_boot: int,
    rng: np.random.Generator,
    max_elements: int = MAX_CHUNK_ELEMENTS,
) -> FloatArray:
    """Evaluate a statistic on every resample of a cluster bootstrap over profiles.

    The same bootstrap as `bootstrap_distribution` over the clusters, for a statistic that
    depends on a resample only through the draws per profile (see the module docstring).

    The arguments are `bootstrap_distribution`'s, except that `statistic` maps a
    ``(b, n_profiles)`` chunk of draws per profile, `sizes` gives the number of clusters of each
    profile, and `max_elements` bounds `profile_weight_chunks`.
    """
    return _evaluate(statistic, profile_weight_chunks(sizes, n_boot, rng, max_elements))


def bootstrap_distribution(
    statistic: Statistic,
    n_clusters: int,
    n_boot: int,
    rng: np.random.Generator,
    max_elements: int = MAX_CHUNK_ELEMENTS,
) -> FloatArray:
    """Evaluate a statistic on every resample of a cluster bootstrap.

    Args:
        statistic: Maps a ``(b, n_clusters)`` weight chunk to a ``(b, m)`` array; NaN marks a
            resample on which the statistic is undefined.
        n_clusters: Number of clusters to resample.
        n_boot: Number of resamples.
        rng: Source of randomness.
        max_elements: Memory bound passed to `weight_chunks`.

    Returns:
        The ``(n_boot, m)`` bootstrap distribution (``m`` is 0 when ``n_boot`` is 0).

    """
    return _evaluate(statistic, weight_chunks(n_clusters, n_boot, rng, max_elements))


def ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> FloatArray:
    """Divide element-wise, giving NaN where the denominator is not positive.

    Args:
        numerator: Resampled numerators.
        denominator: Resampled denominators, same shape.

    Returns:
        ``numerator / denominator`` as float64, NaN where ``denominator <= 0``.

    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    out = np.full(np.broadcast_shapes(num.shape, den.shape), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


class GroupedSums:
    """Resampled sums of per-cluster values within groups (e.g. gold classes).

    A unit is one (cluster, group) cell with one or more values, such as a sample's correct
    and total rows of one class. For few groups the units are folded into a dense
    ``(n_clusters, n_values * n_groups)`` matrix and resampled by one matrix product; for many
    groups, where that matrix would be large and mostly zero, units are gathered and added up
    group by group instead, at a cost proportional to the number of units.
    """

    def __init__(
        self,
        unit_cluster: npt.ArrayLike,
        unit_group: npt.ArrayLike,
        unit_values: npt.ArrayLike,
        n_clusters: int,
    ) -> None:
        """Index the units.

        Args:
            unit_cluster: Cluster index of each unit, in ``[0, n_clusters)``.
            unit_group: Integer group label of each unit; groups are the distinct labels.
            unit_values: ``(n_units, n_values)`` values of each unit, or ``(n_units,)`` for one.
            n_clusters: Number of clusters the weights resample.

        """
        cluster = np.asarray(unit_cluster, dtype=np.intp)
        labels, group = np.unique(np.asarray(unit_group, dtype=np.int64), return_inverse=True)
        values = np.asarray(unit_values, dtype=np.float32)
        if values.ndim == 1:
            values = values[:, None]
        self.groups: npt.NDArray[np.int64] = labels
        self.n_values = values.shape[1]
        self._n_clusters = n_clusters
        self._unit_cluster = cluster
        self._unit_group = group
        self._unit_values = values
        # Counts (integers) sum exactly whatever the order: one resample of float64 weights
        # (the point values) is then summed unit by unit, no matrix of the clusters made.
        self._integral = bool(np.all(values == np.round(values)))
        self._use_dense = self.n_values * labels.size <= DENSE_GROUP_COLUMNS
        self._dense_matrix: npt.NDArray[np.float32] | None = None
        self._by_group: tuple[IntArray, npt.NDArray[np.float32], IntArray] | None = None

    @property
    def _dense(self) -> npt.NDArray[np.float32] | None:
        """The ``(n_clusters, n_values * n_groups)`` matrix for few groups, else None.

        Made on first use: the point values do not need it.
        """
        if not self._use_dense:
            return None
        if self._dense_matrix is None:
            n_groups = self.groups.size
            dense = np.zeros((self._n_clusters, self.n_values * n_groups), dtype=np.float32)
            for j in range(self.n_values):
                np.add.at(
                    dense,
                    (self._unit_cluster, j * n_groups + self._unit_group),
                    self._unit_values[:, j],
                )
            self._dense_matrix = dense
        return self._dense_matrix

    def _sorted_units(self) -> tuple[IntArray, npt.NDArray[np.float32], IntArray]:
        """The units sorted by group (stable) and where each group starts (made once)."""
        if self._by_group is None:
            order = np.argsort(self._unit_group, kind="stable")
            starts = np.flatnonzero(np.diff(self._unit_group[order], prepend=-1))
            self._by_group = (self._unit_cluster[order], self._unit_values[order], starts)
        return self._by_group

    def sums(self, weights: WeightArray) -> npt.NDArray[np.floating[Any]]:
        """Sum every value per group on each resample.

        Args:
            weights: ``(b, n_clusters)`` weight chunk.

        Returns:
            ``(b, n_values, n_groups)`` array, groups in the order of `groups`.

        """
        b, n_groups = weights.shape[0], self.groups.size
        if n_groups == 0:
            return np.zeros((b, self.n_values, 0), dtype=weights.dtype)
        if b == 1 and weights.dtype == np.float64 and self._integral:
            # Exact integer sums in float64, as the product below gives them.
            drawn = weights[0, self._unit_cluster]
            one: npt.NDArray[np.float64] = np.stack(
                [
                    np.bincount(
                        self._unit_group,
                        weights=drawn * self._unit_values[:, j],
                        minlength=n_groups,
                    ).astype(np.float64)  # a weighted bincount is float64 already
                    for j in range(self.n_values)
                ]
            )
            return one[None]
        dense = self._dense
        if dense is not None:
            return (weights @ dense).reshape(b, self.n_values, n_groups)
        # Units are sorted by group, so each group is one contiguous run to add up. (A weighted
        # bincount over (resample, group) bins measured several times slower for few groups.)
        cluster, values, starts = self._sorted_units()
        gathered = weights[:, cluster]
        return np.stack(
            [
                np.add.reduceat(gathered * values[:, j], starts, axis=1)
                for j in range(self.n_values)
            ],
            axis=1,
        )


class GroupRatioMean:
    """Resampled mean over groups of a within-group ratio of sums (e.g. balanced accuracy).

    On each resample, each group's ratio is the sum of its units' numerators over the sum of
    their denominators, both weighted by how often the units' clusters were drawn; the mean
    is taken over the groups with a positive denominator on that resample. A group made of a
    single unit has a ratio that does not depend on the weight, only on whether its cluster
    was drawn, so such groups (one per sample when, say, every gold answer text differs) are
    handled by one presence product, and only the others need per-group sums.
    """

    def __init__(
        self,
        unit_cluster: npt.ArrayLike,
        unit_group: npt.ArrayLike,
        numerators: npt.ArrayLike,
        denominators: npt.ArrayLike,
        n_clusters: int,
    ) -> None:
        """Index the units.

        Args:
            unit_cluster: Cluster index of each unit, in ``[0, n_clusters)``.
            unit_group: Integer group label of each unit.
            numerators: Numerator of each unit (e.g. correct rows of a sample in a class).
            denominators: Denominator of each unit (e.g. rows of that sample in that class).
            n_clusters: Number of clusters the weights resample.

        """
        cluster = np.asarray(unit_cluster, dtype=np.intp)
        num = np.asarray(numerators, dtype=np.float64)
        den = np.asarray(denominators, dtype=np.float64)
        _, group, size = np.unique(
            np.asarray(unit_group, dtype=np.int64), return_inverse=True, return_counts=True
        )
        single = size[group] == 1
        kept = single & (den > 0)
        self._single_cluster = cluster[kept]
        self._single_terms = np.stack([num[kept] / den[kept], np.ones(int(kept.sum()))], axis=1)
        multi = ~single
        self._multi = GroupedSums(
            cluster[multi], group[multi], np.stack([num[multi], den[multi]], axis=1), n_clusters
        )

    def __call__(self, weights: WeightArray) -> FloatArray:
        """Evaluate the mean of group ratios on each resample.

        Args:
            weights: ``(b, n_clusters)`` weight chunk.

        Returns:
            ``(b,)`` means; NaN on a resample where no group has a positive denominator.

        """
        total = np.zeros(weights.shape[0])
        count = np.zeros(weights.shape[0])
        if self._single_cluster.size:
            drawn = (weights[:, self._single_cluster] > 0).astype(weights.dtype)
            sums = drawn @ self._single_terms.astype(weights.dtype)
            total += sums[:, 0]
            count += sums[:, 1]
        if self._multi.groups.size:
            sums = self._multi.sums(weights)
            present = sums[:, 1] > 0
            total += np.divide(
                sums[:, 0], sums[:, 1], out=np.zeros(present.shape), where=present
            ).sum(axis=1)
            count += present.sum(axis=1)
        return ratio(total, count)


def percentile_interval(
    distribution: npt.ArrayLike, level: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Percentile confidence interval of each column, ignoring NaN resamples.

    Args:
        distribution: ``(n_boot, m)`` bootstrap distribution; NaN marks a dropped resample.
        level: Coverage of the interval, e.g. 0.95 for the 2.5th and 97.5th percentiles.

    Returns:
        ``(low, high)``, each of length ``m``; NaN for a column with no finite resample.

    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    dist = np.asarray(distribution, dtype=np.float64)
    tail = 50.0 * (1.0 - level)
    low = np.full(dist.shape[1], np.nan)
    high = np.full(dist.shape[1], np.nan)
    # Column by column: np.nanpercentile warns on all-NaN columns, which are legitimate here.
    for j in range(dist.shape[1]):
        column = dist[:, j]
        kept = column[~np.isnan(column)]
        if kept.size:
            low[j], high[j] = np.percentile(kept, [tail, 100.0 - tail])
    return low, high


def ratio_intervals(
    numerators: npt.ArrayLike,
    denominators: npt.ArrayLike,
    n_boot: int,
    rng: np.random.Generator,
    level: float = 0.95,
) -> tuple[FloatArray, FloatArray]:
    """Cluster-bootstrap percentile intervals of ratio-of-sums statistics.

    Column ``j`` estimates ``sum(numerators[:, j]) / sum(denominators[:, j])``; both sums are
    resampled together, and resamples with a zero denominator are dropped.

    Args:
        numerators: ``(n_clusters, k)`` per-cluster numerators.
        denominators: ``(n_clusters, k)`` per-cluster denominators.
        n_boot: Number of resamples.
        rng: Source of randomness.
        level: Interval coverage.

    Returns:
        ``(low, high)`` of length ``k``; NaN where no resample had a positive denominator or
        ``n_boot`` is 0.

    """
    num = np.asarray(numerators, dtype=np.float32)
    den = np.asarray(denominators, dtype=np.float32)
    if num.ndim != 2 or num.shape != den.shape:
        raise ValueError(
            f"numerators and denominators must be 2-D of equal shape, got {num.shape}, {den.shape}"
        )
    k = num.shape[1]
    if n_boot == 0:
        return np.full(k, np.nan), np.full(k, np.nan)
    both = np.concatenate([num, den], axis=1)

    def statistic(weights: WeightArray) -> FloatArray:
        sums = weights @ both
        return ratio(sums[:, :k], sums[:, k:])

    return percentile_interval(bootstrap_distribution(statistic, num.shape[0], n_boot, rng), level)


def finite_or_none(x: float) -> float | None:
    """Return ``x`` as a Python float, or None when it is NaN or infinite."""
    return float(x) if math.isfinite(x) else None
