"""A row's outcome and the counts every table reads (`lmmprobe.metrics.outcome`, issue 23 item 14)."""

from __future__ import annotations

import pytest

from lmmprobe.metrics import summarize
from lmmprobe.metrics.outcome import count_outcomes, row_outcome
from lmmprobe.metrics.synth import accuracy_percent, scores_by
from lmmprobe.schema import Score


def _row(sid: str, stage: str, correct: bool | None, **kw: object) -> Score:
    gold: object = kw.pop("gold", 0)
    return Score.model_validate(
        {"model": "m", "sample_id": sid, "repeat": 0, "key": sid, "stage": stage,
         "correct": correct, "gold": gold, "gold_text": "x", "metadata": {"k": "g"}, **kw}
    )  # fmt: skip


ROWS = [
    _row("a", "mark", True, format_hit=True),
    _row("b", "mark", False, format_hit=True),
    _row("c", "fuzzy", False),
    _row("d", "unparsed", False),  # an unreadable choice answer: wrong
    _row("e", "match", None, gold=["ref"], prediction_text="a caption"),
    _row("f", "unparsed", None, gold=["ref"], prediction_text=""),  # an empty caption
    _row("g", "error", None, error_type="timeout"),
    _row("h", "truncated", False),  # cut off in its thinking: wrong, not unparsed
    _row("i", "truncated", None, gold=["ref"]),  # a caption cut off: no text, no verdict
]


def test_each_row_has_one_outcome() -> None:
    assert [row_outcome(r) for r in ROWS] == [
        "correct", "wrong", "wrong", "unparsed", "free_text", "empty", "error", "truncated",
        "empty",
    ]  # fmt: skip
    c = count_outcomes(ROWS)
    assert (c.rows, c.judged, c.answered) == (9, 5, 8)
    assert c.to_dict() == {"rows": 9, "judged": 5, "correct": 1, "wrong": 2, "unparsed": 1,
                           "truncated": 1, "free_text": 1, "empty": 2, "error": 1}  # fmt: skip


def test_every_rate_reads_the_same_definition() -> None:
    c = count_outcomes(ROWS)
    m = summarize(ROWS, n_boot=0)
    assert m["accuracy"].n == m["unparsed_rate"].n == m["truncated_rate"].n == c.judged
    assert m["error_rate"].n == c.rows
    assert m["accuracy"].value == pytest.approx(c.correct / c.judged)
    # The empty caption is not unparsed: only the choice answer that could not be read is.
    assert m["unparsed_rate"].value == pytest.approx(c.unparsed / c.judged)
    # A cut-off output is counted wrong and in its own rate, never as unparsed.
    assert m["truncated_rate"].value == pytest.approx(c.truncated / c.judged) == 1 / 5
    assert accuracy_percent(ROWS) == pytest.approx(100 * c.correct / c.judged)
    assert scores_by(ROWS, "k") == {"g": pytest.approx(100 * c.correct / c.judged)}
