"""The judges of a run, named where a person reads the run: serve's run page, the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

from tests.serve.conftest import client

import lmmprobe
from lmmprobe.report import build_report
from lmmprobe.testing.openai_server import FakeOpenAIServer


def _judged_run(tmp_path: Path) -> tuple[Path, str, Path, str]:
    rows = [{"id": f"j{i}", "images": [], "question": f"Pick for j{i}<b>?", "choices": ["x", "y"],
             "answer": 0} for i in range(3)]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = [("Say which option the answer chose", "A")] + [
        (f"Pick for j{i}<b>?", "hmm, not sure") for i in range(3)
    ]
    with FakeOpenAIServer(reply_table=table) as server:
        judge = f"openai:judge<x>@{server.base_url}"
        ev = lmmprobe.evaluate(
            models=[f"openai:fake-vlm@{server.base_url}"], data=str(data),
            db=str(tmp_path / "db"), out=str(tmp_path / "o"), bootstrap=0,
            judge={"judges": [judge]},
        )  # fmt: skip
    return tmp_path / "db", ev.run_id, ev.results_json, judge


def test_run_page_and_report_name_the_judge_and_protocol_version(tmp_path: Path) -> None:
    db, run_id, results_json, _ = _judged_run(tmp_path)
    with client(db) as c:
        page = c.get(f"/runs/{run_id}").text
    assert 'id="judges"' in page
    assert 'lmmprobe-choice</span> version <span class="mono">2</span>' in page
    assert "judge&lt;x&gt;" in page and "judge<x>" not in page  # escaped
    html = build_report([run_id], db=db)
    assert "judged by openai:judge&lt;x&gt;" in html and "lmmprobe-choice version 2" in html
    md = results_json.with_name("results.md").read_text()
    assert "## Judges" in md and "lmmprobe-choice (version 2)" in md
