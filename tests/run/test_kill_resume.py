"""SIGKILL a run midway, re-run it, and check nothing stored was asked again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(__file__).with_name("kill_target.py")


def _run(db: Path, calls: Path, out: Path, delay: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(TARGET), str(db), str(calls), str(out), str(delay)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def _stored_keys(db: Path) -> set[str]:
    with sqlite3.connect(db) as c:
        return {r[0] for r in c.execute("SELECT key FROM responses")}


def _predictions(out: Path) -> dict:
    res = json.loads((out / "results.json").read_text())
    return res["models"]["slowfake"]["metrics"]


def test_sigkill_then_resume_repeats_no_stored_call_and_matches_uninterrupted(tmp_path):
    db, calls1, calls2 = tmp_path / "run.db", tmp_path / "calls1", tmp_path / "calls2"
    proc = _run(db, calls1, tmp_path / "out1", delay=0.05)
    deadline = time.monotonic() + 60
    while len(_lines(calls1)) < 40:  # midway through 160 requests
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the run did not make progress"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    called_before = _lines(calls1)
    stored = _stored_keys(db)
    assert stored, "nothing was stored before the kill"
    assert stored <= set(called_before)
    # At most the in-flight batch (4 requests) was answered but not stored.
    assert len(set(called_before) - stored) <= 4
    assert not (tmp_path / "out1" / "results.json").exists()

    resumed = _run(db, calls2, tmp_path / "out2", delay=0.0)
    assert resumed.wait(timeout=120) == 0, resumed.stderr.read().decode() if resumed.stderr else ""
    called_after = _lines(calls2)
    assert set(called_after).isdisjoint(stored), "a stored response was requested again"
    assert len(called_after) == len(set(called_after)), "a request was sent twice"
    with sqlite3.connect(db) as c:
        (n_rows,) = c.execute("SELECT COUNT(*) FROM responses").fetchone()
    assert n_rows == len(stored | set(called_after))

    clean = _run(tmp_path / "clean.db", tmp_path / "calls3", tmp_path / "out3", delay=0.0)
    assert clean.wait(timeout=120) == 0
    assert _predictions(tmp_path / "out2") == _predictions(tmp_path / "out3")
    with sqlite3.connect(db) as a, sqlite3.connect(tmp_path / "clean.db") as b:
        q = "SELECT sample_id, repeat, key, prediction, correct FROM scores ORDER BY sample_id, repeat"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
