"""A run writing while the app reads: reads never wait for the writer, and see each commit."""

from __future__ import annotations

from pathlib import Path

from lmmprobe.schema import Request, Response
from lmmprobe.store import Store

from .conftest import Row, choice_sample, client, write_run


def _requests(samples: list, model: str) -> tuple[list[Request], list[Response]]:
    reqs = [
        Request(key=f"k-{model}-{s.id}", sample_id=s.id, method="generate", messages=[], prompt="p")
        for s in samples
    ]
    return reqs, [Response(key=r.key, text="(A)") for r in reqs]


def test_running_run_updates_live_while_the_writer_holds_its_lock(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    samples = [choice_sample(i) for i in range(10)]
    Store(db).close()
    with client(db) as c, Store(db) as writer:
        writer.create_run("live", {"data": "hand", "models": ["m"]}, str(tmp_path / "out"))
        writer.update_run("live", manifest={"data": {"samples": 10, "fingerprint": "f"}})
        writer.put_samples("live", samples)
        (run,) = c.get("/api/runs").json()["runs"]
        assert (run["status"], run["n"], run["asked"]) == ("running", 10, 0)
        assert "live: updating every 3 s" in c.get("/").text
        reqs, resps = _requests(samples[:4], "m")
        writer.put_responses("m", reqs, resps)
        assert c.get("/api/runs").json()["runs"][0]["asked"] == 4
        # The writer holds the write lock with uncommitted rows: every page still answers
        # at once, from the last commit.
        with writer.transaction() as conn:
            conn.execute("UPDATE runs SET status = 'complete' WHERE id = 'live'")
            assert c.get("/api/runs").json()["runs"][0]["status"] == "running"
            assert c.get("/runs/live").status_code == 200
            assert c.get("/runs/live/samples").status_code == 200
            assert c.get("/runs/live/samples/s001").status_code == 200
        assert c.get("/api/runs").json()["runs"][0]["status"] == "complete"


def test_run_page_counts_rows_of_a_run_without_results(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    samples = [choice_sample(i) for i in range(6)]
    rows = [Row("m", s, "(A)", 0, s.answer == 0) for s in samples]
    with Store(db) as store:
        write_run(store, "r", ["m"], samples, rows, finish=False)
        with client(db) as c:
            counts = c.get("/api/runs/r").json()["counts"]
            correct = sum(1 for s in samples if s.answer == 0)
            assert counts == {
                "m": {"rows": 6, "correct": correct, "wrong": 6 - correct, "format_hit": 6,
                      "unparsed": 0, "truncated": 0, "no_verdict": 0, "error": 0}
            }  # fmt: skip
            page = c.get("/runs/r").text
            assert "Rows so far" in page and 'data-live="/api/runs/r"' in page
