"""Run-level answer metrics with cluster-bootstrap confidence intervals.

Every metric is a ratio of row counts. Rows whose request failed (errors) are not answers:
they count only in ``error_rate`` and are left out of every other denominator. Unparsed
answers are answers, and wrong ones, unless a judge read one: then the judges' verdict
(`RowChunk.judge_correct`) decides it, right or wrong (a judged headline; ``rules_only`` sums
keep the rules' reading alone). A row is an error when it carries an ``error_type`` (or,
defensively, has stage ``"error"``). Confidence intervals resample samples, not rows,
because repeats of one sample are not independent draws.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from lmmprobe.metrics.bootstrap import (
    FloatArray,
    GroupRatioMean,
    IntArray,
    WeightArray,
    bootstrap_distribution,
    cluster_profiles_of_columns,
    finite_or_none,
    percentile_interval,
    profile_bootstrap_distribution,
    profiles_pay_off,
    ratio,
)
from lmmprobe.metrics.sample_profiles import SEVERAL_CELLS, SampleProfiles
from lmmprobe.metrics.value import MetricValue
from lmmprobe.schema import Score
from lmmprobe.schema.rows import RowChunk, chunk_of_scores

METRIC_NAMES: tuple[str, ...] = (
    "accuracy",
    "balanced_accuracy",
    "abstention_rate",
    "format_hit_rate",
    "unparsed_rate",
    "truncated_rate",
    "error_rate",
)
"""Metrics `summarize` reports, in this order."""

MISSING = "(missing)"
"""Breakdown group of rows whose metadata lacks the key."""

# Per-row indicator columns, summed per sample; ratio metrics divide two of them.
_COLUMNS = (
    "answered",
    "correct",
    "offered",
    "abstained",
    "format_hit",
    "unparsed",
    "truncated",
    "error",
    "row",
    "judged",
    "choice",
)
_COL = {name: i for i, name in enumerate(_COLUMNS)}
_RATIOS: dict[str, tuple[str, str]] = {
    "accuracy": ("correct", "judged"),
    "abstention_rate": ("abstained", "offered"),
    # Format hits are a property of choice answers (a mark or an option text); unparsed counts
    # among rows that get a verdict, so free-form descriptions and captions dilute neither.
    "format_hit_rate": ("format_hit", "choice"),
    "unparsed_rate": ("unparsed", "judged"),
    "truncated_rate": ("truncated", "judged"),
    "error_rate": ("error", "row"),
}
_RATIO_POS = [METRIC_NAMES.index(name) for name in _RATIOS]
_RATIO_NUM = [_COL[num] for num, _ in _RATIOS.values()]
_RATIO_DEN = [_COL[den] for _, den in _RATIOS.values()]
_BALANCED_POS = METRIC_NAMES.index("balanced_accuracy")


def _is_not_none(values: list[Any]) -> npt.NDArray[np.bool_]:
    """``value is not None`` for each value, without a Python-level loop."""
    return np.fromiter(map(operator.is_not, values, repeat(None)), dtype=bool, count=len(values))


@dataclass(frozen=True, slots=True)
class _Table:
    """Per-sample sums that every metric and every resample is computed from.

    Attributes:
        totals: ``(n_samples, len(_COLUMNS))`` per-sample sums of the row indicators.
        cells: The (gold class, sample) cells balanced accuracy is computed from (`classes`):
            sample, class, correct rows and rows of each.
        n_class_rows: Rows balanced accuracy is computed over.
        class_rank: Rank of each class's gold text in sorted order, a numbering of the
            classes that does not depend on the order rows arrive in.

    """

    totals: npt.NDArray[np.float32]
    cells: tuple[IntArray, IntArray, FloatArray, FloatArray]
    n_class_rows: int
    class_rank: IntArray

    @property
    def n_samples(self) -> int:
        return int(self.totals.shape[0])

    def classes(self) -> GroupRatioMean:
        """Balanced accuracy from correct and total rows per (gold class, sample).

        Built on each call and kept by the caller only while it resamples this table: its
        index is as large as the samples, and the point values need it only once.
        """
        sample, cls, correct, rows = self.cells
        return GroupRatioMean(sample, cls, correct, rows, self.n_samples)


class _Cells:
    """The (gold class, sample) cells of every chunk added, until `AnswerSums.table` merges them.

    Kept compact (16 bytes a cell) in four arrays grown by doubling: no object per chunk.
    """

    def __init__(self) -> None:
        self._size = 0
        self._sample = np.zeros(0, dtype=np.int32)
        self._class = np.zeros(0, dtype=np.int32)
        self._correct = np.zeros(0, dtype=np.float32)
        self._rows = np.zeros(0, dtype=np.float32)

    def extend(
        self, sample: IntArray, cls: IntArray, correct: FloatArray, rows: FloatArray
    ) -> None:
        """Append one chunk's cells (counts are integers: exact in float32)."""
        start, end = self._size, self._size + sample.size
        if end > self._sample.size:
            room = max(end, 2 * self._sample.size)
            for name in ("_sample", "_class", "_correct", "_rows"):
                old = getattr(self, name)
                grown = np.zeros(room, dtype=old.dtype)
                grown[:start] = old[:start]
                setattr(self, name, grown)
        self._sample[start:end] = sample
        self._class[start:end] = cls
        self._correct[start:end] = correct
        self._rows[start:end] = rows
        self._size = end

    def arrays(self) -> tuple[npt.NDArray[Any], ...]:
        """The cells so far: sample, class, correct rows, rows (views, not copies)."""
        n = self._size
        return self._sample[:n], self._class[:n], self._correct[:n], self._rows[:n]


