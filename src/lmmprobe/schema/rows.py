"""Score rows as compact columns: what run metrics reduce, without a pydantic object per row.

A `Score` costs ~3.8 KiB; a run of a million rows held as Scores does not fit a laptop. The
figures of a plain run (answer rates, outcome counts, tokens and cost) need a dozen small
fields per row, and they are sums over rows or over samples. A `RowSource` yields those fields
in `RowChunk`s (columns, a few thousand rows each); the metrics reduce chunk by chunk, and a
`Score` is built only for a metric that asks for one (`RowSource.scores`).

Two sources exist: `ScoreRows` over a list of Scores (tests, plugins, a run held in memory),
and the store's (`lmmprobe.store.rows.StoredRows`), which reads one run's rows of one model
from SQLite. Both yield rows in the order their Scores would come, so every figure built from
either is the one today's Score-list code gives for those Scores in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from lmmprobe.schema.benchmark import ROW_METRIC
from lmmprobe.schema.judgement import judges_verdict
from lmmprobe.schema.score import Score

__all__ = [
    "ABSENT",
    "CHUNK_ROWS",
    "FACT_KEYS",
    "JUDGE_DECIDES",
    "RowChunk",
    "RowSource",
    "ScoreRows",
    "chunk_of_scores",
    "judge_decides",
]

CHUNK_ROWS = 8192
"""Rows per chunk a source yields: large enough for column-wise numpy, small in memory."""


class _Absent:
    """The value of a metadata key a row lacks (`None` is a value metadata may hold)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""A metadata key the row lacks (``key not in score.metadata``)."""

FACT_KEYS: tuple[str, ...] = ("question_type", "style", "scenario", "adversarial", ROW_METRIC)
"""Metadata keys every chunk carries: what decides which metrics and sensitivities apply
(free-form and caption rows, Dysca's sensitivities, adversarial rows, official metric tags)."""


JUDGE_DECIDES = "unparsed"
"""The stage of an answer whose judges' verdict, where one read it, decides the headline answer
rates: lmmprobe's rules read no answer in it (`RowChunk.judge_correct`)."""


def judge_decides(stage: str, correct: bool | None, error_type: str | None) -> bool:
    """Whether the judges' verdict on a row, where they gave one, is its headline verdict.

    An answered row (no error) with a verdict (not a caption) that the rules left unread.
    """
    return stage == JUDGE_DECIDES and correct is not None and error_type is None


@dataclass(slots=True)
class RowChunk:
    """Consecutive rows of one source, as columns (each list has one entry per row).

    Attributes:
        model: `Score.model`.
        sample_id: `Score.sample_id`, the cluster the bootstrap resamples.
        repeat: `Score.repeat`.
        key: `Score.key`, the scored response (a response several rows share is paid once).
        stage: `Score.stage`.
        correct: `Score.correct` (True, False or None).
        format_hit: `Score.format_hit`.
        choice: Whether `Score.gold` is an option index (a choice sample), not references.
        gold_text: `Score.gold_text` (balanced accuracy's classes).
        abstain_offered: `Score.abstain_offered`.
        abstained: `Score.abstained`.
        error_type: `Score.error_type`.
        prompt_tokens: `Score.prompt_tokens`.
        completion_tokens: `Score.completion_tokens`.
        reasoning_tokens: `Score.reasoning_tokens`.
        judged: Whether the row carries verdicts (`Score.judgements` not empty).
        judge_correct: Where lmmprobe's rules read no answer (an answered row of stage
            ``unparsed``, `JUDGE_DECIDES`), the judges' verdict on it
            (`lmmprobe.schema.judgement.judges_verdict`): what the headline answer rates count
            it as; None elsewhere, and where no judge read it.
        meta: Metadata values by key (`FACT_KEYS` and the keys asked for), `ABSENT` where the
            row lacks the key.

    """

    model: list[str] = field(default_factory=list)
    sample_id: list[str] = field(default_factory=list)
    repeat: list[int] = field(default_factory=list)
    key: list[str] = field(default_factory=list)
    stage: list[str] = field(default_factory=list)
    correct: list[bool | None] = field(default_factory=list)
    format_hit: list[bool] = field(default_factory=list)
    choice: list[bool] = field(default_factory=list)
    gold_text: list[str] = field(default_factory=list)
    abstain_offered: list[bool] = field(default_factory=list)
    abstained: list[bool] = field(default_factory=list)
    error_type: list[str | None] = field(default_factory=list)
    prompt_tokens: list[int | None] = field(default_factory=list)
    completion_tokens: list[int | None] = field(default_factory=list)
    reasoning_tokens: list[int | None] = field(default_factory=list)
    judged: list[bool] = field(default_factory=list)
    judge_correct: list[bool | None] = field(default_factory=list)
    meta: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.sample_id)

    def take(self, rows: Sequence[int]) -> RowChunk:
        """The chunk of rows ``rows`` (indices into this one), in that order."""
        out = RowChunk()
        for name in _COLUMNS:
            column = getattr(self, name)
            setattr(out, name, [column[i] for i in rows])
        out.meta = {k: [v[i] for i in rows] for k, v in self.meta.items()}
        return out


