"""The store's quick paths write and read exactly what the plain ones would.

Scores are stored with memoised metadata text, a quick gold encoding and many rows per
INSERT; answers are looked up through ``json_each`` and rebuilt without validation. Each must
give the stored text of ``json.dumps`` and the `Response` of a validated constructor.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.formulate import formulate
from lmmprobe.schema import (
    ErrorInfo,
    FormulateConfig,
    Request,
    Response,
    Sample,
    Score,
    Usage,
)
from lmmprobe.schema._trusted import trusted
from lmmprobe.store import Store
from lmmprobe.store.sqlite import _gold_json, _metadata_text


class Level(StrEnum):
    EASY = "easy"


ODD_TEXT = 'a "quoted"\\ line\nnext\ttab \x00 \x1f é ☃ 😀 \u2028'


@pytest.mark.parametrize(
    "gold",
    [0, 7, -3, 10**30, [], ["a"], ["a ball", "ball"], [ODD_TEXT, ""], True, 1.5, ["a", 1], None],
)
def test_gold_json_is_json_dumps(gold: Any) -> None:
    assert _gold_json(gold) == json.dumps(gold)


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"task": "demo", "subtask": "color"},
        {"subtask": "color", "task": "demo"},  # same items, other order: other text
        {ODD_TEXT: ODD_TEXT},
        {"level": 3},
        {"level": 3.0},
        {"level": True},
        {"level": None},
        {"level": Level.EASY},
        {"tags": ["a", "b"]},  # unhashable
        {"nested": {"a": 1}},
        {"path": Path("x/y")},  # encoded with default=str
    ],
)
def test_metadata_text_is_json_dumps(metadata: dict[str, Any]) -> None:
    expected = json.dumps(metadata, default=str)
    assert _metadata_text(metadata) == expected
    assert _metadata_text(dict(metadata)) == expected  # again, now perhaps remembered


def test_equal_looking_metadata_not_confused() -> None:
    # 1 == 1.0 == True, but they encode differently; strings are remembered, these are not.
    for value in (1, 1.0, True, "1", Level.EASY, "easy"):
        assert _metadata_text({"v": value}) == json.dumps({"v": value}, default=str)


def _score(i: int, **kw: Any) -> Score:
    fields: dict[str, Any] = {
        "model": "first",
        "sample_id": f"s{i:04d}",
        "repeat": i % 2,
        "key": f"k{i}",
        "stage": "mark",
        "prediction": i % 3 or None,
        "prediction_text": ODD_TEXT if i % 5 == 0 else "red",
        "correct": (None, True, False)[i % 3],
        "format_hit": i % 2 == 0,
        "gold": ["a ball", ODD_TEXT] if i % 4 == 0 else i % 3,
        "gold_text": "red",
        "abstain_offered": i % 7 == 0,
        "abstained": i % 11 == 0,
        "error_type": "timeout" if i % 13 == 0 else None,
        "metadata": {"task": "demo", "level": i % 3} if i % 2 else {"task": "demo"},
    }
    fields.update(kw)
    return Score.model_validate(fields)


def _stored(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    return store.conn.execute(
        "SELECT *, typeof(prediction), typeof(correct), typeof(format_hit), typeof(abstained) "
        "FROM scores WHERE run_id = ? ORDER BY rowid",
        (run_id,),
    ).fetchall()


def _expected_row(run_id: str, s: Score) -> tuple[Any, ...]:
    """The row as one INSERT per score with ``json.dumps`` stored it."""
    return (
        run_id, s.model, s.sample_id, s.repeat, s.key, s.stage, s.prediction, s.prediction_text,
        None if s.correct is None else int(s.correct), int(s.format_hit), json.dumps(s.gold),
        s.gold_text, int(s.abstain_offered), int(s.abstained), s.error_type,
        json.dumps(s.metadata, default=str),
        "null" if s.prediction is None else "integer",
        "null" if s.correct is None else "integer", "integer", "integer",
    )  # fmt: skip


@pytest.mark.parametrize("n", [0, 1, 49, 50, 51, 130])
def test_scores_stored_as_plain_json(store: Store, n: int) -> None:
    scores = [_score(i) for i in range(n)]
    store.put_scores("r1", scores)
    assert _stored(store, "r1") == [_expected_row("r1", s) for s in scores]


def test_repeated_score_in_one_call_keeps_the_last(store: Store) -> None:
    # Many rows go into one statement; a row given twice still ends as its last copy,
    # whether both copies share a statement (row 5) or not (row 3).
    scores = [_score(i) for i in range(60)]
    again = [_score(5, prediction_text="in the same statement"), _score(3, prediction_text="later")]
    store.put_scores("r1", [*scores[:10], again[0], *scores[10:], again[1]])
    rows = _stored(store, "r1")
    expected = [s for s in scores if s.sample_id not in ("s0003", "s0005")]
    assert rows == [
        _expected_row("r1", s) for s in [*expected[:8], again[0], *expected[8:], again[1]]
    ]


def test_unvalidated_gold_still_stored_as_json_dumps(store: Store) -> None:
    base = _score(1).__dict__
    golds: list[Any] = [True, 2.5, ("a", "b"), {"x": 1}]
    scores = [
        trusted(Score, {**base, "sample_id": f"s{i}", "gold": g}) for i, g in enumerate(golds)
    ]
    store.put_scores("r1", scores)
    assert [r[10] for r in _stored(store, "r1")] == [json.dumps(g) for g in golds]


# --- responses -----------------------------------------------------------------------------------


def _request(key: str, *, likelihood: bool = False) -> Request:
    sample = Sample(id=f"s-{key}", question="Which color?", choices=["red", "blue"], answer=0)
    req = formulate(
        sample, config=FormulateConfig(method="likelihood" if likelihood else "generate")
    )
    req.key = key
    return req


def _responses() -> list[Response]:
    return [
        Response(key="text", text="(A) ☃", latency_s=0.25),
        Response(key="no-text", latency_s=0.0),
        Response(key="usage", text="(B)", latency_s=1.5, usage=Usage(prompt_tokens=9)),
        Response(key="lls", loglikelihoods=[-0.5, -2.0], token_counts=[1, 3], latency_s=0.1),
        Response(key="err", error=ErrorInfo(type="timeout", message="slow", retryable=True)),
        Response(key=ODD_TEXT, text=ODD_TEXT, latency_s=3.0),  # a NUL: looked up by IN (...)
        Response(key="a\\u0000", text="not a NUL", latency_s=3.0),
    ]


@pytest.mark.parametrize("json_each", [True, False])
@pytest.mark.parametrize("include_errors", [True, False])
def test_responses_as_validated(store: Store, json_each: bool, include_errors: bool) -> None:
    stored = _responses()
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    store._json_each = json_each  # the IN (...) fallback for SQLite without JSON functions
    keys = [r.key for r in stored] + ["missing", "text"]
    got = store.get_responses(keys, include_errors=include_errors)
    expected = {r.key: r for r in stored if include_errors or r.ok}
    assert got == expected
    for key, resp in got.items():
        # Built without validation, yet the same object as a constructor naming every field.
        full = Response(**{name: getattr(expected[key], name) for name in Response.model_fields})
        assert resp.model_fields_set == full.model_fields_set
        assert resp.__pydantic_private__ == full.__pydantic_private__
        assert resp.__pydantic_extra__ == full.__pydantic_extra__
        assert resp.model_dump() == full.model_dump()


def test_rebuilt_answers_are_independent(store: Store) -> None:
    stored = [Response(key=f"k{i}", text=f"t{i}", latency_s=0.5) for i in range(3)]
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    got = store.get_responses(["k0", "k1", "k2"])
    got["k0"].text = "changed"
    assert got["k1"].text == "t1"
    assert got["k1"].model_fields_set == set(Response.model_fields)
    assert store.get_responses(["k0"])["k0"].text == "t0"


def test_many_keys_through_either_lookup(store: Store) -> None:
    stored = [Response(key=f"k{i}", text=f"t{i}") for i in range(1200)]
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    keys = [f"k{i}" for i in range(0, 1500, 2)]
    with_json = store.get_responses(keys)
    store._json_each = False
    assert store.get_responses(keys) == with_json
    assert set(with_json) == {f"k{i}" for i in range(0, 1200, 2)}
