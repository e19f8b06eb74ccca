"""Completed samples' sums kept as profiles: a small number per sample, a row per profile.

The answer rates' cluster bootstrap (`lmmprobe.metrics.choice`) reads each sample only
through its *profile*: its per-sample indicator totals and its (gold class, correct rows,
rows) cell. Samples of one profile are interchangeable, and a run's samples usually share a
few dozen profiles. When rows come in sample-id order, each sample is complete once the next
one starts, so its profile can be found then and the sample kept as one ``uint16`` profile
number (2 bytes) instead of its sums (44 bytes of totals and 16 per cell). The profiles (one
row of integers each: no Python object per profile either) are all the profile bootstrap and
the point values read; the numbers per sample let the per-sample table be rebuilt, value for
value, when the profiles turn out too many to pay off (`SampleProfiles.dense`).

A sample whose rows fall in several gold classes is a profile of its own, as
`lmmprobe.metrics.choice._profiles` keeps it. Past `PROFILE_LIMIT` distinct profiles the
caller goes back to per-sample arrays (`SampleProfiles.add` refuses the samples that would
pass it), so the profiles stay small whatever the rows.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["NO_CELL", "PROFILE_LIMIT", "SEVERAL_CELLS", "SampleProfiles"]

PROFILE_LIMIT = 1 << 14
"""Most distinct profiles kept (their numbers fit a ``uint16``). Past it the profile bootstrap
pays off only for runs of over half a million samples (`bootstrap.CLUSTERS_PER_PROFILE`
each), and per-sample arrays are kept instead."""

NO_CELL = -1
"""The class column of a profile with no choice row (no cell)."""

SEVERAL_CELLS = -2
"""The class column of a sample with cells in several classes (a profile of its own)."""

Int64Array = npt.NDArray[np.int64]
G = TypeVar("G", bound=np.generic)


class SampleProfiles:
    """Samples, in order, each as the number of its profile.

    A profile is one row of `keys`: the ``k`` totals, then its one cell's class, correct rows
    and rows (`NO_CELL` and -1s for none; `SEVERAL_CELLS` and -1s for several, whose cells
    are in `several`), then its sample's number where it has several cells (-1 otherwise).
    """

    def __init__(self, k: int) -> None:
        """None yet, ``k`` totals a sample."""
        self.k = k
        self.n = 0
        self.n_profiles = 0
        # Rows past the counts are spare room, grown by doubling.
        self._keys = np.zeros((0, k + 4), dtype=np.int64)
        self._size = np.zeros(0, dtype=np.int64)
        self._first = np.zeros(0, dtype=np.int64)
        self._ids = np.zeros(0, dtype=np.uint16)
        self._several = np.zeros((0, 4), dtype=np.int64)

    @property
    def keys(self) -> Int64Array:
        """Each profile's row (see the class)."""
        return self._keys[: self.n_profiles]

    @property
    def sizes(self) -> Int64Array:
        """How many samples each profile has."""
        return self._size[: self.n_profiles]

    @property
    def first(self) -> Int64Array:
        """Each profile's first sample."""
        return self._first[: self.n_profiles]

    @property
    def several(self) -> Int64Array:
        """The cells (sample, class, correct rows, rows) of samples with several."""
        return self._several

    def add(
        self,
        totals: npt.NDArray[np.float32],
        cell_sample: npt.NDArray[np.intp],
        cell_class: npt.NDArray[np.intp],
        cell_correct: npt.NDArray[np.float64],
        cell_rows: npt.NDArray[np.float64],
    ) -> bool:
        """Add the next ``len(totals)`` samples (numbered on from `n`), complete.

        Args:
            totals: Their per-sample totals, one row each.
            cell_sample: The sample (its number, from `n` on) of each of their cells, no
                (sample, class) twice.
            cell_class: Each cell's gold class.
            cell_correct: Each cell's correct rows.
            cell_rows: Each cell's rows.

        Returns:
            False, adding nothing, when they would bring the profiles past `PROFILE_LIMIT`.

        """
        m, k = totals.shape[0], self.k
        if not m:
            return True
        local = cell_sample - self.n
        per = np.bincount(local, minlength=m)
        one = per[local] == 1
        key = np.full((m, k + 4), -1, dtype=np.int64)
        key[:, :k] = totals
        key[local[one], k] = cell_class[one]
        key[local[one], k + 1] = cell_correct[one]
        key[local[one], k + 2] = cell_rows[one]
        several = np.flatnonzero(per > 1)
        key[several, k] = SEVERAL_CELLS
        key[several, k + 3] = several + self.n
        first, inverse, counts = _distinct_rows(key)
        # The chunk's distinct rows matched against the profiles so far, in one sort.
        have = self.n_profiles
        _, code, _ = _distinct_rows(np.concatenate([self.keys, key[first]]))
        profile_of_code = np.full(int(code.max()) + 1, -1, dtype=np.int64)
        profile_of_code[code[:have]] = np.arange(have)
        number = profile_of_code[code[have:]]
        new = np.flatnonzero(number < 0)
        if have + new.size > PROFILE_LIMIT:
            return False
        number[new] = np.arange(have, have + new.size)
        end = have + new.size
        self._keys = _room(self._keys, end)
        self._size = _room(self._size, end)
        self._first = _room(self._first, end)
        self._keys[have:end] = key[first[new]]
        self._size[have:end] = 0
        self._first[have:end] = first[new] + self.n
        self._size[:end] += np.bincount(number, weights=counts, minlength=end).astype(np.int64)
        self.n_profiles = end
        if several.size:
            mine = np.isin(local, several)
            self._several = np.concatenate(
                [
                    self._several,
                    np.column_stack(
                        [cell_sample[mine], cell_class[mine], cell_correct[mine], cell_rows[mine]]
                    ).astype(np.int64),
                ]
            )
        self._ids = _room(self._ids, self.n + m)
        self._ids[self.n : self.n + m] = number[inverse]
        self.n += m
        return True

    def dense(self) -> tuple[npt.NDArray[np.float32], Int64Array]:
        """Every sample's totals and cells again, value for value, as per-sample arrays.

        Returns:
            The ``(n, k)`` totals, and an ``(n_cells, 4)`` array of every sample's cells
            (sample, class, correct rows, rows).

        """
        k = self.k
        ids = self._ids[: self.n]
        keys = self.keys
        totals = keys[:, :k].astype(np.float32)[ids]
        single = np.flatnonzero(keys[ids, k] >= 0)
        cells = np.column_stack([single, keys[ids[single], k : k + 3]])
        return totals, np.concatenate([cells, self._several])


def _room(array: npt.NDArray[G], size: int) -> npt.NDArray[G]:
    """`array` with at least `size` rows, grown by doubling (rows kept)."""
    have = array.shape[0]
    if size <= have:
        return array
    grown = np.zeros((max(size, 2 * have), *array.shape[1:]), dtype=array.dtype)
    grown[:have] = array
    return grown


def _distinct_rows(key: Int64Array) -> tuple[npt.NDArray[np.intp], ...]:
    """``np.unique(key, axis=0)``'s first row, inverse and count of each distinct row.

    The columns are small counts: mixed into one int64 code per row, they sort as one
    array, many times faster than rows compared as records (the fallback).
    """
    code = np.zeros(key.shape[0], dtype=np.int64)
    span = 1
    for column in key.T:
        low = int(column.min())
        radix = int(column.max()) - low + 1
        span *= radix
        if span >= 2**62:
            _, first, inverse, counts = np.unique(
                key, axis=0, return_index=True, return_inverse=True, return_counts=True
            )
            return first, inverse.reshape(-1), counts
        code *= radix
        code += column - low
    _, first, inverse, counts = np.unique(
        code, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inverse, counts