class AnswerSums:
    """The per-sample sums of `summarize`, added up chunk by chunk from a `RowSource`'s rows.

    Memory grows with the samples, never with the rows, and holds no Python object per
    sample where rows come grouped by sample in sorted id order (``by_sample``, as the store
    gives them: `lmmprobe.store.rows.read_chunks`): a complete sample is kept as its profile's
    number (2 bytes, `SampleProfiles`), the arrays below holding only the chunk's samples; past
    `PROFILE_LIMIT` profiles, each sample's sums are one row of a float32 array (44 bytes) and
    its cell 16 bytes. Rows in any other order keep those arrays and a dict of the sample
    ids. The table it builds is, array for array, the one the rows of every chunk taken
    together give: samples indexed in sorted id order, gold classes numbered by first
    appearance (in row order, or as `note_classes` met them), per-sample and per-cell counts
    summed exactly (integers: exact in float32 up to 2**24 rows of one sample).
    """

    def __init__(self, *, by_sample: bool = False, rules_only: bool = False) -> None:
        """An empty table (no rows yet).

        Args:
            by_sample: The rows will come in sample-id order (each sample's rows together,
                ids ascending); checked as they come, a row out of that order is refused.
            rules_only: Count each answer as lmmprobe's rules read it (``Score.correct``),
                a judge's verdict on an answer they could not read left aside.

        """
        self._by_sample = by_sample
        self._rules_only = rules_only
        self.judge_decided = 0
        """Answers whose verdict here is their judges' (the rules read none: `judge_correct`)."""
        self.judge_right = 0
        """Of them, those the judges read as right."""
        self._samples: dict[str, int] = {}  # sample id -> index by first appearance (any order)
        self._last: str | None = None  # by_sample: the id of the latest sample
        self._n = 0
        self._classes: dict[str, int] = {}  # gold option text -> class by first appearance
        # Per-sample sums; rows past `_n` are spare capacity (grown by doubling).
        self._totals = np.zeros((0, len(_COLUMNS)), dtype=np.float32)
        self._units = _Cells()
        # by_sample: samples before `_base` are complete and kept as profile numbers; the
        # arrays above hold only the samples from `_base` on (the last one may go on).
        self._profiles: SampleProfiles | None = SampleProfiles(len(_COLUMNS)) if by_sample else None
        self._base = 0
        self._class_rows = 0
        self.rows = 0

    @property
    def n_samples(self) -> int:
        """Distinct sample ids among the rows added so far."""
        return self._n

    def _row_samples(self, ids: list[str]) -> IntArray:
        """Each row's sample index, new samples numbered on from `_n`."""
        n = len(ids)
        if not self._by_sample:
            index = self._samples
            found = np.fromiter(
                (index.setdefault(sid, len(index)) for sid in ids), dtype=np.intp, count=n
            )
            self._n = len(index)
            return found
        last = self._last
        if (last is not None and ids[0] < last) or not all(
            map(operator.le, ids, itertools.islice(ids, 1, None))
        ):
            raise ValueError("rows said to come in sample-id order came out of that order")
        # A row starts a new sample where its id differs from the row before it.
        starts = np.fromiter(
            map(operator.ne, ids, itertools.chain((last,), ids)), dtype=bool, count=n
        )
        found = np.cumsum(starts, dtype=np.intp) + (self._n - 1)
        self._n += int(starts.sum())
        self._last = ids[-1]
        return found

    def _grow(self) -> None:
        """Make room in `_totals` for the samples from `_base` to `_n`."""
        have, need = self._totals.shape[0], self._n - self._base
        if need <= have:
            return
        grown = np.zeros((max(need, 2 * have), len(_COLUMNS)), dtype=np.float32)
        grown[:have] = self._totals
        self._totals = grown

    def _flush(self, *, final: bool) -> None:
        """Keep the complete samples held in the arrays as profile numbers (`SampleProfiles`).

        Every sample but the last is complete (rows come in sample-id order); at the end
        (``final``) the last one is too. Past `PROFILE_LIMIT` profiles, every sample goes
        back to the arrays (`_to_dense`).
        """
        profiles = self._profiles
        if profiles is None:
            return
        end = self._n if final else self._n - 1
        done_samples = end - self._base
        if done_samples <= 0:
            return
        sample, cls, correct, rows = _merge_cells([self._units.arrays()], None, self._n)
        done = sample < end
        if not profiles.add(
            self._totals[:done_samples], sample[done], cls[done], correct[done], rows[done]
        ):
            self._to_dense()
            return
        kept = self._totals[done_samples : self._n - self._base].copy()
        self._totals = kept
        self._units = _Cells()
        going = ~done
        self._units.extend(sample[going], cls[going], correct[going], rows[going])
        self._base = end

    def _to_dense(self) -> None:
        """Every sample's sums in the arrays again (too many profiles, or a sample goes on)."""
        profiles = self._profiles
        if profiles is None:
            return
        totals, cells = profiles.dense()
        held = self._n - self._base
        self._totals = np.concatenate([totals, self._totals[:held]])
        units = _Cells()
        counts = cells[:, 2:].astype(np.float64)
        units.extend(cells[:, 0], cells[:, 1], counts[:, 0], counts[:, 1])
        units.extend(*self._units.arrays())
        self._units = units
        self._profiles = None
        self._base = 0

    def twin(self, *, rules_only: bool) -> AnswerSums:
        """Empty sums of the same kind, their gold classes numbered as these numbered them.

        Rows added to the twin in the order they came here give it the same classes: its
        figures are these sums' own, counted another way (`rules_only`).
        """
        out = AnswerSums(by_sample=self._by_sample, rules_only=rules_only)
        out._classes = dict(self._classes)
        return out

    def note_classes(self, chunk: RowChunk) -> None:
        """Number the gold classes of a chunk's rows, as `add` would, without adding them.

        Rows whose sums are added in another order than theirs (`add`, in sample-id order)
        are first passed here in their own: classes are numbered by first appearance in it.
        """
        classes = self._classes
        for text, is_choice in zip(chunk.gold_text, chunk.choice, strict=True):
            if is_choice:
                classes.setdefault(text, len(classes))

    def add(self, chunk: RowChunk) -> None:
        """Add the rows of one chunk."""
        n = len(chunk)
        if not n:
            return
        self.rows += n
        row_sample = self._row_samples(chunk.sample_id)
        stage = np.array(chunk.stage)
        # Either marker means the request failed; such a row must never be scored as an answer.
        error = _is_not_none(chunk.error_type) | (stage == "error")
        answered = ~error
        verdict = chunk.correct  # True, False or None
        if not self._rules_only and any(v is not None for v in chunk.judge_correct):
            # Where the rules read no answer and a judge did, its verdict decides (it is set
            # only on answered rows with a verdict: the denominators do not change).
            verdict = [c if j is None else j for c, j in zip(verdict, chunk.judge_correct, strict=True)]  # fmt: skip
            decided = [j for j in chunk.judge_correct if j is not None]
            self.judge_decided += len(decided)
            self.judge_right += sum(decided)
        judged = answered & _is_not_none(verdict)
        offered = answered & np.array(chunk.abstain_offered, dtype=bool)
        choice = np.array(chunk.choice, dtype=bool)
        columns = {
            "answered": answered,
            "correct": answered & np.array(verdict, dtype=object).astype(bool),
            "offered": offered,
            "abstained": offered & np.array(chunk.abstained, dtype=bool),
            "format_hit": answered & np.array(chunk.format_hit, dtype=bool),
            "unparsed": judged & (stage == "unparsed"),
            "truncated": judged & (stage == "truncated"),
            "error": error,
            "row": np.ones(n, dtype=bool),
            # Captions have no per-answer verdict (they are scored as a corpus): not in accuracy.
            "judged": judged,
            "choice": answered & choice,
        }
        # The chunk's own samples, summed here and added into theirs: nothing sized by the
        # whole run is made per chunk. Per-sample counts are integers: exact in any grouping.
        touched, local = np.unique(row_sample, return_inverse=True)
        sums = np.stack(
            [np.bincount(local, weights=columns[c], minlength=touched.size) for c in _COLUMNS],
            axis=1,
        )
        if touched[0] < self._base:
            self._to_dense()  # rows of a sample already kept as a profile (after `table`)
        self._grow()
        self._totals[touched - self._base] += sums.astype(np.float32)
        # Classes are gold option texts, numbered by first appearance; open-ended rows get -1.
        classes = self._classes
        row_class = np.array(
            [
                classes.setdefault(t, len(classes)) if c else -1
                for t, c in zip(chunk.gold_text, chunk.choice, strict=True)
            ],
            dtype=np.int64,
        )
        row_class[error] = -1  # errors are not answers of any class
        self._class_rows += int((row_class >= 0).sum())
        sample, cls, correct, rows = _class_cells(
            row_class, row_sample, columns["correct"], self._n
        )
        self._units.extend(sample, cls, correct, rows)
        self._flush(final=False)

    def collapsed(self) -> tuple[_Table, IntArray, FloatArray, list[int]] | None:
        """Where the samples are kept as profiles that pay off: `summarize`'s inputs from them.

        Returns:
            ``(small, sizes, values, counts)``: the table over the profiles and their sizes
            (`_profiles`'s), the point values and their denominators (`_point_values`'s, equal
            value for value); None otherwise (`table` then gives the per-sample table).

        """
        self._flush(final=True)
        profiles = self._profiles
        if profiles is None or not profiles_pay_off(profiles.n_profiles, self._n):
            return None
        small, sizes = _profile_table(profiles, self._class_rank())
        values, counts = _profile_point_values(profiles, self._class_rows)
        return small, sizes, values, counts

    def _class_rank(self) -> IntArray:
        texts = list(self._classes)
        class_rank = np.empty(len(texts), dtype=np.intp)
        class_rank[sorted(range(len(texts)), key=texts.__getitem__)] = np.arange(len(texts))
        return class_rank

    def table(self) -> _Table:
        """The `_Table` of every row added."""
        self._flush(final=True)
        n_samples = self._n
        if self._profiles is not None:
            # Made for this call and dropped after it: the sums keep their profiles.
            kept, every_cell = self._profiles.dense()
            return _Table(
                kept,
                _merge_cells([tuple(every_cell.T)], None, n_samples),
                self._class_rows,
                self._class_rank(),
            )
        totals = self._totals[:n_samples]
        if self._by_sample:
            rank = None  # samples came in sorted id order: their index is their rank
        else:
            ids = list(self._samples)
            # Samples are indexed in sorted id order so the resampling, and hence the
            # interval, does not depend on the order rows arrive in.
            by_id = sorted(range(n_samples), key=ids.__getitem__)
            rank = np.empty(n_samples, dtype=np.intp)
            rank[by_id] = np.arange(n_samples)
            totals = totals[np.asarray(by_id, dtype=np.intp)]
            del by_id
        cells = _merge_cells([self._units.arrays()], rank, n_samples)
        # float32 halves the bytes the resampling product streams; per-sample counts stay exact.
        return _Table(totals, cells, self._class_rows, self._class_rank())

    def summarize(self, *, n_boot: int = 1000, seed: int = 0) -> dict[str, MetricValue]:
        """`summarize` of every row added (see there)."""
        return _summarize_table(self, n_boot, seed)


