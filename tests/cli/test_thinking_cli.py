"""Reasoning outputs through ``lmmprobe run`` (issue 25 items 2-4), by the console script.

Answers are stored as a thinking model would have sent them (written straight into the store
after a first run of the ``random`` baseline), then the run is repeated: every answer comes
from the store (no model call) and is read by today's thinking rules. Changing only the
``think=`` option re-reads the same stored text by other rules, again with no model call.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.console import lmmprobe

from lmmprobe.store import Store


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args)


def _run(tmp_path: Path, model: str, name: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / name
    proc = _lmmprobe(
        "run", "--data", "demo,n=8", "-m", model, "--db", tmp_path / "s.db", "--out", out, "-q"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    (model_results,) = results["models"].values()
    return model_results, proc.stdout


def _store_thinking_answers(db: Path, cut_off: int) -> None:
    """Every stored answer becomes thinking with a wrong mark in it, then the gold mark.

    The first `cut_off` rows stop inside their thinking at the token limit instead.
    """
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT key, gold, marks, option_order FROM scores ORDER BY sample_id")
    for i, (key, gold, marks, order) in enumerate(rows.fetchall()):
        marks, order = json.loads(marks), json.loads(order)
        right = marks[order.index(json.loads(gold))]
        trap = next(m for m in marks if m != right)
        thinking = f"<think>The answer is ({trap})? Let me look again at the picture."
        text, finish = (
            (thinking, "length") if i < cut_off else (f"{thinking}</think>\n\n({right})", "stop")
        )
        # Written now, as lmmprobe writes an answer that replaces one (an identical re-run
        # copies the earlier run's rows only while its answers are the ones it scored).
        conn.execute(
            "UPDATE responses SET text = ?, finish_reason = ?, created_at = ? WHERE key = ?",
            (text, finish, time.time(), key),
        )
    conn.commit()
    conn.close()


def test_stored_thinking_answers_are_reread_without_calling_the_model(tmp_path: Path) -> None:
    first, _ = _run(tmp_path, "random", "first")
    assert first["stats"]["called"] == 8
    _store_thinking_answers(tmp_path / "s.db", cut_off=3)

    again, stdout = _run(tmp_path, "random", "again")
    assert (again["stats"]["called"], again["stats"]["cached"]) == (0, 8)
    counts = again["counts"]
    # Marks inside the thinking are never read: every answered row is right.
    assert (counts["correct"], counts["wrong"], counts["truncated"], counts["unparsed"]) == (
        5,
        0,
        3,
        0,
    )
    metrics = again["metrics"]
    assert metrics["accuracy"]["value"] == 5 / 8
    assert metrics["truncated_rate"]["value"] == 3 / 8 and metrics["unparsed_rate"]["value"] == 0
    # The summary names the cut-off answers and the option that gives them room.
    said = " ".join(stdout.split())  # the note is prose, wrapped between words at the width
    assert "3 of 8 answers truncated" in said and "--max-new-tokens (this run: 32)" in said
    header = next(line for line in stdout.splitlines() if "unparsed" in line)
    assert header.index("unparsed") < header.index("truncated") < header.index("errors")

    # The export has the raw text and, read from it, the thinking and the answer.
    proc = _lmmprobe("export", "latest", "--db", tmp_path / "s.db")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    cut = [r for r in rows if r["finish_reason"] == "length"]
    done = [r for r in rows if r["finish_reason"] == "stop"]
    assert (len(cut), len(done)) == (3, 5)
    assert all(r["truncated"] and r["answer"] == "" and r["stage"] == "truncated" for r in cut)
    for r in done:
        right = r["marks"][r["order"].index(r["gold"])]
        assert r["text"].startswith("<think>") and r["answer"] == f"({right})"
        assert r["reasoning"].startswith("The answer is (") and "<think>" not in r["reasoning"]

    # `lmmprobe score` re-reads the export's raw text with a matcher by the same rules.
    export = tmp_path / "export.jsonl"
    export.write_text(proc.stdout)
    proc = _lmmprobe("score", export, "--matcher", "lmmprobe", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    rescored = json.loads(proc.stdout)["models"]["random"]
    assert rescored["accuracy"]["value"] == 5 / 8 and rescored["truncated_rate"]["value"] == 3 / 8

    # The HTML report's sample browser carries the thinking and the answer as read apart.
    proc = _lmmprobe("report", "latest", "--db", tmp_path / "s.db", "-o", tmp_path / "r.html")
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "r.html").read_text()
    assert '"thinking","answer"]' in page.replace(" ", "")
    assert "Let me look again at the picture." in page

    # Same stored text, other rules: think=off reads the thinking as answer text. The option is
    # no part of the cache key, so every answer still comes from the store.
    off, _ = _run(tmp_path, "random,think=off", "off")
    assert (off["stats"]["called"], off["stats"]["cached"]) == (0, 8)
    assert off["counts"]["truncated"] == 0 and off["counts"]["correct"] == 0
    with Store(tmp_path / "s.db") as store:
        assert store.count_responses() == 8


def test_a_think_value_that_cannot_be_read_is_one_line_before_any_call(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "--data", "demo,n=2", "-m", "random,think=maybe", "--db", tmp_path / "s.db",
        "--out", tmp_path / "o", "-q",
    )  # fmt: skip
    assert proc.returncode != 0
    assert "think='maybe'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o" / "results.json").exists()
