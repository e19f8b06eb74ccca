"""Store schema 8: responses record the server's thinking, finish reason and reasoning tokens.

A store written before keeps working: it is migrated in place, its responses read as "no
thinking sent, finish reason unknown", and new responses are stored next to them with theirs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lmmprobe.schema import MAX_REPLY_CHARS, Request, Response, Usage
from lmmprobe.store import Store
from lmmprobe.store.layout import SCHEMA_VERSION


def _request(key: str) -> Request:
    return Request(key=key, sample_id=key, method="generate", messages=[], prompt="?")


def _thinking_response(key: str) -> Response:
    return Response(
        key=key,
        text="<think>maybe A</think>(B)",
        reasoning="the server's own thinking",
        finish_reason="stop",
        usage=Usage(prompt_tokens=3, completion_tokens=40, reasoning_tokens=31),
    )


def test_thinking_fields_are_written_and_read_back(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.put_responses("m", [_request("k")], [_thinking_response("k")])
        got = store.get_responses(["k"])["k"]
    assert got == _thinking_response("k")


def test_a_version_7_store_is_migrated_and_its_answers_read_as_before(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store(db) as store:
        store.put_responses("m", [_request("old")], [Response(key="old", text="(A)")])
    conn = sqlite3.connect(db)  # what a version 7 store looks like: no thinking columns
    for column in ("reasoning", "finish_reason", "reasoning_tokens"):
        conn.execute(f"ALTER TABLE responses DROP COLUMN {column}")
    conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()

    with Store(db) as store:
        old = store.get_responses(["old"])["old"]
        store.put_responses("m", [_request("new")], [_thinking_response("new")])
        got = store.get_responses(["old", "new"])
    assert old == Response(key="old", text="(A)")
    assert (old.reasoning, old.finish_reason) == (None, None)
    assert got["new"] == _thinking_response("new")
    conn = sqlite3.connect(db)
    (version,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    rows = dict(conn.execute("SELECT key, finish_reason FROM responses"))
    conn.close()
    assert version == str(SCHEMA_VERSION) and rows == {"old": None, "new": "stop"}


def test_a_reply_longer_than_a_run_keeps_is_stored_cut_as_a_backend_cuts_it(
    tmp_path: Path,
) -> None:
    # A stored text past MAX_REPLY_CHARS is read as damage (refused unread), so no backend's
    # answer may be stored longer: a local one that wrote more is cut here, as the HTTP
    # backends cut theirs, and says so (finish_reason "length").
    long = "é" * (MAX_REPLY_CHARS + 5)
    with Store(tmp_path / "db.sqlite") as store:
        store.put_responses(
            "m",
            [_request("k"), _request("short")],
            [
                Response(key="k", text=long, reasoning=long, finish_reason="stop"),
                Response(key="short", text="(A)", finish_reason="stop"),
            ],
        )
        got = store.get_responses(["k", "short"])
    assert got["k"].text == long[:MAX_REPLY_CHARS]
    assert got["k"].reasoning == long[:MAX_REPLY_CHARS]
    assert got["k"].finish_reason == "length"
    assert got["short"].finish_reason == "stop"
