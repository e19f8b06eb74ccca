"""Store schema 10: a sample's metadata is stored once per run and sample, not in every row.

A row keeps only what it adds to its sample's shared metadata (`metadata_part`); every reader
gets back exactly the JSON text that was stored. `data/schema9/` holds a store written by
lmmprobe's schema 9 code (``lmmprobe run -m random -m first -d demo,n=12 --repeats 2 --by
subtask`` and an ``lmmprobe import`` of three answers), with what that code exported
(``lmmprobe export``, JSONL and CSV) and what its web app's API answered (``serve.json``):
migrated in place, the store must give all of it byte for byte.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe

from lmmprobe.formulate import formulate
from lmmprobe.report import rebuild_results
from lmmprobe.schema import Response, Sample, Score
from lmmprobe.schema.rows import ABSENT
from lmmprobe.serve.app import create_app
from lmmprobe.store import Store, StoreDamagedError
from lmmprobe.store.layout import (
    MIGRATIONS,
    SCHEMA_VERSION,
    WHOLE_METADATA,
    metadata_part,
    metadata_whole,
)
from lmmprobe.store.sqlite import _score_values, score_from_row

FIXTURE = Path(__file__).parent / "data" / "schema9"
RUN = "20261129-143930-22af71"
IMPORTED = "20261129-143935-543867"
_enc = json.JSONEncoder(default=str).encode


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "lmmprobe.db"
    shutil.copy(FIXTURE / "lmmprobe.db", db)
    return db


def _sql(db: Path, query: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


def _version(db: Path) -> str:
    return str(_sql(db, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0])


_OUTCOME_END = {
    "jsonl": (re.compile(rb', "outcome": "([a-z_]+)"\}\n'), b"}\n"),
    "csv": (re.compile(rb",([a-z_]+)\r\n"), b"\r\n"),
}


def _without_outcome(data: bytes, fmt: str) -> bytes:
    """An export without its last column, ``outcome`` (added in session 19), which every row ends with.

    The fixtures are what a schema-9 lmmprobe exported; every column they have must come out
    byte for byte the same, and each row now also ends with the count it is in.
    """
    pattern, end = _OUTCOME_END[fmt]
    rows = data.count(b"\n" if fmt == "jsonl" else b"\r\n")
    found = pattern.findall(data)
    assert len(found) == rows, (len(found), rows)
    outcomes = found[1:] if fmt == "csv" else found  # the CSV's header names the column
    assert fmt == "jsonl" or found[0] == b"outcome"
    assert set(outcomes) <= {
        b"correct",
        b"wrong",
        b"unparsed",
        b"truncated",
        b"free_text",
        b"empty",
        b"error",
    }, set(outcomes)
    return pattern.sub(end, data)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_store_schema_9_wrote_exports_byte_for_byte_once_migrated(
    tmp_path: Path, fmt: str
) -> None:
    db = _copy(tmp_path)
    assert _version(db) == "9"
    for run in (RUN, IMPORTED):
        out = tmp_path / f"{run}.{fmt}"
        done = lmmprobe("export", run, "--db", db, "-f", fmt, "-o", out)
        assert done.returncode == 0, done.stderr
        assert _without_outcome(out.read_bytes(), fmt) == (FIXTURE / f"{run}.{fmt}").read_bytes(), (
            run
        )
    assert _version(db) == str(SCHEMA_VERSION) == "14"
    # The rows now hold nothing of the metadata their sample's row holds once.
    parts = _sql(db, "SELECT metadata, COUNT(*) FROM scores WHERE run_id = ? GROUP BY 1", RUN)
    assert parts == [("", 48)]
    shared = _sql(db, "SELECT row_metadata FROM samples WHERE run_id = ? LIMIT 1", RUN)[0][0]
    assert json.loads(shared)["task"] == "demo"


def test_a_migrated_store_gives_the_web_app_the_same_answers(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    views: dict[str, Any] = {}
    with TestClient(create_app(db), base_url="http://127.0.0.1") as c:
        for run in (RUN, IMPORTED):
            for params in (
                {}, {"key": "subtask"}, {"key": "subtask", "value": "color_tf"},
                {"key": "imported_row", "value": "2"}, {"key": "nope", "value": "(missing)"},
                {"key": "question_type", "value": "true_false", "page_size": "5"},
            ):  # fmt: skip
                r = c.get(f"/api/runs/{run}/samples", params=params)
                views[f"{run} {sorted(params.items())}"] = [r.status_code, r.json()]
            for sid in ("a", "c", "demo-0-000000", "demo-0-000005"):
                r = c.get(f"/api/runs/{run}/samples/{sid}")
                views[f"{run} {sid}"] = [r.status_code, r.json()]
    assert _version(db) == str(SCHEMA_VERSION)
    assert views == json.loads((FIXTURE / "serve.json").read_text())


def test_a_migrated_store_rebuilds_the_results_it_recorded(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    with Store(db, read_only=True) as store:
        stored = store.get_run(RUN)["results"]["models"]
        rebuilt = rebuild_results(store, RUN)
        assert _version(db) == str(SCHEMA_VERSION)
        for model, results in rebuilt.models.items():
            dumped = results.model_dump(mode="json", exclude={"stats", "judge"})
            assert dumped == {k: stored[model][k] for k in dumped}, model
        # The rows read in chunks carry the metadata the Scores do.
        scores = store.model_scores(RUN, "random")
        (chunk,) = store.row_chunks(RUN, "random", keys=["subtask"])
    assert chunk.meta["subtask"] == [s.metadata["subtask"] for s in scores]


def test_migrating_again_changes_nothing(tmp_path: Path) -> None:
    db = _copy(tmp_path)
    Store(db).close()
    before = _sql(db, "SELECT * FROM scores ORDER BY run_id, model, sample_id, repeat")
    samples = _sql(db, "SELECT * FROM samples ORDER BY run_id, sample_id")
    conn = sqlite3.connect(db)
    MIGRATIONS[9](conn)
    conn.commit()
    conn.close()
    assert _sql(db, "SELECT * FROM scores ORDER BY run_id, model, sample_id, repeat") == before
    assert _sql(db, "SELECT * FROM samples ORDER BY run_id, sample_id") == samples


def test_a_run_stores_each_samples_metadata_once(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    done = lmmprobe(
        "run", "-m", "random", "-m", "first", "-d", "demo,n=6", "--repeats", "2",
        "--bootstrap", "0", "--db", db, "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    parts = _sql(db, "SELECT metadata, COUNT(*) FROM scores GROUP BY 1")
    assert [p for p, _ in parts] == [""] and parts[0][1] >= 2 * 2 * 5
    with Store(db, read_only=True) as store:
        run = store.resolve_run("latest")
        samples = {s.id: s for s in store.get_samples(run, images=False)}
        rows = list(store.iter_score_rows(run))
    assert all(r["metadata"] == samples[r["sample_id"]].row_metadata for r in rows)
    view = _sql(db, "SELECT metadata FROM score_metadata ORDER BY model, sample_id, repeat")
    assert [json.loads(m) for (m,) in view] == [r["metadata"] for r in rows]


def _score(sid: str, meta: dict[str, Any], model: str = "m", repeat: int = 0) -> Score:
    return Score(model=model, sample_id=sid, repeat=repeat, key=f"k{sid}{model}{repeat}",
                 stage="mark", correct=True, gold=0, gold_text="a", metadata=meta)  # fmt: skip


SHARED = {"task": "demo", "level": 1.0, "tags": ["x"]}
ROWS: list[tuple[dict[str, Any], str]] = [
    (SHARED, ""),  # the sample's metadata
    ({**SHARED, "imported_row": 7, "tool_verdict": None}, ', "imported_row": 7, "tool_verdict": null}'),
    ({**SHARED, "level": 1}, "whole"),  # a value written otherwise (1 is not 1.0)
    ({"task": "demo", "level": 1.0}, "whole"),  # a key left out
    ({"level": 1.0, "task": "demo", "tags": ["x"]}, "whole"),  # another order
    ({}, "whole"),
]  # fmt: skip


def test_rows_keep_only_what_they_add_and_read_back_exactly(tmp_path: Path) -> None:
    sample = Sample(id="s", question="q?", choices=["a", "b"], answer=0, metadata=SHARED)
    with Store(tmp_path / "s.db") as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_samples("r", [sample])
        scores = [_score("s", meta, repeat=i) for i, (meta, _) in enumerate(ROWS)]
        scores.append(_score("unrecorded", SHARED))  # no sample recorded: whole
        store.put_scores("r", scores)
        # Recorded again (a resumed run) with other metadata: the shared text stays.
        store.put_samples("r", [sample.model_copy(update={"metadata": {"other": 1}})])
        store.put_scores("r", [_score("s", SHARED, model="m2")])
        stored = dict(
            store.conn.execute(
                "SELECT model || sample_id || repeat, metadata FROM scores"
            ).fetchall()
        )
        rows = {(r["model"], r["sample_id"], r["repeat"]): r for r in store.iter_score_rows("r")}
        chunks = list(store.row_chunks("r", "m", keys=["level", "imported_row"]))
        view = dict(
            store.conn.execute(
                "SELECT model || sample_id || repeat, metadata FROM score_metadata"
            ).fetchall()
        )
    for i, (meta, part) in enumerate(ROWS):
        assert stored[f"ms{i}"] == (_enc(meta) if part == "whole" else part), i
        assert rows[("m", "s", i)]["metadata"] == meta
        assert list(rows[("m", "s", i)]["metadata"]) == list(meta)  # key order too
        assert view[f"ms{i}"] == _enc(meta)
    assert stored["munrecorded0"] == _enc(SHARED) and stored["m2s0"] == ""
    assert rows[("m2", "s", 0)]["metadata"] == SHARED
    (chunk,) = chunks
    expected = [score_from_row(rows[("m", sid, rep)]) for sid, rep in zip(chunk.sample_id, chunk.repeat, strict=True)]  # fmt: skip
    assert chunk.meta["level"] == [s.metadata.get("level", ABSENT) for s in expected]
    assert chunk.meta["imported_row"] == [s.metadata.get("imported_row", ABSENT) for s in expected]
    assert [type(v) for v in chunk.meta["level"][:3]] == [float, float, int]


def test_a_schema_9_store_with_rows_of_every_kind_migrates(tmp_path: Path) -> None:
    # Rows written the old way (whole metadata in every row), then opened by this code.
    db = tmp_path / "old.db"
    with Store(db) as store:
        store.create_run("r", {}, str(tmp_path))
    conn = sqlite3.connect(db)
    conn.execute("DROP VIEW score_metadata")
    conn.execute("ALTER TABLE samples DROP COLUMN row_metadata")
    conn.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    # Sample "s" is recorded; its first row (model "a") is the one the others are read against.
    conn.execute("INSERT INTO samples VALUES ('r', 's', 'q?', '{}')")
    old = [_score("s", SHARED, model="a")]
    old += [_score("s", meta, model="b", repeat=i) for i, (meta, _) in enumerate(ROWS)]
    old.append(_score("unrecorded", SHARED))
    marks = ",".join("?" * 20)
    conn.executemany(
        f"INSERT INTO scores VALUES ({marks})", [_score_values("r", s.model, s) for s in old]
    )
    conn.commit()
    conn.close()
    with Store(db, read_only=True) as store:
        back = [score_from_row(r) for r in store.iter_score_rows("r")]
    assert _version(db) == str(SCHEMA_VERSION)
    key = {(s.model, s.sample_id, s.repeat): s for s in old}
    assert back == [key[(s.model, s.sample_id, s.repeat)] for s in back] and len(back) == len(old)
    stored = dict(_sql(db, "SELECT model || sample_id || repeat, metadata FROM scores"))
    assert stored["as0"] == "" and stored["munrecorded0"] == _enc(SHARED)
    for i, (meta, part) in enumerate(ROWS):
        assert stored[f"bs{i}"] == (_enc(meta) if part == "whole" else part), i


def test_a_row_whose_shared_metadata_is_gone_is_reported(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_samples("r", [Sample(id="s", question="q?", choices=["a", "b"], answer=0)])
        store.put_scores("r", [_score("s", {})])
        store.conn.execute("UPDATE samples SET row_metadata = NULL")
        with pytest.raises(StoreDamagedError, match="sample's metadata"):
            list(store.iter_score_rows("r"))
        with pytest.raises(StoreDamagedError, match="sample's metadata"):
            list(store.row_chunks("r", "m"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
_meta = st.dictionaries(st.text(max_size=6), _json, max_size=5)


@settings(max_examples=300, deadline=None)
@given(shared=_meta, extra=_meta, whole_instead=_meta, appended=st.booleans())
def test_the_split_reads_back_any_text_in_python_and_in_sql(
    shared: dict[str, Any], extra: dict[str, Any], whole_instead: dict[str, Any], appended: bool
) -> None:
    row = {**shared, **{k: v for k, v in extra.items() if k not in shared}} if appended else whole_instead  # fmt: skip
    s_text, w_text = _enc(shared), _enc(row)
    part = metadata_part(s_text, w_text)
    assert metadata_whole(s_text, part) == w_text
    assert metadata_part(None, w_text) == w_text
    assert part == "" or part[0] in ",{"
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE samples (run_id, sample_id, row_metadata)")
    conn.execute("CREATE TABLE scores (run_id, sample_id, metadata)")
    conn.execute("INSERT INTO samples VALUES ('r', 's', ?)", (s_text,))
    conn.execute("INSERT INTO scores VALUES ('r', 's', ?)", (part,))
    ((got,),) = conn.execute(f"SELECT {WHOLE_METADATA} FROM scores s").fetchall()
    conn.close()
    assert got == w_text


def test_metadata_json_cannot_hold_never_stops_the_answers_being_stored(tmp_path: Path) -> None:
    # Rows of such a sample fail their own write, as they always did; its answers are kept.
    sample = Sample(id="s", question="q?", choices=["a", "b"], answer=0, metadata={"k": {(1, 2): "x"}})  # fmt: skip
    request = formulate(sample)
    request.key = "k1"
    with Store(tmp_path / "s.db") as store:
        store.create_run("r", {}, str(tmp_path))
        store.put_samples("r", [sample])
        store.put_responses("m", [request], [Response(key="k1", text="(A)")])
        assert store.get_responses(["k1"])["k1"].text == "(A)"
        ((shared,),) = store.conn.execute("SELECT row_metadata FROM samples").fetchall()
    assert shared is None
