"""One pass over a `RowSource`: the sums a plain run's figures are computed from.

`RowSummary` adds up, chunk by chunk, what the answer rates (`AnswerSums`), the outcome
counts, the token and cost metrics, and the checks of which other metrics apply need: nothing
in it grows with the rows but the per-sample sums (and, for a priced model, one entry per
distinct response, which the cost counts once). `summarize_rows` makes the summary of a
source and, in the same pass, of each ``--by`` group of it.

A metric whose rows a summary shows to be absent (no free-form row, no caption, no verdict,
no benchmark tag, no repeat) returns without asking for `MetricContext.scores`, so a plain
single-choice run never builds a `Score`.

A metric that reads what the columns do not hold (the answer text, verdicts, the gold
references) declares a `RowExtract`: a function of one `Score` giving the small record the
metric reads (its cluster key and per-row values), or None for a row it skips. `CachedRows`
runs every extract that applies in one pass over the Scores, built one at a time from the
store (`iter_scores`) and dropped, and keeps only the records; a ``--by`` group takes its
rows' records from that pass (`GroupRows.records`), so the Scores are built once per model
whatever the number of metrics and groups.

An extract whose records hold text a metric reduces to a number (a free-form answer and its
reference, embedded into a similarity) may also declare a `RowExtract.settle`: every
`SETTLE_EVERY` records, and at the end of the pass, the records not yet settled are replaced
by smaller ones holding the numbers, so what the pass keeps no longer grows with the texts.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from lmmprobe.metrics.choice import MISSING, AnswerSums, group_by, group_order, value_labels
from lmmprobe.metrics.outcome import OUTCOMES, Outcome, OutcomeCounts, outcome_of
from lmmprobe.schema import RunSpec, Score
from lmmprobe.schema.benchmark import ROW_METRIC
from lmmprobe.schema.rows import ABSENT, RowChunk, RowSource

__all__ = [
    "FREE_FORM",
    "ROW_EXTRACTS",
    "SETTLE_EVERY",
    "BySample",
    "CachedRows",
    "GroupRows",
    "InSampleOrder",
    "ResponseTokens",
    "RowExtract",
    "RowSummary",
    "StreamsScores",
    "group_labels",
    "iter_scores",
    "row_extract",
    "summarize_rows",
]

T = TypeVar("T")

FREE_FORM = "free_form"
"""``metadata.question_type`` of free-form description questions."""


class RowSummary:
    """What one pass over a model's rows (or a group's) gives the metrics.

    Attributes:
        answers: The answer rates' per-sample sums (a judge's verdict deciding the answers
            the rules could not read: `AnswerSums`).
        rules: Where a judge's verdict decided some answer in `answers`
            (``answers.judge_decided``), the same sums with the rules' reading alone; None
            elsewhere (they would equal `answers`).
        models: The model specs among the rows.
        tags: Official metric tags among the rows (``metadata.metric`` strings).
        question_types: ``metadata.question_type`` values among the rows.
        styles: Distinct hashable ``metadata.style`` values.
        unhashable_style: Some ``metadata.style`` value is unhashable (a list).
        clean_scenario: Some row's ``metadata.scenario`` is ``clean``.
        adversarial: Some row has ``metadata.adversarial``.
        free_form: Some answered row is a free-form description (`freeform_rows`).
        captions: Some answered row has references and no verdict, and is no free-form
            description (the caption metrics' rows).
        judged: Some row carries verdicts.
        answered: Rows with no ``error_type`` (the token metrics' answered rows).
        correct: Rows counted right in the headline: a true verdict, or the judges' true
            verdict where the rules read no answer (`RowChunk.judge_correct`).
        completion: Sum and count of the reported completion tokens of answered rows.
        reasoning: Sum and count of the reported reasoning tokens of answered rows.
        completion_missing: Some answered row lacks its completion tokens.
        responses: For a priced model: (prompt, completion) tokens of each distinct
            response with any, in order of first appearance (`ResponseTokens`); None when
            not tracked.

    """

    def __init__(self, *, track_cost: bool = False, by_sample: bool = False) -> None:
        """An empty summary.

        Args:
            track_cost: Keep each distinct response's tokens (for `cost`).
            by_sample: The rows come in sample-id order (`AnswerSums`; `BySample`).

        """
        self.answers = AnswerSums(by_sample=by_sample)
        self.rules: AnswerSums | None = None
        self._outcomes: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        self.models: set[str] = set()
        self.tags: set[str] = set()
        self.question_types: set[Hashable] = set()
        self.styles: set[Hashable] = set()
        self.unhashable_style = False
        self.clean_scenario = False
        self.adversarial = False
        self.free_form = False
        self.captions = False
        self.judged = False
        self.answered = 0
        self.correct = 0
        self.completion = [0, 0]
        self.reasoning = [0, 0]
        self.completion_missing = False
        self.responses: ResponseTokens | None = ResponseTokens() if track_cost else None

    @property
    def rows(self) -> int:
        """Every row added."""
        return self.answers.rows

    @property
    def has_repeats(self) -> bool:
        """More rows than samples (some sample was asked more than once)."""
        return self.answers.rows > self.answers.n_samples

    def outcomes(self) -> OutcomeCounts:
        """Rows of each outcome (`lmmprobe.metrics.outcome.count_outcomes` of the rows)."""
        return OutcomeCounts(**self._outcomes)

    def add(self, chunk: RowChunk, *, sums: bool = True) -> None:
        """Add one chunk's rows.

        Args:
            chunk: The rows.
            sums: Add them to the answer sums too; False: only number their gold classes
                (`AnswerSums.note_classes`), the sums added from another pass.

        """
        if sums:
            self.answers.add(chunk)
        else:
            self.answers.note_classes(chunk)
        self.models.update(chunk.model)
        meta = chunk.meta
        question_types = meta["question_type"]
        for qt in question_types:
            if qt is not ABSENT and isinstance(qt, Hashable):
                self.question_types.add(qt)
        for style in meta["style"]:
            if style is ABSENT:
                continue
            if isinstance(style, Hashable):
                self.styles.add(style)
            else:
                self.unhashable_style = True
        self.tags.update(t for t in meta[ROW_METRIC] if isinstance(t, str))
        self.clean_scenario = self.clean_scenario or "clean" in meta["scenario"]
        self.adversarial = self.adversarial or any(a is not ABSENT for a in meta["adversarial"])
        self.judged = self.judged or any(chunk.judged)
        outcomes = self._outcomes
        if self.responses is not None:
            self.responses.add(chunk.key, chunk.prompt_tokens, chunk.completion_tokens)
        judges = chunk.judge_correct or [None] * len(chunk)
        for i, (error, stage, correct) in enumerate(
            zip(chunk.error_type, chunk.stage, chunk.correct, strict=True)
        ):
            # The outcome is how the rules read the answer; right or wrong is the headline's
            # verdict (the judges' where the rules read none: `RowChunk.judge_correct`).
            outcomes[outcome_of(error, stage, correct)] += 1
            if correct or judges[i]:
                self.correct += 1
            qt = question_types[i]
            if error is None:
                self.answered += 1
                ct, rt = chunk.completion_tokens[i], chunk.reasoning_tokens[i]
                if ct is None:
                    self.completion_missing = True
                else:
                    self.completion[0] += ct
                    self.completion[1] += 1
                if rt is not None:
                    self.reasoning[0] += rt
                    self.reasoning[1] += 1
                if stage != "error" and qt == FREE_FORM:
                    self.free_form = True
                if correct is None and not chunk.choice[i] and qt != FREE_FORM:
                    self.captions = True


class ResponseTokens:
    """Each distinct response's (prompt, completion) tokens, in order of first appearance.

    A response is known by its key; one whose tokens are both unknown is left out. Kept in
    32 bytes a response (a 16-byte digest of the key in a sorted array, to tell a response
    met before, and its two counts), not a dict entry of the key's text (about 240 bytes).
    A key of 32 lower-case hex digits (every key lmmprobe makes, `request_key`) is its own
    digest; any other is hashed (BLAKE2b, 128 bits).
    """

    def __init__(self) -> None:
        """None yet."""
        self._seen = np.zeros(0, dtype="S16")  # sorted
        self._tokens = np.zeros((0, 2), dtype=np.int64)  # rows past `_n`: spare room
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def values(self) -> Iterator[tuple[int | None, int | None]]:
        """Each response's (prompt, completion) tokens (None: not reported), first met first."""
        for pt, ct in self._tokens[: self._n].tolist():
            yield (None if pt < 0 else pt, None if ct < 0 else ct)

    def add(
        self, keys: Sequence[str], prompt: Sequence[int | None], completion: Sequence[int | None]
    ) -> None:
        """Add one chunk's rows' responses (keys and token counts, row by row)."""
        rows = [i for i, (pt, ct) in enumerate(zip(prompt, completion, strict=True))
                if pt is not None or ct is not None]  # fmt: skip
        if not rows:
            return
        digests = np.array([_digest(keys[i]) for i in rows], dtype="S16")
        # The chunk's first row of each response, in row order, then those not met before.
        _, first = np.unique(digests, return_index=True)
        first.sort()
        found = digests[first]
        at = np.searchsorted(self._seen, found)
        met = np.zeros(first.size, dtype=bool)
        inside = at < self._seen.size
        met[inside] = self._seen[at[inside]] == found[inside]
        new = first[~met]
        if not new.size:
            return
        end = self._n + new.size
        if end > self._tokens.shape[0]:
            grown = np.zeros((max(end, 2 * self._tokens.shape[0]), 2), dtype=np.int64)
            grown[: self._n] = self._tokens[: self._n]
            self._tokens = grown
        picked = [rows[i] for i in new.tolist()]
        self._tokens[self._n : end, 0] = [-1 if prompt[i] is None else prompt[i] for i in picked]
        self._tokens[self._n : end, 1] = [
            -1 if completion[i] is None else completion[i] for i in picked
        ]
        self._n = end
        added = np.sort(digests[new])
        self._seen = np.insert(self._seen, np.searchsorted(self._seen, added), added)


def _digest(key: str) -> bytes:
    """16 bytes that tell `key` apart from any other key (see `ResponseTokens`)."""
    if len(key) == 32:
        try:
            raw = bytes.fromhex(key)
        except ValueError:
            pass
        else:
            if raw.hex() == key:
                return raw
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def summarize_rows(
    source: RowSource, keys: Sequence[str] = (), *, track_cost: bool = False
) -> tuple[RowSummary, dict[str, dict[str, RowSummary]]]:
    """The summary of `source`'s rows and, in the same pass, of each group of each key.

    Args:
        source: One model's rows.
        keys: ``--by`` metadata keys; a row is in the group of ``str(value)`` (of each item of a
            list value, once each), or in ``"(missing)"`` when it lacks the key.
        track_cost: Keep each distinct response's tokens (a priced model's `cost`).

    Returns:
        The whole source's summary, and per key its groups' summaries in
        `lmmprobe.metrics.choice.group_by`'s order (``"(missing)"`` last).

    """
    # A source that gives its rows in sample-id order lets the sums keep no id per sample.
    # One that gives them in another order but can give them in that one too (an import,
    # in its file's order) is read twice: the answer sums from the second, in sample order.
    again = source.in_sample_order() if isinstance(source, InSampleOrder) else None
    by_sample = again is not None or (isinstance(source, BySample) and source.by_sample)
    whole = RowSummary(track_cost=track_cost, by_sample=by_sample)
    groups: dict[str, dict[str, RowSummary]] = {k: {} for k in keys}
    order: dict[str, dict[str, tuple[int, float, str]]] = {k: {} for k in keys}
    for chunk in source.chunks(list(keys)):
        whole.add(chunk, sums=again is None)
        for summary, part in _parts(chunk, keys, groups, order, track_cost, by_sample):
            summary.add(part, sums=again is None)
    if again is not None:
        for chunk in again.chunks(list(keys)):
            whole.answers.add(chunk)
            for summary, part in _parts(chunk, keys, groups, order, track_cost, by_sample):
                summary.answers.add(part)
    if whole.answers.judge_decided:
        _rules_pass(again if again is not None else source, keys, whole, groups, order, by_sample)
    out: dict[str, dict[str, RowSummary]] = {}
    for key in keys:
        ordered = {label: groups[key][label] for label in group_order(order[key])}
        if MISSING in groups[key]:
            ordered.setdefault(MISSING, groups[key][MISSING])
        out[key] = ordered
    return whole, out


def _rules_pass(
    source: RowSource,
    keys: Sequence[str],
    whole: RowSummary,
    groups: dict[str, dict[str, RowSummary]],
    order: dict[str, dict[str, tuple[int, float, str]]],
    by_sample: bool,
) -> None:
    """The rules-only sums (`RowSummary.rules`) of the whole and of each group a judge decided.

    A second pass over the rows, made only where a judge's verdict decided some answer: a run
    no judge touched reads its rows as before. The rows come in the order the answer sums
    read them, so each twin numbers its classes as they did.
    """
    whole.rules = whole.answers.twin(rules_only=True)
    for by_label in groups.values():
        for summary in by_label.values():
            if summary.answers.judge_decided:
                summary.rules = summary.answers.twin(rules_only=True)
    for chunk in source.chunks(list(keys)):
        whole.rules.add(chunk)
        for summary, part in _parts(chunk, keys, groups, order, False, by_sample):
            if summary.rules is not None:
                summary.rules.add(part)


def _parts(
    chunk: RowChunk,
    keys: Sequence[str],
    groups: dict[str, dict[str, RowSummary]],
    order: dict[str, dict[str, tuple[int, float, str]]],
    track_cost: bool,
    by_sample: bool,
) -> Iterator[tuple[RowSummary, RowChunk]]:
    """Each ``--by`` group's summary with the chunk's rows in it (row order kept)."""
    for key in keys:
        rows: dict[str, list[int]] = {}
        lacking: list[int] = []
        for i, raw in enumerate(chunk.meta[key]):
            if raw is ABSENT:
                lacking.append(i)
                continue
            for label, rank in value_labels(raw):
                rows.setdefault(label, []).append(i)
                order[key].setdefault(label, rank)
        missing = rows.pop(MISSING, []) if lacking else []
        for label, picked in rows.items():
            yield _group(groups[key], label, track_cost, by_sample), chunk.take(picked)
        if lacking:
            # A value whose text is "(missing)" shares the group, as in `group_by` (where
            # its rows come before those lacking the key; here they come in row order, one
            # part: two, the lacking rows after, left the group's rows out of sample order,
            # which a run's per-sample sums refuse).
            picked = sorted(missing + lacking)
            yield _group(groups[key], MISSING, track_cost, by_sample), chunk.take(picked)


def _group(
    groups: dict[str, RowSummary], label: str, track_cost: bool, by_sample: bool
) -> RowSummary:
    found = groups.get(label)
    if found is None:
        # A group's rows keep their source's order: in sample-id order where its rows are.
        found = groups[label] = RowSummary(track_cost=track_cost, by_sample=by_sample)
    return found


@runtime_checkable
class BySample(Protocol):
    """A `RowSource` that may say its rows come in sample-id order (the store's do)."""

    by_sample: bool
    """Each sample's rows come together, samples in ascending id order (Python's order of
    strings: code points, as SQLite's ``BINARY`` order of UTF-8 text)."""


@runtime_checkable
class InSampleOrder(Protocol):
    """A `RowSource` whose rows come in another order, able to give them in sample-id order.

    A stored import's rows come in its file's order (`lmmprobe.predictions.FileOrderRows`),
    which some figures depend on; the store gives the same rows in sample-id order too.
    """

    def in_sample_order(self) -> RowSource | None:
        """The same rows in sample-id order (a `BySample` source saying so), or None."""
        ...


@runtime_checkable
class StreamsScores(Protocol):
    """A `RowSource` that also gives its rows as Scores one at a time (the store's does)."""

    def iter_scores(self) -> Iterator[Score]:
        """Every row as a `Score`, in `RowSource.scores`'s order, none kept."""
        ...


def iter_scores(source: RowSource) -> Iterator[Score]:
    """`source`'s rows as Scores one at a time where it can give them so, else its list's."""
    if isinstance(source, StreamsScores):
        return source.iter_scores()
    return iter(source.scores())


@dataclass(frozen=True)
class RowExtract:
    """What one metric (or family) reads of each row, kept instead of the row's `Score`.

    Attributes:
        name: The records' name (`MetricContext.records`).
        applies: Whether a model's rows (their `RowSummary`) can hold any record: an extract
            that does not apply is not run.
        extract: One row's record, or None where the metric skips the row. Records are
            kept for every row of the model: they hold what the metric reads, nothing more.
        settle: Given a batch of records in row order, the records to keep in their place
            (as many, same order), holding what the metric reads once its costly part is
            done (`SETTLE_EVERY`); None keeps the records as extracted. The metric reads
            settled records, or unsettled ones where settling could not be done (the
            settle function returns its input).

    """

    name: str
    applies: Callable[[RowSummary, RunSpec], bool]
    extract: Callable[[Score, RunSpec], Any]
    settle: Callable[[list[Any]], list[Any]] | None = None


ROW_EXTRACTS: dict[str, RowExtract] = {}
"""Every declared extract, by name (`row_extract`)."""


SETTLE_EVERY = 16384
"""Records of an extract with a `RowExtract.settle` are settled this many at a time: a run of
up to this many such rows settles once, at the end of its pass, as it computed before (one
progress bar, the same batches); a bigger one keeps the texts of one batch at a time (a few
MiB)."""


def row_extract(
    name: str,
    applies: Callable[[RowSummary, RunSpec], bool],
    *,
    settle: Callable[[list[Any]], list[Any]] | None = None,
) -> Callable[[Callable[[Score, RunSpec], Any]], RowExtract]:
    """Decorator declaring a function of (Score, spec) as the extract `name` (`RowExtract`)."""

    def deco(extract: Callable[[Score, RunSpec], Any]) -> RowExtract:
        found = ROW_EXTRACTS[name] = RowExtract(name, applies, extract, settle)
        return found

    return deco


class _Records:
    """One extract's records with the index (in the model's row order) of each one's row."""

    def __init__(self) -> None:
        self._at = array("q")
        self.values: list[Any] = []
        self.settled = 0  # values[:settled] have been through the extract's settle

    def add(self, at: int, value: Any) -> None:
        self._at.append(at)
        self.values.append(value)

    def settle(self, settle: Callable[[list[Any]], list[Any]]) -> None:
        """Replace the records not yet settled by what `settle` makes of them."""
        batch = self.values[self.settled :]
        if not batch:
            return
        done = settle(batch)
        if len(done) != len(batch):
            raise ValueError(f"a settle function gave {len(done)} records for {len(batch)}")
        self.values[self.settled :] = done
        self.settled = len(self.values)

    @property
    def at(self) -> npt.NDArray[np.int64]:
        return np.frombuffer(self._at, dtype=np.int64) if self._at else np.zeros(0, np.int64)


class CachedRows:
    """A `RowSource` whose Scores are built once and kept (several metrics may ask for them).

    Attributes:
        source: The wrapped rows.
        summary: The rows' `RowSummary` when already made (it decides which extracts run).

    """

    def __init__(self, source: RowSource, summary: RowSummary | None = None) -> None:
        """Wrap `source`."""
        self.source = source
        self.summary = summary
        self._scores: Sequence[Score] | None = None
        self._groups: dict[str, dict[str, list[Score]]] = {}
        self._shared: dict[Hashable, Any] = {}
        self._records: dict[str, _Records] = {}

    @property
    def by_sample(self) -> bool:
        """Whether the wrapped source gives its rows in sample-id order (`BySample`)."""
        return isinstance(self.source, BySample) and self.source.by_sample

    def in_sample_order(self) -> RowSource | None:
        """The wrapped source's rows in sample-id order, where it can give them (`InSampleOrder`)."""
        return self.source.in_sample_order() if isinstance(self.source, InSampleOrder) else None

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The wrapped source's chunks."""
        return self.source.chunks(keys)

    def scores(self) -> Sequence[Score]:
        """The wrapped source's Scores, built on the first call."""
        if self._scores is None:
            self._scores = self.source.scores()
        return self._scores

    def iter_scores(self) -> Iterator[Score]:
        """The Scores one at a time: the kept list when built, else streamed from the source."""
        if self._scores is not None:
            return iter(self._scores)
        return iter_scores(self.source)

    def extracted(self, name: str, spec: RunSpec) -> _Records:
        """Extract `name`'s records of every row, with their rows' indices.

        The first call runs, in one pass over the Scores, every extract that applies to these
        rows (by `summary`) and has not run yet, so metrics asking after it cost no pass.
        Records of an extract with a `RowExtract.settle` are settled `SETTLE_EVERY` at a time
        during the pass and at its end.
        """
        if name not in self._records:
            if self.summary is None:
                self.summary, _ = summarize_rows(self.source)
            summary = self.summary
            todo = [
                e
                for e in ROW_EXTRACTS.values()
                if e.name not in self._records and (e.name == name or e.applies(summary, spec))
            ]
            found = {e.name: _Records() for e in todo}
            pairs = [(e.extract, e.settle, found[e.name]) for e in todo]
            for at, score in enumerate(self.iter_scores()):
                for extract, settle, records in pairs:
                    value = extract(score, spec)
                    if value is not None:
                        records.add(at, value)
                        if settle is not None and len(records.values) - records.settled >= (
                            SETTLE_EVERY
                        ):
                            records.settle(settle)
            for _, settle, records in pairs:
                if settle is not None:
                    records.settle(settle)
            self._records.update(found)
        return self._records[name]

    def records(self, name: str, spec: RunSpec) -> list[Any]:
        """Extract `name`'s records of the rows, in row order (`extracted`)."""
        return self.extracted(name, spec).values

    def members(self, key: str) -> dict[str, npt.NDArray[np.int64]]:
        """Per ``--by`` group label of `key`, the indices of its rows (one pass, kept)."""

        def compute() -> dict[str, npt.NDArray[np.int64]]:
            found: dict[str, array[int]] = {}
            at = 0
            for chunk in self.chunks([key]):
                for raw in chunk.meta[key]:
                    for label in group_labels(raw):
                        found.setdefault(label, array("q")).append(at)
                    at += 1
            return {label: np.frombuffer(rows, dtype=np.int64) for label, rows in found.items()}

        return self.shared(("members", key), compute)

    def group_scores(self, key: str) -> dict[str, list[Score]]:
        """`group_by` of the Scores by `key`, made once per key."""
        if key not in self._groups:
            self._groups[key] = group_by(self.scores(), key)
        return self._groups[key]

    def shared(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` once for these rows: what every group of them reads from one pass.

        Args:
            key: Names the result.
            compute: Makes it on first use.

        """
        if key not in self._shared:
            self._shared[key] = compute()
        value: T = self._shared[key]
        return value


def group_labels(raw: Any) -> list[str]:
    """The ``--by`` groups a row whose metadata value is `raw` is in (`GroupRows`'s rule).

    Each distinct label of the value (`value_labels`), or ``"(missing)"`` when the row lacks
    the key (`ABSENT`).
    """
    if raw is ABSENT:
        return [MISSING]
    return [label for label, _ in value_labels(raw)]


class GroupRows:
    """The `RowSource` of one ``--by`` group of another source's rows (`group_by`'s group)."""

    def __init__(self, parent: CachedRows, key: str, label: str) -> None:
        """The rows of `parent` in group `label` of metadata key `key`."""
        self.parent = parent
        self.key = key
        self.label = label

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The parent's chunks, each cut to the group's rows (row order kept)."""
        for chunk in self.parent.chunks([*keys, self.key]):
            picked = [
                i for i, raw in enumerate(chunk.meta[self.key]) if self.label in group_labels(raw)
            ]
            if picked:
                yield chunk.take(picked)

    def scores(self) -> Sequence[Score]:
        """The group's Scores, as `group_by` gives them."""
        return self.parent.group_scores(self.key).get(self.label, [])

    def records(self, name: str, spec: RunSpec) -> list[Any]:
        """Extract `name`'s records of the group's rows, in row order, from the parent's pass.

        A ``"(missing)"`` group whose key some row holds as the text ``"(missing)"`` keeps row
        order here, as `chunks` does (`group_by` puts the rows lacking the key after those).
        """
        found = self.parent.extracted(name, spec)
        rows = self.parent.members(self.key).get(self.label)
        if rows is None or not found.values:
            return []
        keep = np.isin(found.at, rows)
        return [v for v, k in zip(found.values, keep.tolist(), strict=True) if k]