_COLUMNS: tuple[str, ...] = tuple(name for name in RowChunk.__slots__ if name != "meta")


class RowSource(Protocol):
    """One model's rows (of a run or a group), read in chunks, as Scores only on request."""

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The rows in chunks, in row order.

        Each chunk's `RowChunk.meta` holds the values of `FACT_KEYS` and of `keys`.
        """
        ...

    def scores(self) -> Sequence[Score]:
        """Every row as a `Score`, in the same order (built on each call: callers keep it)."""
        ...


def _is_choice(gold: object) -> bool:
    return isinstance(gold, int) and not isinstance(gold, bool)


def chunk_of_scores(scores: Sequence[Score], keys: Iterable[str] = ()) -> RowChunk:
    """The columns of `scores`, with the metadata values of `FACT_KEYS` and `keys`."""

    def col(name: str) -> list[Any]:
        return [getattr(s, name) for s in scores]

    metadata = [s.metadata for s in scores]
    meta_keys = dict.fromkeys([*FACT_KEYS, *keys])
    return RowChunk(
        model=col("model"),
        sample_id=col("sample_id"),
        repeat=col("repeat"),
        key=col("key"),
        stage=col("stage"),
        correct=col("correct"),
        format_hit=col("format_hit"),
        choice=[_is_choice(s.gold) for s in scores],
        gold_text=col("gold_text"),
        abstain_offered=col("abstain_offered"),
        abstained=col("abstained"),
        error_type=col("error_type"),
        prompt_tokens=col("prompt_tokens"),
        completion_tokens=col("completion_tokens"),
        reasoning_tokens=col("reasoning_tokens"),
        judged=[bool(s.judgements) for s in scores],
        judge_correct=[
            judges_verdict(s.judgements)
            if s.judgements and judge_decides(s.stage, s.correct, s.error_type)
            else None
            for s in scores
        ],
        meta={k: [m.get(k, ABSENT) for m in metadata] for k in meta_keys},
    )


class ScoreRows:
    """A `RowSource` over Scores held in memory (a run's outcome, tests, plugins)."""

    def __init__(self, scores: Sequence[Score], *, chunk_rows: int = CHUNK_ROWS) -> None:
        """Wrap `scores` (kept by reference, not copied)."""
        self._scores = scores
        self._chunk_rows = chunk_rows

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The Scores' columns, `chunk_rows` at a time."""
        for start in range(0, len(self._scores), self._chunk_rows):
            yield chunk_of_scores(self._scores[start : start + self._chunk_rows], keys)

    def scores(self) -> Sequence[Score]:
        """The Scores themselves."""
        return self._scores
