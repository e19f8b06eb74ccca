"""What a new user meets first with ``lmmprobe run`` (issue 34, walkthrough #7, #8, #9).

A dry run needs no API key; a run with several wrong inputs names them all at once; a run a
budget stopped exits 3, so a CI job sees it. Each test runs the real console script.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.testing.openai_server import FakeOpenAIServer

HOSTED = "openai:gpt-4o@https://api.example.invalid/v1,price=2.5:10"
"""An OpenAI-compatible model on a server that is not local: it needs a key to be asked."""

NO_SUCH_MODEL = "hf:/nonexistent/model"


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _runs(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_a_dry_run_needs_no_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Walkthrough #7: `run -m openai:MODEL@URL --dry-run` stopped on "no API key" although a
    # dry run sends nothing.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "db"
    dry = lmmprobe("run", "-m", HOSTED, "--limit", "3", "--db", db, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    out = " ".join(dry.stdout.split())
    assert f"{HOSTED}: 3 request(s) to send of 3" in out
    assert "a real run needs $OPENAI_API_KEY" in out
    assert "nothing was sent and no run was recorded" in out
    assert dry.stderr == ""
    # A judge with no key is planned the same way.
    judged = lmmprobe(
        "run", "-m", "random", "--limit", "2", "--db", db, "--dry-run",
        "--judge", "openai:gpt-4o-mini@https://api.example.invalid/v1",
    )  # fmt: skip
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "judge openai:gpt-4o-mini@" in judged.stdout
    assert "a real run needs $OPENAI_API_KEY" in " ".join(judged.stdout.split())
    # A real run still needs the key, and says so before anything is recorded.
    real = lmmprobe("run", "-m", HOSTED, "--limit", "3", "--db", db)
    assert real.returncode == 2
    assert _errors(real.stderr) == [
        "error: no API key: set the environment variable OPENAI_API_KEY (or name another with "
        "key_env=VAR)"
    ]
    assert _runs(db) == 0


@pytest.mark.parametrize("dry_run", [False, True])
def test_every_wrong_input_is_named_at_once(tmp_path: Path, dry_run: bool) -> None:
    # Walkthrough #8: a missing model and missing data were named one at a time (fix one,
    # run again, see the next).
    db = tmp_path / "db"
    args: list[str | Path] = [
        "run", "-m", NO_SUCH_MODEL, "-m", "nosuchbackend:x", "-m", "random",
        "--data", tmp_path / "missing.jsonl", "--db", db,
    ]  # fmt: skip
    proc = lmmprobe(*args, *(["--dry-run"] if dry_run else []))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = _errors(proc.stderr)
    assert len(errors) == 3, proc.stderr
    assert errors[0].startswith(f"error: {NO_SUCH_MODEL}: no such folder")
    assert errors[1].startswith("error: unknown model backend 'nosuchbackend'")
    assert errors[2] == f"error: data file not found: {tmp_path / 'missing.jsonl'}"
    assert _runs(db) == 0


def test_an_unknown_benchmark_and_a_missing_key_are_named_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proc = lmmprobe("run", "-m", HOSTED, "--data", "nosuchbench", "--db", tmp_path / "db")
    assert proc.returncode == 2
    errors = _errors(proc.stderr)
    assert len(errors) == 2, proc.stderr
    assert "no API key" in errors[0] and "OPENAI_API_KEY" in errors[0]
    assert errors[1].startswith("error: unknown data source 'nosuchbench'")


def test_one_wrong_input_is_one_line_as_before(tmp_path: Path) -> None:
    proc = lmmprobe("run", "--data", tmp_path / "missing.jsonl", "--db", tmp_path / "db")
    assert proc.returncode == 2
    assert _errors(proc.stderr) == [f"error: data file not found: {tmp_path / 'missing.jsonl'}"]


def test_a_run_stopped_by_its_budget_exits_3(tmp_path: Path) -> None:
    # Walkthrough #9: a run --max-cost stopped (status stopped_budget) exited 0, so a CI job
    # could not tell it from a complete one.
    usage = {"prompt_tokens": 0, "completion_tokens": 1, "total_tokens": 1}  # $2 a call
    db = tmp_path / "db"
    with FakeOpenAIServer(usage=usage) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:2000000,max_concurrency=1"
        args = ("run", "-m", model, "--data", "demo,n=6", "-q", "--db", db)
        stopped = lmmprobe(*args, "--max-cost", "3", "--out", tmp_path / "a")
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        assert "run stopped: a budget ran out" in " ".join(stopped.stdout.split())
        results = json.loads((tmp_path / "a" / "results.json").read_text())
        assert results["status"] == "stopped_budget"
        # The same command with no limit finishes the run: exit 0.
        rest = lmmprobe(*args, "--max-cost", "none", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stdout + rest.stderr
    assert json.loads((tmp_path / "b" / "results.json").read_text())["status"] == "complete"
