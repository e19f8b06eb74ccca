"""A runs page reads its page, not every run of the store (re-test 11 #19).

Over 100,000 runs each ``/api/runs`` took 4 s and serve 757 MB: the list was sorted by
``created_at`` with no index, so SQLite read every run (spec, manifest and results) to sort
it, and parallel pages failed with a MemoryError as a 500. Schema 13 indexes runs newest
first; the page's queries are checked here by what they do (their plans and their number),
over a store of a couple of thousand runs made through the Store API, never by their time.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from lmmprobe.serve.app import create_app
from lmmprobe.serve.runs import RUNS_PAGE
from lmmprobe.store import Store

RUNS = 1_500
_RESULTS = {"models": {"random": {"metrics": {"accuracy": {"value": 0.5, "n": 3}}}}}


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of `RUNS` finished runs, each with about 5 KB of results, as a busy CI's."""
    folder = tmp_path_factory.mktemp("many-runs")
    db = folder / "db.sqlite"
    with Store(db) as store:
        for i in range(RUNS):
            run_id = f"run-{i:05d}"
            store.create_run(run_id, {"models": ["random"], "data": "demo,n=3"}, str(folder / "o"))
            store.update_run(run_id, status="complete", results={**_RESULTS, "pad": "x" * 5000})
    return db


def _traced(app_client: TestClient) -> list[str]:
    """The SQL of every statement the app's read connections run from now on."""
    statements: list[str] = []
    readers = app_client.app.state.readers  # type: ignore[attr-defined]
    opened = readers._open

    def open_traced() -> sqlite3.Connection:
        conn = opened()
        conn.set_trace_callback(statements.append)
        return conn

    readers._open = open_traced
    return statements


@pytest.mark.parametrize("path", ["/api/runs", f"/api/runs?offset={RUNS - 10}", "/"])
def test_a_runs_page_sorts_no_run_and_reads_its_page_in_a_few_queries(
    many: Path, path: str
) -> None:
    with TestClient(create_app(many), base_url="http://127.0.0.1") as client:
        statements = _traced(client)
        response = client.get(path)
        assert response.status_code == 200, response.text[-2000:]
    if path.startswith("/api/"):
        body = response.json()
        assert body["total"] == RUNS
        offset = body["offset"]
        assert [r["id"] for r in body["runs"]] == [
            f"run-{i:05d}"
            for i in range(RUNS - 1 - offset, max(-1, RUNS - 1 - offset - RUNS_PAGE), -1)
        ]
    # A handful of queries for the page, however many runs the store holds.
    on_runs = [s for s in statements if " runs" in s and not s.startswith("PRAGMA")]
    assert 0 < len(on_runs) <= 4, on_runs
    # None of them sorts the runs table in a temporary b-tree: that read every run's columns.
    with sqlite3.connect(many) as conn:
        for statement in on_runs:
            plan = " / ".join(
                str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}")
            )
            assert "TEMP B-TREE" not in plan, (statement, plan)
            assert "SCAN runs" not in plan or "USING" in plan, (statement, plan)


def test_a_store_of_the_old_layout_gets_the_index_when_opened(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    Store(db).close()
    with sqlite3.connect(db) as conn:  # as a store written by schema 12 is
        conn.execute("DROP INDEX runs_newest")
        conn.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    Store(db).close()
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert "runs_newest" in names and version == ("14",)


def test_memory_running_out_in_a_request_is_a_503_try_again_never_a_500(many: Path) -> None:
    # The re-test's parallel pages failed with MemoryError: a 500 and a traceback in the log.
    app = create_app(many)

    def exhausted() -> None:
        raise MemoryError

    app.add_api_route("/api/exhausted", exhausted)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        got = client.get("/api/exhausted")
        page = client.get("/api/exhausted", headers={"Accept": "text/html"})
    assert got.status_code == 503, got.text
    assert "not enough memory" in got.json()["detail"] and "try again" in got.json()["detail"]
    assert got.headers.get("Retry-After")
    assert page.status_code == 503