def _build_table(scores: Sequence[Score]) -> _Table:
    """The `_Table` of some Scores (one chunk of their columns)."""
    sums = AnswerSums()
    sums.add(chunk_of_scores(scores))
    return sums.table()


def _merge_cells(
    units: Sequence[tuple[npt.NDArray[Any], ...]],
    rank: IntArray | None,
    n_samples: int,
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """Cells of several chunks (samples by first appearance) as one set, samples by `rank`.

    ``rank`` None: the samples' first appearance is their rank already.
    """
    if units:
        sample = np.concatenate([u[0] for u in units]).astype(np.int64)
        code = np.concatenate([u[1] for u in units]).astype(np.int64)
        code *= n_samples
        code += sample if rank is None else rank[sample]
        del sample
        correct = np.concatenate([u[2] for u in units]).astype(np.float64)
        rows = np.concatenate([u[3] for u in units]).astype(np.float64)
    else:
        code = np.zeros(0, dtype=np.int64)
        correct = rows = np.zeros(0)
    cells, cell_of_unit = np.unique(code, return_inverse=True)
    del code
    # Cell counts are integers: summed exactly, in any order.
    correct = np.asarray(
        np.bincount(cell_of_unit, weights=correct, minlength=cells.size), np.float64
    )
    rows = np.asarray(np.bincount(cell_of_unit, weights=rows, minlength=cells.size), np.float64)
    return (cells % n_samples).astype(np.intp), (cells // n_samples).astype(np.intp), correct, rows


def _class_cells(
    row_class: npt.NDArray[np.int64],
    row_sample: IntArray,
    row_correct: npt.NDArray[np.bool_],
    n_samples: int,
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """Rows with a class >= 0 summed per (class, sample) cell: sample, class, correct, rows."""
    kept = row_class >= 0
    cells, cell_of_row = np.unique(
        row_class[kept] * n_samples + row_sample[kept], return_inverse=True
    )
    correct = np.asarray(
        np.bincount(cell_of_row, weights=row_correct[kept], minlength=cells.size), np.float64
    )
    rows = np.bincount(cell_of_row, minlength=cells.size).astype(np.float64)
    return (cells % n_samples).astype(np.intp), (cells // n_samples).astype(np.intp), correct, rows


def _make_table(
    totals: npt.NDArray[np.float32],
    cells: tuple[IntArray, IntArray, FloatArray, FloatArray],
    n_class_rows: int,
    class_rank: IntArray,
    n_samples: int,
) -> _Table:
    """A `_Table` whose balanced accuracy is computed from ``cells`` over ``n_samples``."""
    if totals.shape[0] != n_samples:
        raise ValueError(f"{totals.shape[0]} rows of sums for {n_samples} samples")
    return _Table(totals, cells, n_class_rows, class_rank)


def _profiles(table: _Table) -> tuple[_Table, IntArray, IntArray] | None:
    """Collapse interchangeable samples: a table over profiles, each sample's profile and sizes.

    Two samples are interchangeable when they have the same indicator totals and the same
    balanced-accuracy cell (class, correct rows, rows); a sample with cells in several classes
    is kept on its own. None when too few samples collapse for `profile_bootstrap_distribution`
    to pay off.
    """
    n = table.n_samples
    sample, cls, correct, rows = table.cells
    per_sample = np.bincount(sample, minlength=n)
    one = per_sample[sample] == 1
    alone = np.where(per_sample > 1, np.arange(n), -1)
    del per_sample
    owner = sample[one]

    def cell_column(values: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        column = np.full(n, -1, dtype=np.int64)
        column[owner] = values[one]
        return column

    # The key columns one at a time (as int64, the values `cluster_profiles` reads), never a
    # whole (samples x columns) matrix of them.
    columns: list[npt.NDArray[Any]] = [table.totals[:, j] for j in range(table.totals.shape[1])]
    columns += [cell_column(table.class_rank[cls]), cell_column(correct), cell_column(rows)]
    profile, first, sizes = cluster_profiles_of_columns([*columns, alone], n)
    del columns, alone
    if not profiles_pay_off(sizes.size, n):
        return None
    # Every sample of a profile has the same cells: keep the first one's, on its profile.
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True
    kept = is_first[sample]
    cells = (profile[sample[kept]], table.class_rank[cls[kept]], correct[kept], rows[kept])
    ranks = np.arange(table.class_rank.size)  # the profile table's classes are the ranks
    small = _Table(table.totals[first], cells, 0, ranks)
    return small, profile, sizes


def _profile_table(profiles: SampleProfiles, class_rank: IntArray) -> tuple[_Table, IntArray]:
    """`_profiles`'s table over the profiles and their sizes, made from the profiles kept.

    Profiles are numbered in the order of `_profiles`'s keys (totals, then the one cell's
    class rank, correct rows and rows, then the sample of one with several cells), and the
    cells come in the per-sample table's order (class, then sample): array for array the
    table `_profiles` makes of the per-sample table.
    """
    k = len(_COLUMNS)
    keys, first = profiles.keys, profiles.first
    cls = keys[:, k]
    one = cls >= 0
    order_key = keys.copy()
    order_key[one, k] = class_rank[cls[one]]
    order_key[~one, k] = -1
    order_key[cls == SEVERAL_CELLS, k + 3] = first[cls == SEVERAL_CELLS]
    order = np.lexsort(order_key.T[::-1])
    number = np.empty(order.size, dtype=np.intp)
    number[order] = np.arange(order.size)
    several = profiles.several
    # Each profile's cells: its one, or (several) those of its only sample.
    of_sample = {int(f): p for p, f in enumerate(first.tolist()) if cls[p] == SEVERAL_CELLS}
    unit_profile = np.concatenate(
        [np.flatnonzero(one), np.array([of_sample[int(s)] for s in several[:, 0]], np.intp)]
    ).astype(np.intp)
    unit_class = np.concatenate([cls[one], several[:, 1]])
    unit_correct = np.concatenate([keys[one, k + 1], several[:, 2]])
    unit_rows = np.concatenate([keys[one, k + 2], several[:, 3]])
    by = np.lexsort((first[unit_profile], unit_class))
    cells = (
        number[unit_profile[by]],
        class_rank[unit_class[by]],
        unit_correct[by].astype(np.float64),
        unit_rows[by].astype(np.float64),
    )
    totals = keys[order, :k].astype(np.float32)
    sizes = profiles.sizes[order].astype(np.intp)
    return _Table(totals, cells, 0, np.arange(class_rank.size)), sizes


def _profile_point_values(
    profiles: SampleProfiles, n_class_rows: int
) -> tuple[FloatArray, list[int]]:
    """`_point_values` of the per-sample table, from its profiles: the same floats.

    The ratio metrics' sums are integers, exact in any grouping. Balanced accuracy is
    computed as `GroupRatioMean` computes it on one resample of ones: classes with one
    (class, sample) cell add their ratios by one product, in class order, the others their
    ratios of exact sums, in class order.
    """
    k = len(_COLUMNS)
    keys, size = profiles.keys, profiles.sizes
    sums = size[None, :].astype(np.float64) @ keys[:, :k].astype(np.float32)
    out = np.empty((1, len(METRIC_NAMES)))
    out[:, _RATIO_POS] = ratio(sums[:, _RATIO_NUM], sums[:, _RATIO_DEN])
    one = keys[:, k] >= 0
    several = profiles.several
    # Every (class, sample) cell: a profile's one cell counts once for each of its samples.
    cls = np.concatenate([keys[one, k], several[:, 1]])
    n = np.concatenate([size[one], np.ones(len(several), dtype=np.int64)])
    correct = np.concatenate([keys[one, k + 1], several[:, 2]]) * n
    rows = np.concatenate([keys[one, k + 2], several[:, 3]]) * n
    classes, at = np.unique(cls, return_inverse=True)
    cells = np.bincount(at, weights=n, minlength=classes.size)
    num = np.bincount(at, weights=correct, minlength=classes.size)
    den = np.bincount(at, weights=rows, minlength=classes.size)
    single = (cells == 1) & (den > 0)
    multi = cells > 1
    total, count = np.zeros(1), np.zeros(1)
    if single.any():
        terms = np.stack([num[single] / den[single], np.ones(int(single.sum()))], axis=1)
        part = np.ones((1, terms.shape[0])) @ terms
        total += part[:, 0]
        count += part[:, 1]
    if multi.any():
        both = np.stack([num[multi], den[multi]])[None]
        present = both[:, 1] > 0
        total += np.divide(both[:, 0], both[:, 1], out=np.zeros(present.shape), where=present).sum(
            axis=1
        )
        count += present.sum(axis=1)
    out[:, _BALANCED_POS] = ratio(total, count)
    counts = [
        n_class_rows if name == "balanced_accuracy" else int(sums[0, _COL[_RATIOS[name][1]]])
        for name in METRIC_NAMES
    ]
    return out[0], counts


def _statistics(
    table: _Table, weights: WeightArray, classes: GroupRatioMean | None = None
) -> FloatArray:
    """Every metric of `METRIC_NAMES` on each resample of a weight chunk; NaN if undefined.

    ``classes`` is ``table.classes()`` made once by a caller that resamples many chunks.
    """
    sums = weights @ table.totals
    out = np.empty((weights.shape[0], len(METRIC_NAMES)))
    out[:, _RATIO_POS] = ratio(sums[:, _RATIO_NUM], sums[:, _RATIO_DEN])
    out[:, _BALANCED_POS] = (table.classes() if classes is None else classes)(weights)
    return out


def _point_values(table: _Table) -> tuple[FloatArray, list[int]]:
    """Point estimate (NaN if undefined) and denominator of every metric."""
    # float64 weights make the products accumulate in float64, so point values are exact.
    ones = np.ones((1, table.n_samples), dtype=np.float64)
    values = _statistics(table, ones)[0]
    sums = table.totals.sum(axis=0, dtype=np.float64)
    counts = [
        table.n_class_rows if name == "balanced_accuracy" else int(sums[_COL[_RATIOS[name][1]]])
        for name in METRIC_NAMES
    ]
    return values, counts


def summarize(
    scores: Sequence[Score], *, n_boot: int = 1000, seed: int = 0
) -> dict[str, MetricValue]:
    """Compute the run-level metrics of one model's scores with bootstrap intervals.

    Metrics (see `METRIC_NAMES`): accuracy (correct / answered rows; unparsed rows count as
    wrong), balanced_accuracy (mean over gold option texts of per-class accuracy, choice
    samples only), abstention_rate (abstained / rows offered an "unknown" option),
    format_hit_rate, unparsed_rate, truncated_rate (outputs cut off before their answer; each
    over answered rows) and error_rate (failed / all rows).
    Failed requests are excluded from every denominator except error_rate's.

    Intervals are 95% percentile intervals of a cluster bootstrap that resamples samples
    (``sample_id``) with all their repeats; resamples where a metric is undefined are dropped.
    When samples are many times more than their distinct profiles (indicator totals and gold
    class cell), each resample is drawn as multinomial counts per profile, which has the same
    distribution as drawing samples (see `lmmprobe.metrics.bootstrap`) at a fraction of the cost.

    Args:
        scores: Rows of one model, one per sample and repeat.
        n_boot: Number of bootstrap resamples; 0 skips the intervals.
        seed: Seed of the ``numpy.random.default_rng`` used for resampling.

    Returns:
        A `MetricValue` for each name of `METRIC_NAMES`, in that order.

    Raises:
        ValueError: ``n_boot`` is negative.

    """
    sums = AnswerSums()
    if scores:
        sums.add(chunk_of_scores(scores))
    return _summarize_table(sums, n_boot, seed)


def _summarize_table(sums: AnswerSums, n_boot: int, seed: int) -> dict[str, MetricValue]:
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    if not sums.rows:
        return {name: MetricValue(None, None, None, 0) for name in METRIC_NAMES}
    low = high = np.full(len(METRIC_NAMES), np.nan)
    kept = sums.collapsed()
    if kept is not None:
        # The samples were kept as profiles that pay off: no per-sample table is made.
        small, sizes, values, counts = kept
        if n_boot:
            rng = np.random.default_rng(seed)
            few = small.classes()
            dist = profile_bootstrap_distribution(
                lambda w: _statistics(small, w, few), sizes, n_boot, rng
            )
            low, high = percentile_interval(dist)
        return _metric_values(values, low, high, counts)
    table = sums.table()
    values, counts = _point_values(table)
    if n_boot:
        rng = np.random.default_rng(seed)
        collapsed = _profiles(table)
        if collapsed is not None:
            small, _, sizes = collapsed
            del collapsed, table  # the profiles hold all the resampling reads
            few = small.classes()
            dist = profile_bootstrap_distribution(
                lambda w: _statistics(small, w, few), sizes, n_boot, rng
            )
        else:
            every = table.classes()
            dist = bootstrap_distribution(
                lambda w: _statistics(table, w, every), table.n_samples, n_boot, rng
            )
        low, high = percentile_interval(dist)
    return _metric_values(values, low, high, counts)


def _metric_values(
    values: FloatArray, low: FloatArray, high: FloatArray, counts: list[int]
) -> dict[str, MetricValue]:
    """Each metric's `MetricValue` (an undefined value has no interval)."""
    result: dict[str, MetricValue] = {}
    for j, name in enumerate(METRIC_NAMES):
        value = finite_or_none(values[j])
        defined = value is not None
        result[name] = MetricValue(
            value,
            finite_or_none(low[j]) if defined else None,
            finite_or_none(high[j]) if defined else None,
            counts[j],
        )
    return result


_DIGITS = re.compile(r"\d+")


def _natural(text: str) -> str:
    """`text` with each run of digits zero-padded, so that text sorts as its numbers read.

    A frame sweep's groups ``frames=8``, ``frames=16``, ``frames=32`` sorted as text came out
    16, 32, 8: the accuracy curve over the sampling printed out of order.
    """
    return _DIGITS.sub(lambda m: m.group().zfill(24), text)


def _sort_key(value: Any) -> tuple[int, float, str]:
    # Numbers sort numerically (2 before 10), then strings (their digits as numbers: "frames=8"
    # before "frames=16"), then anything else by its text, so mixed-type metadata still has
    # one stable order.
    if isinstance(value, int | float):
        return (0, float(value), "")
    if isinstance(value, str):
        return (1, 0.0, _natural(value))
    return (2, 0.0, str(value))


def _group_by(scores: Sequence[Score], key: str) -> dict[str, list[Score]]:
    """Rows per ``str(metadata[key])``, groups in value order, rows lacking the key last.

    A list value puts the row in the group of each of its items (MathVista's ``skills``: an
    item counts in every skill it lists, as its ``calculate_score.py`` counts it).
    """
    groups: dict[str, list[Score]] = {}
    order: dict[str, tuple[int, float, str]] = {}
    missing: list[Score] = []
    for s in scores:
        if key not in s.metadata:
            missing.append(s)
            continue
        for label, rank in value_labels(s.metadata[key]):
            groups.setdefault(label, []).append(s)
            order.setdefault(label, rank)
    ordered = {label: groups[label] for label in group_order(order)}
    if missing:
        ordered.setdefault(MISSING, []).extend(missing)
    return ordered


def value_labels(raw: Any) -> list[tuple[str, tuple[int, float, str]]]:
    """The groups a row whose metadata value is `raw` belongs to, each with its sort key.

    A list value puts the row in the group of each of its items, once per distinct label.
    """
    labels: dict[str, tuple[int, float, str]] = {}
    for value in raw if isinstance(raw, list) else [raw]:
        # A skill listed twice counts the item once.
        labels.setdefault(str(value), _sort_key(value))
    return list(labels.items())


def group_order(order: dict[str, tuple[int, float, str]]) -> list[str]:
    """Group labels in `group_by`'s order: by the sort key of their first value, then label."""
    return sorted(order, key=lambda g: (order[g], g))


def group_by(scores: Sequence[Score], key: str) -> dict[str, list[Score]]:
    """Rows per ``str(metadata[key])`` in `breakdown`'s group order ("(missing)" last)."""
    return _group_by(scores, key)


def breakdown(
    scores: Sequence[Score],
    keys: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, dict[str, MetricValue]]]:
    """Compute `summarize` separately for each value of some metadata keys.

    Args:
        scores: Rows of one model.
        keys: Metadata keys to break down by, e.g. ``["task", "style"]``.
        n_boot: Number of bootstrap resamples per group; 0 skips the intervals.
        seed: Resampling seed, the same for every group.

    Returns:
        ``{key: {str(value): metrics}}``; groups are ordered by value (numbers numerically, and
        the digits in a text as numbers: frames=8 before frames=16),
        and rows whose metadata lacks the key form a last group named ``"(missing)"``.

    """
    return {
        key: {
            label: summarize(rows, n_boot=n_boot, seed=seed)
            for label, rows in _group_by(scores, key).items()
        }
        for key in keys
    }
