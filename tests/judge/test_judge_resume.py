"""Judging a stored run, resuming after SIGKILL while judging, images to the judge, and Ray.

The judge is the fake OpenAI server (in this process) and lmmprobe the console script; the
server counts what it receives, so "no stored judge call asked again" is checked by counting.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.choice_rows import CHOICE_ASK, choice_rows, unsure_answers
from tests.console import lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer

N = 24


def _model(out: Path) -> dict[str, Any]:
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    result: dict[str, Any] = model
    return result


def _judge_rows(db: Path, judge: str) -> int | None:
    """The judge's stored answers, or None while the store is not readable yet.

    The run creates the file before its tables, so a poll can land between the two ("no
    such table"), or while the run holds the lock that creates them ("locked"). Read-only,
    so a poll never creates the file itself; closed at once, so it holds no lock on it.
    """
    if not db.exists():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as c:
            (n,) = c.execute(
                "SELECT COUNT(*) FROM responses WHERE model = ? AND error_type IS NULL", (judge,)
            ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc) or "locked" in str(exc):
            return None
        raise
    return int(n)


def _stored_judge_rows(db: Path, judge: str) -> int:
    """The judge's stored answers once the store is readable (waits up to a minute)."""
    deadline = time.monotonic() + 60
    while (n := _judge_rows(db, judge)) is None:
        assert time.monotonic() < deadline, f"the store {db} never became readable"
        time.sleep(0.02)
    return n


def test_judge_a_stored_run_without_asking_the_model(tmp_path: Path) -> None:
    data, answers = choice_rows(tmp_path / "rows.jsonl", 6), unsure_answers(6)
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *answers]) as server:
        url = server.base_url
        first = lmmprobe_with_key(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", db,
            "--out", tmp_path / "o1",
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        run_id = json.loads((tmp_path / "o1" / "results.json").read_text())["run_id"]
        assert "judge" not in _model(tmp_path / "o1")
        server.reset_stats()
        judged = lmmprobe_with_key(
            "judge", run_id, "--db", db, "--judge", f"openai:judge@{url}", "-q",
            "--out", tmp_path / "o2",
        )  # fmt: skip
        assert judged.returncode == 0, judged.stderr
        # Only the judge was asked: one call per answer the rules could not read.
        assert server.requests_total == 6
    model = _model(tmp_path / "o2")
    assert model["judge"]["decided"] == {"rule": 0, "judge": 6, "unjudged": 0}
    assert model["metrics"]["judge_score"]["value"] == pytest.approx(1.0)
    assert model["stats"]["called"] == 0
    assert f"judging run {run_id}" in judged.stdout
    missing = lmmprobe_with_key("judge", run_id, "--db", db)
    assert missing.returncode == 2 and "--judge SPEC" in missing.stderr


def test_sigkill_while_judging_then_resume_asks_no_stored_judge_call_again(
    tmp_path: Path,
) -> None:
    data, answers = choice_rows(tmp_path / "rows.jsonl", N), unsure_answers(N)
    db = tmp_path / "db"
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "!slow=0.15:A"), *answers]) as server:
        url = server.base_url
        judge = f"openai:judge@{url}"
        args = [exe, "run", "-m", f"openai:fake-vlm@{url}", "--data", str(data), "-q",
                "--db", str(db), "--judge", judge]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "test-key"}
        proc = subprocess.Popen([*args, "--out", str(tmp_path / "o1")], env=env)
        deadline = time.monotonic() + 120
        while (n := _judge_rows(db, judge)) is None or n < 4:
            assert proc.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "judging made no progress"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        stored = _stored_judge_rows(db, judge)
        assert 4 <= stored < N, stored
        server.reset_stats()
        again = subprocess.run([*args, "--out", str(tmp_path / "o2")], env=env, timeout=300)
        assert again.returncode == 0
        # Every model answer and every stored judge reply came from the store: the judge was
        # asked exactly about the answers it had not been stored for.
        assert server.requests_total == N - stored
    model = _model(tmp_path / "o2")
    assert model["judge"]["calls"][judge] == {
        "requests": N, "verdicts": N, "cached": stored, "called": N - stored, "errors": 0,
        "read": N, "unjudged": {}, "cost": None,
    }  # fmt: skip
    assert model["judge"]["decided"] == {"rule": 0, "judge": N, "unjudged": 0}


def test_judge_sees_the_image_when_asked(tmp_path: Path) -> None:
    image = tmp_path / "red.png"
    Image.new("RGB", (32, 32), (220, 20, 20)).save(image)
    row = {"id": "i1", "images": [str(image)], "question": "Which animal is pictured?",
           "choices": ["cat", "dog"], "answer": 0}  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n")
    table = [(CHOICE_ASK, "A"), ("Which animal is pictured?", "the cute one")]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        for name, extra in (("blind", ()), ("sees", ("--judge-sees-image",))):
            server.reset_stats()
            proc = lmmprobe_with_key("run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q",
                                     "--db", tmp_path / "db", "--out", tmp_path / name,
                                     "--judge", f"openai:judge@{url}", *extra)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            # The second time the model's answer comes from the store and only the judge is
            # asked (the image is part of its key): its request carried the one picture.
            assert server.requests_total == (2 if name == "blind" else 1)
            assert len(server.received_images) == 1
    assert _model(tmp_path / "sees")["judge"]["decided"]["judge"] == 1


@pytest.mark.slow
def test_judging_on_a_local_ray_instance(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    data, answers = choice_rows(tmp_path / "rows.jsonl", 8), unsure_answers(8)
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["OPENAI_API_KEY"] = "test-key"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "B"), *answers]) as server:
        url = server.base_url
        proc = subprocess.run(
            [exe, "run", "-m", f"openai:fake-vlm@{url}", "--data", str(data), "-q",
             "--db", str(tmp_path / "db"), "--out", str(tmp_path / "o"),
             "--judge", f"openai:judge@{url}", "--executor", "ray", "--replicas", "1",
             "--cpus-per-replica", "0.5"],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 8 + 8
    model = _model(tmp_path / "o")
    assert model["judge"]["decided"] == {"rule": 0, "judge": 8, "unjudged": 0}
    assert model["metrics"]["judge_score"]["value"] == pytest.approx(0.0)
