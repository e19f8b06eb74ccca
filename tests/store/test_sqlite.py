"""The SQLite store: WAL mode, one response per key, errors retried, runs and scores."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from pathlib import Path

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
from lmmprobe.store import Store


def request(key: str, *, likelihood: bool = False) -> Request:
    sample = Sample(id=f"s-{key}", question="Which color?", choices=["red", "blue"], answer=0)
    cfg = FormulateConfig(method="likelihood" if likelihood else "generate")
    req = formulate(sample, config=cfg)
    req.key = key
    return req


def ok(key: str, text: str = "(A)") -> Response:
    return Response(key=key, text=text, latency_s=0.5)


def err(key: str, type: str = "timeout", retryable: bool = True) -> Response:
    return Response(
        key=key, error=ErrorInfo(type=type, message=f"{type} happened", retryable=retryable)
    )


def put(store: Store, *responses: Response) -> None:
    store.put_responses("first", [request(r.key) for r in responses], list(responses))


# --- file ----------------------------------------------------------------------------------------


def test_creates_file_in_wal_mode(tmp_db: Path) -> None:
    assert not tmp_db.parent.exists()
    with Store(tmp_db) as s:
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert tmp_db.is_file()
    # WAL is a property of the file: another connection sees it too.
    conn = sqlite3.connect(tmp_db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_responses_survive_reopening(tmp_db: Path) -> None:
    with Store(tmp_db) as s:
        put(s, ok("k1", "hello"))
    with Store(tmp_db) as s:
        assert s.get_responses(["k1"])["k1"].text == "hello"
        assert s.count_responses() == 1


# --- responses -----------------------------------------------------------------------------------


def test_generate_response_round_trips(store: Store) -> None:
    resp = Response(
        key="g1",
        text="(B) blue, I think\nsecond line ☃",
        latency_s=1.25,
        usage=Usage(prompt_tokens=120, completion_tokens=7),
    )
    put(store, resp)
    assert store.get_responses(["g1"]) == {"g1": resp}


def test_loglikelihood_response_round_trips(store: Store) -> None:
    resp = Response(
        key="l1",
        loglikelihoods=[-0.125, -3.5, -1e-9],
        token_counts=[1, 4, 2],
        latency_s=0.01,
        usage=Usage(prompt_tokens=33),
    )
    store.put_responses("first", [request("l1", likelihood=True)], [resp])
    assert store.get_responses(["l1"]) == {"l1": resp}


def test_response_without_usage_round_trips(store: Store) -> None:
    resp = ok("u1")
    put(store, resp)
    got = store.get_responses(["u1"])["u1"]
    assert got.usage is None
    assert got == resp


def test_unknown_keys_are_absent(store: Store) -> None:
    put(store, ok("k1"))
    assert set(store.get_responses(["k1", "k2", "k3"])) == {"k1"}
    assert store.get_responses([]) == {}


def test_many_keys_in_one_lookup(store: Store) -> None:
    keys = [f"k{i}" for i in range(1200)]  # more than one IN (...) chunk
    put(store, *(ok(k, text=k) for k in keys))
    got = store.get_responses(keys)
    assert len(got) == 1200
    assert all(got[k].text == k for k in keys)


def test_errors_hidden_by_default_so_they_are_retried(store: Store) -> None:
    put(store, ok("good"), err("bad", "rate_limit"))
    assert set(store.get_responses(["good", "bad"])) == {"good"}
    with_errors = store.get_responses(["good", "bad"], include_errors=True)
    assert set(with_errors) == {"good", "bad"}
    e = with_errors["bad"].error
    assert e == ErrorInfo(type="rate_limit", message="rate_limit happened", retryable=True)
    assert with_errors["bad"].text is None
    assert not with_errors["bad"].ok
    assert store.count_responses() == 2


@pytest.mark.parametrize("retryable", [True, False])
def test_error_type_and_retryable_kept(store: Store, retryable: bool) -> None:
    put(store, err("e", "bad_request", retryable))
    got = store.get_responses(["e"], include_errors=True)["e"]
    assert got.error is not None
    assert got.error.type == "bad_request"
    assert got.error.retryable is retryable


def test_success_replaces_stored_error(store: Store) -> None:
    put(store, err("k"))
    put(store, ok("k", "(B)"))
    got = store.get_responses(["k"], include_errors=True)["k"]
    assert got.ok
    assert got.text == "(B)"
    assert store.count_responses() == 1


def test_error_never_replaces_stored_success(store: Store) -> None:
    put(store, ok("k", "(A)"))
    put(store, err("k", "timeout"))
    got = store.get_responses(["k"], include_errors=True)["k"]
    assert got.ok
    assert got.text == "(A)"
    assert store.count_responses() == 1


def test_newer_error_replaces_older_error(store: Store) -> None:
    put(store, err("k", "timeout"))
    put(store, err("k", "rate_limit"))
    got = store.get_responses(["k"], include_errors=True)["k"]
    assert got.error is not None
    assert got.error.type == "rate_limit"


def test_same_key_twice_keeps_one_row(store: Store) -> None:
    put(store, ok("k", "first answer"))
    put(store, ok("k", "second answer"))
    assert store.count_responses() == 1
    assert store.get_responses(["k"])["k"].text == "second answer"


def test_same_key_twice_in_one_batch_keeps_one_row(store: Store) -> None:
    put(store, ok("k", "x"), ok("k", "y"), ok("j"))
    assert store.count_responses() == 2


def test_put_needs_one_response_per_request(store: Store) -> None:
    with pytest.raises(ValueError):
        store.put_responses("first", [request("a"), request("b")], [ok("a")])
    assert store.count_responses() == 0


# --- runs ----------------------------------------------------------------------------------------


def _create(store: Store, *ids: str) -> None:
    for run_id in ids:
        store.create_run(run_id, {"models": ["first"], "seed": 1}, f"/out/{run_id}")
        time.sleep(0.002)  # distinct created_at, so "latest" is well defined


def test_create_and_update_run(store: Store) -> None:
    _create(store, "r1")
    run = store.get_run("r1")
    assert run["status"] == "running"
    assert run["spec"] == {"models": ["first"], "seed": 1}
    assert run["manifest"] is None
    assert run["results"] is None
    assert run["out_dir"] == "/out/r1"
    store.update_run("r1", manifest={"seed": 1, "versions": {"x": "1"}})
    store.update_run("r1", status="completed", results={"acc": 0.5})
    run = store.get_run("r1")
    assert run["status"] == "completed"
    assert run["manifest"] == {"seed": 1, "versions": {"x": "1"}}
    assert run["results"] == {"acc": 0.5}
    assert run["updated_at"] >= run["created_at"]


def test_duplicate_run_id_rejected(store: Store) -> None:
    _create(store, "r1")
    with pytest.raises(sqlite3.IntegrityError):
        _create(store, "r1")


def test_get_unknown_run(store: Store) -> None:
    with pytest.raises(KeyError):
        store.get_run("nope")


def test_list_runs_newest_first(store: Store) -> None:
    _create(store, "a", "b", "c")
    assert [r["id"] for r in store.list_runs()] == ["c", "b", "a"]
    assert [r["id"] for r in store.list_runs(limit=2)] == ["c", "b"]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("latest", "20240102-000000-ffffff"),
        ("20240101-000000-abc123", "20240101-000000-abc123"),
        ("20240101-000000-abc", "20240101-000000-abc123"),
        ("20240102", "20240102-000000-ffffff"),
        ("2024010", KeyError),  # ambiguous prefix
        ("2023", KeyError),  # unknown
        ("zzz", KeyError),
    ],
)
def test_resolve_run(store: Store, ref: str, expected: object) -> None:
    _create(store, "20240101-000000-abc123", "20240101-000000-def456", "20240102-000000-ffffff")
    if expected is KeyError:
        with pytest.raises(KeyError):
            store.resolve_run(ref)
    else:
        assert store.resolve_run(ref) == expected


def test_ambiguous_prefix_names_candidates(store: Store) -> None:
    _create(store, "run-a1", "run-a2")
    with pytest.raises(KeyError, match="ambiguous") as info:
        store.resolve_run("run-a")
    assert "run-a1" in str(info.value)
    assert "run-a2" in str(info.value)


def test_full_id_wins_over_longer_ids_it_prefixes(store: Store) -> None:
    _create(store, "abc", "abcd", "abce")
    assert store.resolve_run("abc") == "abc"


def test_latest_on_empty_store(store: Store) -> None:
    with pytest.raises(KeyError):
        store.resolve_run("latest")


def test_prefix_is_literal(store: Store) -> None:
    _create(store, "exp_1", "expA1")
    assert store.resolve_run("exp_") == "exp_1"


# --- scores --------------------------------------------------------------------------------------


def score(sample_id: str, repeat: int = 0, **kw: object) -> Score:
    fields: dict[str, object] = {
        "model": "first",
        "sample_id": sample_id,
        "repeat": repeat,
        "key": f"{sample_id}:{repeat}",
        "stage": "mark",
        "prediction": 0,
        "prediction_text": "red",
        "correct": True,
        "format_hit": True,
        "gold": 0,
        "gold_text": "red",
        "metadata": {"subtask": "color", "level": 3},
    }
    fields.update(kw)
    return Score.model_validate(fields)


def test_scores_round_trip(store: Store) -> None:
    put(store, ok("a:0", "(A)"), err("b:0"))
    req_a = request("a:0")
    scores = [
        score("a"),
        score(
            "b",
            stage="error",
            prediction=None,
            prediction_text=None,
            correct=None,
            format_hit=False,
            error_type="timeout",
        ),
        score(
            "c",
            stage="unparsed",
            prediction=None,
            prediction_text="no idea",
            correct=False,
            format_hit=False,
            gold=["a ball", "ball"],
            gold_text="a ball",
            abstain_offered=True,
        ),
    ]
    _create(store, "r1")
    store.put_scores("r1", scores)
    rows = list(store.iter_score_rows("r1"))
    assert [r["sample_id"] for r in rows] == ["a", "b", "c"]
    a, b, c = rows
    assert a["prompt"] == req_a.prompt
    assert a["text"] == "(A)"
    assert a["correct"] is True
    assert a["format_hit"] is True
    assert a["prediction"] == 0
    assert a["gold"] == 0
    assert a["metadata"] == {"subtask": "color", "level": 3}
    assert a["latency_s"] == 0.5
    assert b["correct"] is None
    assert b["stage"] == "error"
    assert b["error_type"] == "timeout"
    assert b["error_message"] == "timeout happened"
    assert b["text"] is None
    assert c["prompt"] is None  # no stored response: the score row is still exported
    assert c["correct"] is False
    assert c["gold"] == ["a ball", "ball"]
    assert c["abstain_offered"] is True
    assert c["abstained"] is False


def test_rescoring_replaces_rows(store: Store) -> None:
    _create(store, "r1")
    store.put_scores("r1", [score("a"), score("a", repeat=1)])
    store.put_scores("r1", [score("a", correct=False, prediction=1, prediction_text="blue")])
    rows = list(store.iter_score_rows("r1"))
    assert [(r["sample_id"], r["repeat"], r["correct"]) for r in rows] == [
        ("a", 0, False),
        ("a", 1, True),
    ]


def test_scores_are_per_run(store: Store) -> None:
    _create(store, "r1", "r2")
    store.put_scores("r1", [score("a")])
    store.put_scores("r2", [score("b"), score("c")])
    assert [r["sample_id"] for r in store.iter_score_rows("r1")] == ["a"]
    assert [r["sample_id"] for r in store.iter_score_rows("r2")] == ["b", "c"]
    assert list(store.iter_score_rows("r3")) == []


def test_loglikelihoods_joined_into_score_rows(store: Store) -> None:
    resp = Response(key="a:0", loglikelihoods=[-1.0, -2.5], token_counts=[1, 1])
    store.put_responses("first", [request("a:0", likelihood=True)], [resp])
    _create(store, "r1")
    store.put_scores("r1", [score("a", stage="likelihood")])
    (row,) = store.iter_score_rows("r1")
    assert row["loglikelihoods"] == [-1.0, -2.5]


# --- background checkpoint -----------------------------------------------------------------------


def _stored_in_database_file(path: Path, copy: Path) -> int:
    """Responses in the database file alone, as if its write-ahead log were lost."""
    shutil.copyfile(path, copy)
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "responses" not in tables:  # even the tables are still only in the log
            return 0
        return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_background_checkpoint_copies_the_log_and_keeps_data(tmp_db: Path) -> None:
    copy = tmp_db.with_name("copy.db")
    with Store(tmp_db) as store:
        put(store, *[ok(f"k{i}", text=f"({i})") for i in range(200)])
        assert _stored_in_database_file(tmp_db, copy) == 0  # still only in the log
        with store.checkpoint_in_background():
            pass  # the caller's work would go here
        assert _stored_in_database_file(tmp_db, copy) == 200
        assert len(store.get_responses([f"k{i}" for i in range(200)])) == 200
    with Store(tmp_db) as again:
        assert again.get_responses(["k7"])["k7"].text == "(7)"


def test_background_checkpoint_never_fails_the_caller(tmp_db: Path) -> None:
    with Store(tmp_db) as store:
        put(store, ok("a"))
        blocker = sqlite3.connect(tmp_db, isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")  # the checkpoint cannot get the database
        try:
            with store.checkpoint_in_background():
                pass
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert store.get_responses(["a"])["a"].text == "(A)"


def test_background_checkpoint_finds_its_file_after_a_change_of_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Store("runs/lmmprobe.db") as store:
        put(store, ok("a"))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        with store.checkpoint_in_background():
            pass
        assert not (elsewhere / "runs").exists()
        assert _stored_in_database_file(tmp_path / "runs/lmmprobe.db", tmp_path / "copy.db") == 1


# --- recorded specs ------------------------------------------------------------------------------


def test_every_writer_records_each_spec_as_redact_spec_does(store: Store) -> None:
    # A store works each spec's recorded form out once (`Store.recorded_spec`), not per row:
    # checked here against the plain call, for more specs than it keeps, each written twice.
    from lmmprobe._secrets import redact_spec
    from lmmprobe.schema import Judgement

    secret = "hunter2-s3cr3t-pw"
    specs = [f"openai:m{i}@http://u:{secret}@127.0.0.1:1/v1,key_env=K{i}" for i in range(300)]
    specs += ["first", f"vllm:some/model,args=--api-key {secret}"]
    store.create_run("r", {}, "/tmp")
    for _ in range(2):
        for i, spec in enumerate(specs):
            store.put_responses(spec, [request(f"k{i}")], [ok(f"k{i}")])
    store.put_scores("r", [score(f"s{i}", model=spec) for i, spec in enumerate(specs)])
    verdict = {"protocol": "p", "version": "1", "decided_by": "judge"}
    judgements = [("s0", 0, Judgement.model_validate({**verdict, "judge": j})) for j in specs]
    store.put_judgements("r", specs[0], judgements)
    expected = {redact_spec(s) for s in specs}
    assert len(expected) == len(specs) and not any(secret in s for s in expected)
    for sql in (
        "SELECT model FROM responses",
        "SELECT model FROM scores",
        "SELECT judge FROM judgements",
    ):
        assert {m for (m,) in store.conn.execute(sql)} == expected, sql
