"""What each row of a run counts as: the one definition every count and table reads.

A run has one row per (model, sample, repeat). Each row has exactly one outcome:

- ``error``: the request failed (``error_type`` set, or stage ``"error"``). Not an answer:
  counted only in the error rate.
- ``correct`` / ``wrong``: an answer with a right/wrong verdict that was read.
- ``unparsed``: an answer that has a verdict but could not be read (no option mark, text or
  fuzzy match; an empty OCR answer). It counts as wrong, in accuracy and in the unparsed rate.
- ``truncated``: an output cut off before its answer (it ended inside its thinking, or at the
  token limit with nothing after the thinking; stage ``"truncated"``). Never read for a mark:
  it counts as wrong, in accuracy and in the truncated rate, and is not unparsed.
- ``free_text``: a caption or free-form description with text. It has no per-answer verdict:
  captions are scored as a corpus (BLEU, CIDEr), descriptions by embedding similarity.
- ``empty``: a caption or free-form description with no text (what the built-in baselines
  give), or one cut off before its text (a truncated caption has no verdict either). The
  free-form score counts it 0; it is in neither accuracy nor the unparsed rate.

The scorer stores an empty caption with stage ``"unparsed"`` and no verdict; this module is
where that row stops being called unparsed. The counts a reader sees follow from the outcomes:

- ``rows``: every row (errors included): the error rate's n.
- ``judged``: correct + wrong + unparsed + truncated: accuracy's, the unparsed rate's and the
  truncated rate's n.
- ``free_text`` + ``empty``: the free-form (or caption) rows: the free-form score's n.

`lmmprobe.metrics.choice.summarize` computes its rates column-wise over the same definition
(a test holds the two together), and the store's SQL filters of ``lmmprobe serve`` mirror it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

from lmmprobe.schema import Score

__all__ = [
    "ACCURACY_N",
    "COUNT_HELP",
    "OUTCOMES",
    "Outcome",
    "OutcomeCounts",
    "count_outcomes",
    "outcome_of",
    "row_outcome",
]

Outcome = Literal["correct", "wrong", "unparsed", "truncated", "free_text", "empty", "error"]
"""What one row counts as (see the module docstring)."""

OUTCOMES: tuple[Outcome, ...] = (
    "correct",
    "wrong",
    "unparsed",
    "truncated",
    "free_text",
    "empty",
    "error",
)
"""Every outcome, in the order tables show them."""

COUNT_HELP: dict[str, str] = {
    "rows": "every (sample, repeat) row of the model, errors included",
    "judged": "rows scored right or wrong (correct, wrong, unparsed, truncated): accuracy's n",
    "correct": "answers read and right",
    "wrong": "answers read and wrong",
    "unparsed": "answers with a verdict that could not be read: counted wrong",
    "truncated": "outputs cut off before their answer (in their thinking or at the token "
    "limit): never read, counted wrong",
    "free_text": "captions and free-form descriptions with text: no per-answer verdict",
    "empty": "captions and free-form descriptions with no text: scored 0, not in accuracy",
    "error": "failed requests: not answers, counted only in the error rate",
}
"""One line per count, for column titles, legends and docs."""

ACCURACY_N = "accuracy n"
"""The title tables give the ``judged`` count (rows scored right or wrong, accuracy's n): the
word "judged" read as a judge's work beside a judge's coverage, and showed in runs with none."""


def row_outcome(score: Score) -> Outcome:
    """The outcome of one row.

    Args:
        score: One (model, sample, repeat) row.

    Returns:
        One of `OUTCOMES`.

    """
    return outcome_of(score.error_type, score.stage, score.correct)


def outcome_of(error_type: str | None, stage: str, correct: bool | None) -> Outcome:
    """The outcome of a row from its error type, stage and verdict (`row_outcome`'s rule).

    Args:
        error_type: The row's error type (None: the request did not fail).
        stage: Its stage.
        correct: Its verdict (None: no per-answer verdict).

    Returns:
        One of `OUTCOMES`.

    """
    if error_type is not None or stage == "error":
        return "error"
    if correct is None:
        # No per-answer verdict: a caption or free-form description, scored apart.
        return "empty" if stage in ("unparsed", "truncated") else "free_text"
    if stage == "unparsed":
        return "unparsed"
    if stage == "truncated":
        return "truncated"
    return "correct" if correct else "wrong"


@dataclass(frozen=True)
class OutcomeCounts:
    """Rows of each outcome, and the counts tables call ``rows`` and ``judged``.

    Attributes:
        correct: Answers read and right.
        wrong: Answers read and wrong.
        unparsed: Answers with a verdict that could not be read (counted wrong).
        truncated: Outputs cut off before their answer (counted wrong).
        free_text: Captions and free-form descriptions with text.
        empty: Captions and free-form descriptions with no text.
        error: Failed requests.

    """

    correct: int = 0
    wrong: int = 0
    unparsed: int = 0
    truncated: int = 0
    free_text: int = 0
    empty: int = 0
    error: int = 0

    @property
    def rows(self) -> int:
        """Every row, errors included (the error rate's n)."""
        return self.judged + self.free_text + self.empty + self.error

    @property
    def judged(self) -> int:
        """Rows with a right/wrong verdict (accuracy's, the unparsed and truncated rates' n)."""
        return self.correct + self.wrong + self.unparsed + self.truncated

    @property
    def answered(self) -> int:
        """Rows that are answers (every row but errors)."""
        return self.rows - self.error

    def to_dict(self) -> dict[str, int]:
        """``rows``, ``judged`` and each outcome's count, JSON-ready."""
        return {"rows": self.rows, "judged": self.judged, **asdict(self)}


def count_outcomes(scores: Iterable[Score]) -> OutcomeCounts:
    """Rows of each outcome among `scores` (one model's rows, or one group's).

    Args:
        scores: Rows, one per (sample, repeat).

    Returns:
        The counts.

    """
    counts = dict.fromkeys(OUTCOMES, 0)
    for s in scores:
        counts[row_outcome(s)] += 1
    return OutcomeCounts(**counts)
