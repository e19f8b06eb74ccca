"""One answer's judged figure from its verdicts (lmmprobe's definition, docs/definitions.md)."""

from __future__ import annotations

import pytest

from lmmprobe.metrics.judged import decided, judge_values, judged_value
from lmmprobe.schema import Judgement


def _j(
    judge: str | None,
    by: str,
    value: float | None = None,
    attempt: int = 0,
    reading: str | None = None,
) -> Judgement:
    return Judgement.model_validate(
        {"judge": judge, "protocol": "p", "version": "1", "decided_by": by, "value": value,
         "attempt": attempt, "reading": reading}
    )  # fmt: skip


def test_a_rule_decides_before_any_judge() -> None:
    assert judged_value([_j(None, "rule", 1.0), _j("a", "judge", 0.0)]) == 1.0


def test_majority_of_verdicts_and_a_tie_decides_nothing() -> None:
    assert (
        judged_value([_j("a", "judge", 1.0), _j("b", "judge", 0.0), _j("c", "judge", 1.0)]) == 1.0
    )
    assert judged_value([_j("a", "judge", 1.0), _j("b", "judge", 0.0)]) is None
    # An unjudged verdict is no vote.
    assert judged_value([_j("a", "judge", 0.0), _j("b", "unjudged")]) == 0.0


def test_grades_are_averaged_repeats_first() -> None:
    votes = [_j("a", "judge", 0.2, 0), _j("a", "judge", 0.6, 1), _j("b", "judge", 1.0)]
    assert judge_values(votes) == {"a": pytest.approx(0.4), "b": 1.0}
    assert judged_value(votes) == pytest.approx(0.7)


def test_nothing_decided_when_every_judge_failed() -> None:
    failed = [_j("a", "unjudged"), _j("b", "unjudged")]
    assert judged_value(failed) is None and not decided(failed)
    assert decided([_j("a", "unjudged"), _j(None, "rule", 0.0)])


def test_the_headline_verdict_is_the_judges_reading_never_a_rule_or_a_grade() -> None:
    from lmmprobe.schema.judgement import judges_verdict

    def read(judge: str, value: float, attempt: int = 0) -> Judgement:
        return _j(judge, "judge", value, attempt, reading="A" if value else "B")

    assert judges_verdict([read("a", 1.0)]) is True
    assert judges_verdict([read("a", 0.0), _j("b", "unjudged")]) is False
    assert judges_verdict([read("a", 1.0), read("b", 0.0), read("c", 1.0)]) is True
    # A tie, a judge split over its repeats, a rule alone, every judge failing: none.
    assert judges_verdict([read("a", 1.0), read("b", 0.0)]) is None
    assert judges_verdict([read("a", 1.0, 0), read("a", 0.0, 1)]) is None
    assert judges_verdict([_j(None, "rule", 1.0, reading="A")]) is None
    assert judges_verdict([_j("a", "unjudged"), _j("b", "unjudged")]) is None
    # A grade is no verdict, even one of 1 (the worst of lmmprobe-open's 1-5) or 0.
    assert judges_verdict([_j("a", "judge", 1.0)]) is None
    assert judges_verdict([_j("a", "judge", 0.0)]) is None
    assert judges_verdict([_j("a", "judge", 0.7)]) is None
