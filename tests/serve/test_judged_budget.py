"""A judged run's sample page tells its budget errors as its source run's (re-test 20 #18).

A run made by ``lmmprobe judge`` holds its source's rows as recorded; their budget errors read
``($6.0000 spent by this run); re-run to continue``, the source's words: the judged run spent
nothing on them and judging again answers none. The page names the source and says to resume it.
"""

from __future__ import annotations

from pathlib import Path

from tests.serve.conftest import Row, client, write_run

from lmmprobe.schema import Request, Response, Sample
from lmmprobe.store import Store

STORED = "cost budget of $4 reached ($6.0000 spent by this run); re-run to continue"


def _store(tmp_path: Path, manifest: dict[str, object]) -> Path:
    db = tmp_path / "j.db"
    sample = Sample(id="s1", question="Q", choices=["x", "y"], answer=0)
    with Store(db) as store:
        write_run(store, "j", ["m"], [sample], [Row("m", sample, None, None, None, error="budget")])
        key = "j-m-s1"
        request = Request(key=key, sample_id="s1", method="generate", messages=[], prompt="P")
        error = {"type": "budget", "message": STORED, "retryable": True}
        store.put_responses("m", [request], [Response(key=key, error=error)])  # type: ignore[arg-type]
        store.update_run("j", manifest={"data": {"fingerprint": "fp", "samples": 1}, **manifest})
    return db


def test_a_judged_runs_budget_error_names_its_source_run(tmp_path: Path) -> None:
    with client(_store(tmp_path, {"judged_from": "SRC-1"})) as c:
        page = c.get("/runs/j/samples/s1").text
        api = c.get("/api/runs/j/samples/s1").json()
    said = (
        "cost budget of $4 reached ($6.0000 spent by run SRC-1); resume run SRC-1 with the "
        "command that started it to answer these, then judge its new run"
    )
    assert said in page and "spent by this run" not in page
    assert api["answers"][0]["error_message"] == said


def test_a_runs_own_budget_error_is_shown_as_stored(tmp_path: Path) -> None:
    with client(_store(tmp_path, {})) as c:
        assert STORED in c.get("/runs/j/samples/s1").text
