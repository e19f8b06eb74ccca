"""A server that fails every request (5xx, or never answers) stops the run early (issue 23, 8).

Such a server used to be retried request by request: hours for a thousand requests at the
defaults. Now the run stops as ``stopped_unhealthy`` after a streak of transient failures with no
success, says so in one line, stores only what was answered, and the same command resumes it
against a healthy server.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

from lmmprobe import evaluate
from lmmprobe.run import AbortPolicy, LocalExecutor, ServerUnhealthy
from lmmprobe.run.executor import DEFAULT_MAX_TRANSIENT_FAILURES
from lmmprobe.schema import ErrorInfo, Response
from lmmprobe.testing import FakeOpenAIServer, FaultPlan

N = 100  # requests in the run: far more than the streak (and its retries) that stops it


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OPENAI_API_KEY": "unhealthy-test-key"},
    )


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _responses(db: Path) -> list[tuple[str | None, str | None]]:
    with sqlite3.connect(db) as c:
        return list(c.execute("SELECT text, error_type FROM responses"))


def _statuses(db: Path) -> list[str]:
    with sqlite3.connect(db) as c:
        return [s for (s,) in c.execute("SELECT status FROM runs ORDER BY created_at")]


@pytest.mark.parametrize(
    ("mode", "options", "error_type"),
    [
        # Every attempt answered with HTTP 500: two attempts per request, quick backoff.
        ("server_error", "max_attempts=2,backoff=0.01,max_backoff=0.02", "transient"),
        # Accepted and never answered: only the client's timeout ends each attempt.
        ("hang", "max_attempts=1,timeout=0.3", "timeout"),
    ],
)
def test_an_unhealthy_server_stops_the_run_in_one_line_then_the_same_command_resumes(
    tmp_path, mode, options, error_type
):
    db, out = tmp_path / "store.db", tmp_path / "out"
    with FakeOpenAIServer(always=mode) as server:
        url = server.base_url
        cmd = (
            "run", "-m", f"openai:fake-vlm@{url},{options}", "--data", f"demo,n={N}",
            "--db", db, "--out", out, "-q",
        )  # fmt: skip
        first = _lmmprobe(*cmd)
        sent = server.requests_total
    assert first.returncode == 1, first.stderr  # stopped on the way, not bad input
    assert "Traceback" not in first.stderr
    lines = [line for line in first.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, first.stderr
    assert "server looks unhealthy" in lines[0] and f"last: {error_type}" in lines[0]
    assert "status stopped_unhealthy); the same command resumes it" in lines[0]
    assert _statuses(db) == ["stopped_unhealthy"]
    # Exactly the streak that stopped it is stored; the requests never sent (or cut off in
    # flight) are not stored as errors, so nothing is counted twice on resume.
    stored = _responses(db)
    assert len(stored) == DEFAULT_MAX_TRANSIENT_FAILURES
    assert all(text is None and etype == error_type for text, etype in stored)
    assert sent < N  # most requests were never sent

    with FakeOpenAIServer(port=_port(url)) as healthy:  # the same URL, working again
        second = _lmmprobe(*cmd)
        assert healthy.requests_total == N  # the stored errors again, and all the others
    assert second.returncode == 0, second.stderr
    assert _statuses(db) == ["stopped_unhealthy", "complete"]
    stored = _responses(db)
    assert len(stored) == N and all(text and etype is None for text, etype in stored)


def test_a_success_between_failures_keeps_a_flaky_server_running():
    # A server failing most requests but answering some is slow, not dead: the run finishes.
    policy = AbortPolicy(max_transient_failures=3)
    fail = Response(key="k", error=ErrorInfo(type="timeout", message="slow", retryable=True))
    ok = Response(key="k", text="(A)")
    other = Response(key="k", error=ErrorInfo(type="bad_request", message="no", retryable=False))
    for _ in range(50):
        policy.check([fail, fail, other, ok])  # other errors neither count nor break a streak
    policy.check([fail, other, fail])
    with pytest.raises(ServerUnhealthy) as info:
        policy.check([other, fail])
    assert info.value.status == "stopped_unhealthy"
    assert "3 requests in a row" in str(info.value)
    never = AbortPolicy(max_transient_failures=0)
    never.check([fail] * 1000)  # 0: the rule is off
    with pytest.raises(ValueError, match="max_transient_failures"):
        LocalExecutor(max_transient_failures=-1)


def test_the_threshold_is_configurable_on_the_executor(tmp_path):
    with FakeOpenAIServer(always="server_error") as server:
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1,max_concurrency=1"
        with pytest.raises(ServerUnhealthy) as info:
            evaluate(
                models=[model], data="demo,n=20", db=str(tmp_path / "db"), out=str(tmp_path),
                executor=LocalExecutor(max_transient_failures=4),
            )  # fmt: skip
        # One at a time: the fourth failure stopped it (the next may have been sent already).
        assert server.requests_total <= 5
    assert "HTTP 500" in str(info.value) and "\n" not in str(info.value)
    assert _statuses(tmp_path / "db") == ["stopped_unhealthy"]
    assert len(_responses(tmp_path / "db")) == 4


def test_a_retry_after_past_what_lmmprobe_waits_is_not_waited_for(tmp_path):
    # Re-test 13 #9: every reply a 429 asking for 1e308 s: each try waited the 120 s cap, five
    # times per request; a judge gave up after 10 minutes advising "a longer timeout".
    db = tmp_path / "store.db"
    plan = FaultPlan(retry_after=1e308)
    with FakeOpenAIServer(always="rate_limit", faults=plan) as server:
        done = _lmmprobe("run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
                         f"demo,n={N}", "--db", db, "--out", tmp_path / "out", "-q")  # fmt: skip
        sent = server.requests_total
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "(the server asks to wait 1e+308 s, more than the 120 s lmmprobe waits" in lines[0]
    assert "check the server's rate limits and quota" in lines[0]
    assert "longer timeout" not in lines[0]
    assert sent < N  # each request asked once, the streak stops the run
    assert all(etype == "rate_limit" for _, etype in _responses(db))
