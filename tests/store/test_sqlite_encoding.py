"""What the store writes and reads back: JSON text columns, odd keys and texts, many keys.

Scores keep their gold answer and metadata as ``json.dumps`` text (exports and other tools
read these columns); responses come back as the validated `Response` that was stored, for any
key text and however many keys are asked at once.
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
from lmmprobe.store import Store, StoreError
from lmmprobe.store.sqlite import score_from_row


class Level(StrEnum):
    EASY = "easy"


ODD_TEXT = 'a "quoted"\\ line\nnext\ttab \x00 \x1f é ☃ 😀 \u2028'


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
        "formulation": "single_choice" if i % 3 == 0 else None,
        "options": [ODD_TEXT, "blue"] if i % 3 == 0 else None,
        "marks": ["A", "B"] if i % 3 == 0 else None,
        "order": [1, 0] if i % 3 == 0 else None,
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
    """The row as one INSERT per score with ``json.dumps`` stores it."""
    return (
        run_id, s.model, s.sample_id, s.repeat, s.key, s.stage, s.prediction, s.prediction_text,
        None if s.correct is None else int(s.correct), int(s.format_hit), json.dumps(s.gold),
        s.gold_text, int(s.abstain_offered), int(s.abstained), s.error_type,
        json.dumps(s.metadata, default=str), s.formulation,
        *(None if v is None else json.dumps(v) for v in (s.options, s.marks, s.order)),
        "null" if s.prediction is None else "integer",
        "null" if s.correct is None else "integer", "integer", "integer",
    )  # fmt: skip


@pytest.mark.parametrize("n", [0, 1, 130])
def test_scores_stored_as_plain_json(store: Store, n: int) -> None:
    scores = [_score(i) for i in range(n)]
    store.put_scores("r1", scores)
    assert _stored(store, "r1") == [_expected_row("r1", s) for s in scores]


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {ODD_TEXT: ODD_TEXT},
        {"level": 3.0},
        {"level": True},
        {"level": None},
        {"level": Level.EASY},
        {"tags": ["a", "b"], "nested": {"a": 1}},
        {"path": Path("x/y")},  # anything JSON lacks is written as its str()
    ],
)
def test_metadata_stored_as_json_and_read_back(store: Store, metadata: dict[str, Any]) -> None:
    score = _score(1, metadata=metadata)
    store.put_scores("r1", [score])
    assert _stored(store, "r1")[0][15] == json.dumps(metadata, default=str)
    (rec,) = store.iter_score_rows("r1")
    assert rec["metadata"] == json.loads(json.dumps(metadata, default=str))


def test_scores_round_trip_through_score_rows(store: Store) -> None:
    scores = [_score(i) for i in range(30)]
    store.put_scores("r1", scores)
    back = [score_from_row(rec) for rec in store.iter_score_rows("r1")]
    by_id = {(s.sample_id, s.repeat): s for s in scores}
    assert back == [by_id[(s.sample_id, s.repeat)] for s in back] and len(back) == len(scores)


def test_repeated_score_in_one_call_keeps_the_last(store: Store) -> None:
    scores = [_score(i) for i in range(60)]
    again = _score(3, prediction_text="later")
    store.put_scores("r1", [*scores, again])
    texts = {r[2]: r[7] for r in _stored(store, "r1")}
    assert len(texts) == 60 and texts["s0003"] == "later"


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
        Response(key=ODD_TEXT, text=ODD_TEXT, latency_s=3.0),  # a NUL inside the key
        Response(key="a\\u0000", text="not a NUL", latency_s=3.0),
        Response(key="a\x00", text="a NUL", latency_s=3.0),
    ]


@pytest.mark.parametrize("include_errors", [True, False])
def test_responses_read_back_as_stored(store: Store, include_errors: bool) -> None:
    stored = _responses()
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    keys = [r.key for r in stored] + ["missing", "text", "a"]
    got = store.get_responses(keys, include_errors=include_errors)
    assert got == {r.key: r for r in stored if include_errors or r.ok}


def test_read_responses_are_independent(store: Store) -> None:
    stored = [Response(key=f"k{i}", text=f"t{i}", latency_s=0.5) for i in range(3)]
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    got = store.get_responses(["k0", "k1", "k2"])
    got["k0"].text = "changed"
    assert got["k1"].text == "t1"
    assert store.get_responses(["k0"])["k0"].text == "t0"


def test_many_keys_across_query_chunks(store: Store) -> None:
    stored = [Response(key=f"k{i}", text=f"t{i}") for i in range(1200)]
    store.put_responses("first", [_request(r.key) for r in stored], stored)
    keys = [f"k{i}" for i in range(0, 2500, 2)]  # more keys than one query takes
    got = store.get_responses(keys)
    assert set(got) == {f"k{i}" for i in range(0, 1200, 2)}
    assert all(got[k].text == "t" + k[1:] for k in got)
    assert store.get_responses([]) == {}


def test_an_infinite_metadata_number_is_named_and_not_written(store: Store) -> None:
    """JSON has no Infinity: the store names the key and writes nothing; NaN is written null."""
    with pytest.raises(StoreError, match=r"metadata\.deep\[1\] holds inf"):
        store.put_scores("r1", [_score(1, metadata={"deep": [1.0, float("inf")]})])
    assert _stored(store, "r1") == []
    store.put_scores("r1", [_score(1, metadata={"w": float("nan")})])
    (rec,) = store.iter_score_rows("r1")
    assert rec["metadata"] == {"w": None}
