"""One run, one set of counts: terminal, results.json, the report and serve agree (issue 23, item 14).

A run with choice rows (right, wrong, unreadable), captions (with text from the fake server,
empty from the ``first`` baseline) and failed requests is run through the real console script;
every surface must show the same ``rows`` and ``judged`` per model, and an empty caption is
never called "unparsed".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmmprobe.metrics.outcome import count_outcomes
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row
from lmmprobe.testing.openai_server import FakeOpenAIServer, FaultPlan

pytest.importorskip("pycocoevalcap")  # caption rows are scored as a corpus


def _lmmprobe(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, "COLUMNS": "200", "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def _data(tmp_path: Path) -> Path:
    for name, rgb in (("red", (220, 30, 30)), ("blue", (30, 60, 220)), ("green", (30, 160, 50))):
        Image.new("RGB", (16, 16), rgb).save(tmp_path / f"{name}.png")
    rows: list[dict[str, Any]] = []
    for i in range(6):  # the fake names the colour: right on red, wrong on blue
        image = "red" if i % 2 else "blue"
        rows.append({"id": f"q{i}", "images": [f"{image}.png"], "question": f"Which colour is picture {i}?",
                     "choices": ["red", "blue"], "answer": 0})  # fmt: skip
    for i in range(4):  # "green" is no option: unreadable, counted wrong
        rows.append({"id": f"u{i}", "images": ["green.png"], "question": f"Which shape is picture {i}?",
                     "choices": ["square", "circle"], "answer": 1})  # fmt: skip
    for i in range(4):  # captions: no per-answer verdict
        rows.append({"id": f"c{i}", "images": ["red.png"], "question": f"Describe picture {i}.",
                     "formulation": "caption", "answer": ["a red square", "a red image"]})  # fmt: skip
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _headline(stdout: str, label: str) -> tuple[int, int]:
    """``rows`` and ``accuracy n`` of one model's line in the run's headline table."""
    head = next(
        line
        for line in stdout.splitlines()
        if line.split()[:4] == ["model", "rows", "accuracy", "n"]
    )
    assert head
    line = next(line for line in stdout.splitlines() if line.split()[:1] == [label])
    rows, judged = line.split()[1:3]
    return int(rows), int(judged)


def test_terminal_results_report_and_serve_count_alike(tmp_path: Path) -> None:
    data = _data(tmp_path)
    db = tmp_path / "lmmprobe.db"
    plan = FaultPlan(rate=0.25, kinds=("bad_request",), max_per_request=1, seed=3)
    with FakeOpenAIServer(faults=plan) as server:
        fake = f"openai:fake-vlm@{server.base_url}"
        proc = _lmmprobe("run", "-m", fake, "-m", "first", "--data", data, "--db", db,
                         "--out", tmp_path / "o", "--bootstrap", "50")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    run_id = results["run_id"]

    # The one definition, from the stored rows.
    with Store(db) as store:
        scores = [score_from_row(r) for r in store.iter_score_rows(run_id)]
    want = {m: count_outcomes([s for s in scores if s.model == m]) for m in (fake, "first")}
    f, b = want[fake], want["first"]
    # The data really holds every kind of row (else the test proves little).
    assert f.correct and f.wrong and f.unparsed and f.free_text and f.error, f
    assert b.empty == 4 and b.unparsed == 0 and b.free_text == 0, b

    # results.json: the counts, and every metric's n is the count it names.
    for m, c in want.items():
        got = results["models"][m]
        assert got["counts"] == c.to_dict()
        assert got["metrics"]["accuracy"]["n"] == c.judged
        assert got["metrics"]["error_rate"]["n"] == c.rows
        assert got["metrics"]["unparsed_rate"]["value"] == pytest.approx(c.unparsed / c.judged)

    # Terminal: the run's table and `show` give rows and judged.
    for out in (proc.stdout, _lmmprobe("show", run_id, "--db", db).stdout):
        assert _headline(out, "fake-vlm") == (f.rows, f.judged)
        assert _headline(out, "first") == (b.rows, b.judged)
        assert "first: 4 rows not in accuracy (4 free-form/caption with no text)" in out

    # The report: its JSON leaderboard and the HTML table's columns.
    report = _lmmprobe("report", run_id, "--db", db, "-f", "json", "-o", tmp_path / "r.json")
    assert report.returncode == 0, report.stderr
    board = {r["model"]: r for r in json.loads((tmp_path / "r.json").read_text())["leaderboard"]}
    for m, c in want.items():
        assert (board[m]["n"], board[m]["judged"]) == (c.rows, c.judged)
    html = _lmmprobe("report", run_id, "--db", db, "-o", tmp_path / "r.html")
    assert html.returncode == 0, html.stderr
    page = (tmp_path / "r.html").read_text()
    assert re.search(r"<th[^>]*>rows</th><th[^>]*>accuracy n</th>", page)
    assert f'<td class="num">{b.rows}</td><td class="num">{b.judged}</td>' in page
    # The page's sample browser names an empty caption's stage "empty", never "unparsed".
    blob = re.search(
        r'<script type="application/json" id="lmmprobe-data">(.*?)</script>', page, re.S
    )
    assert blob
    browser = json.loads(blob.group(1))["browser"]
    stage = browser["answer_fields"].index("stage")
    captions = [a[stage] for it in browser["items"] if it["id"][0] == "c" for a in it["ans"]]
    assert captions.count("empty") == b.empty and "unparsed" not in captions

    # serve: the run page, the stage filter and the verdict of an empty caption.
    from tests.serve.conftest import client

    with client(db) as c:
        run_page = c.get(f"/runs/{run_id}").text
        assert f'<td class="num">{b.rows}</td><td class="num">{b.judged}</td>' in run_page
        unparsed = c.get(f"/api/runs/{run_id}/samples", params={"stage": "unparsed"}).json()
        assert unparsed["total"] == f.unparsed + b.unparsed
        assert {r["sample_id"][0] for r in unparsed["rows"]} == {"u"}
        caption = c.get(f"/runs/{run_id}/samples/c0").text
        assert "(empty answer)" in caption
        rows_page = c.get(f"/runs/{run_id}/samples", params={"model": "first"}).text
        assert "v-unparsed" not in rows_page and rows_page.count("(empty answer)") == 4
