"""Faults of an OpenAI-compatible server, against the loopback fake (issue 15, items 10 to 12).

Empty or null completions are typed errors; keys a server echoes never reach the store, the
exports, the results or the terminal; a dead server or a refused key stops the run early with
one line, and a re-run resumes.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

from lmmprobe import evaluate
from lmmprobe.models.api_keys import REDACTED, remember_secret, scrub_secrets
from lmmprobe.run import AuthenticationFailed, ServerUnreachable
from lmmprobe.store import Store
from lmmprobe.testing import FakeOpenAIServer, FaultPlan

FAST = "max_attempts=4,backoff=0.01,max_backoff=0.05"


def spec_for(url: str, extra: str = "") -> str:
    """The fake server's spec with fast retries; `extra` options replace the fast ones they
    name (a spec gives each option once)."""
    options = dict(o.split("=", 1) for o in FAST.split(","))
    options.update(o.split("=", 1) for o in extra.split(",") if o)
    return f"openai:fake-vlm@{url}," + ",".join(f"{k}={v}" for k, v in options.items())


def free_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lmmprobe(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


def _stored(db: Path) -> list[tuple[str | None, str | None, str | None]]:
    with sqlite3.connect(db) as c:
        return list(c.execute("SELECT text, error_type, error_message FROM responses"))


def _run_status(db: Path, run_id: str) -> str:
    with Store(db) as store:
        return str(store.get_run(run_id)["status"])


# ------------------------------------------------------------------ 10: empty or null content


@pytest.mark.parametrize("kind", ["empty_content", "null_content"])
def test_empty_or_null_content_is_a_typed_error_then_resume_answers(tmp_path, kind):
    db, n = tmp_path / "db", 6
    with FakeOpenAIServer(always=kind) as server:
        url, port = server.base_url, int(server.base_url.split(":")[2].split("/")[0])
        model = spec_for(url)
        first = evaluate(models=[model], data=f"demo,n={n}", db=str(db), out=str(tmp_path / "a"))
        assert server.requests_total == 2 * n  # one more try within the run, not six
    m = first.results.models[model]
    assert m.metrics["error_rate"].value == 1.0
    assert m.metrics["accuracy"].value is None  # not scored wrong: not scored at all
    assert m.stats.errors == n
    rows = _stored(db)
    assert len(rows) == n
    assert all(text is None and etype == "empty_response" for text, etype, _ in rows)
    word = "empty" if kind == "empty_content" else "null"
    assert all(f"returned {word} content" in (msg or "") for *_, msg in rows)
    assert first.results.status == "complete_with_errors"

    # The same URL answering properly: every stored empty response is asked again.
    with FakeOpenAIServer(port=port) as server:
        second = evaluate(models=[model], data=f"demo,n={n}", db=str(db), out=str(tmp_path / "b"))
        assert server.requests_total == n
    assert second.results.status == "complete"
    assert second.results.models[model].metrics["error_rate"].value == 0.0


def test_empty_content_once_is_retried_within_the_run(tmp_path):
    faults = FaultPlan(rate=1.0, kinds=("empty_content", "null_content"), max_per_request=1)
    with FakeOpenAIServer(faults=faults) as server:
        model = spec_for(server.base_url)
        ev = evaluate(models=[model], data="demo,n=8", db=str(tmp_path / "db"), out=str(tmp_path))
        assert sum(server.faults_injected.values()) == 8
    assert ev.results.models[model].metrics["error_rate"].value == 0.0
    assert all(text for text, _, _ in _stored(tmp_path / "db"))


def test_whitespace_only_content_is_empty_too(tmp_path):
    with FakeOpenAIServer(replies=["  \n "] * 8) as server:
        model = spec_for(server.base_url, "max_attempts=1")
        ev = evaluate(models=[model], data="demo,n=2", db=str(tmp_path / "db"), out=str(tmp_path))
    assert ev.results.models[model].metrics["error_rate"].value == 1.0
    assert {etype for _, etype, _ in _stored(tmp_path / "db")} == {"empty_response"}


# ------------------------------------------------------------------ 11: keys echoed in errors


def test_scrub_secrets_removes_configured_keys_bearer_tokens_and_key_shapes():
    remember_secret("plain-configured-key-0123")
    text = (
        "Incorrect API key provided: Bearer abc.def-123; also sk-proj-AbCdEf0123456789 and "
        "plain-configured-key-0123 but not sk-learn or task-12"
    )
    out = scrub_secrets(text)
    for secret in ("abc.def-123", "sk-proj-AbCdEf0123456789", "plain-configured-key-0123"):
        assert secret not in out
    assert out.count(REDACTED) == 3
    assert "sk-learn" in out and "task-12" in out and out.startswith("Incorrect API key provided")
    # A configured key in its Bearer form is replaced once, not mangled twice.
    assert scrub_secrets("got Bearer plain-configured-key-0123.") == f"got Bearer {REDACTED}."


def _assert_nowhere(secret: str, tmp_path: Path, *texts: str) -> None:
    for text in texts:
        assert secret not in text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def test_key_echoed_by_the_server_is_in_no_file_and_no_output(tmp_path):
    # Not shaped like a key, and echoed without "Bearer": only the configured key's own
    # scrubbing can catch it.
    secret = "PlainSecret-7f3a9c2e51d04b68"
    db, out = tmp_path / "store.db", tmp_path / "results"
    with FakeOpenAIServer(api_key=secret, echo_key=True, always="bad_request") as server:
        run = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=4",
            "--db", str(db), "--out", str(out), "-q",
            env={"OPENAI_API_KEY": secret},
        )  # fmt: skip
        assert any(secret in a for a in server.seen_authorization)  # it was sent...
    assert "Traceback" not in run.stderr  # every request failed: the exit status may say so
    assert (out / "results.json").exists()
    export = _lmmprobe("export", "latest", "--db", str(db), env={})
    assert export.returncode == 0, export.stderr
    assert REDACTED in export.stdout and "injected bad_request" in export.stdout
    _assert_nowhere(secret, tmp_path, run.stdout, run.stderr, export.stdout, export.stderr)


def test_wrong_key_echoed_in_401_is_in_no_file_and_no_output(tmp_path):
    wrong = "sk-proj-WRONGwrong0123456789abcdef"
    db = tmp_path / "store.db"
    with FakeOpenAIServer(api_key="sk-the-right-one-0000000000", echo_key=True) as server:
        run = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=12",
            "--db", str(db), "--out", str(tmp_path / "results"), "-q",
            env={"OPENAI_API_KEY": wrong},
        )  # fmt: skip
    assert run.returncode != 0
    rows = _stored(db)
    assert rows and {etype for _, etype, _ in rows} == {"auth"}
    assert all(f"Bearer {REDACTED};" in (msg or "") for *_, msg in rows)
    export = _lmmprobe("export", "latest", "--db", str(db), env={})
    _assert_nowhere(wrong, tmp_path, run.stdout, run.stderr, export.stdout, export.stderr)


# ------------------------------------------------------------------ 12: dead server, refused key


def test_dead_server_stops_the_run_early_then_resume_completes(tmp_path):
    db, n = tmp_path / "db", 118
    with FakeOpenAIServer(always="disconnect") as server:
        url, port = server.base_url, int(server.base_url.split(":")[2].split("/")[0])
        model = spec_for(url, "max_attempts=6")
        with pytest.raises(ServerUnreachable) as info:
            evaluate(models=[model], data=f"demo,n={n}", db=str(db), out=str(tmp_path / "a"))
        # Six attempts per request would be 708; stopping after 20 failures in a row costs
        # fewer attempts than there are requests.
        assert server.requests_total < n
    message = str(info.value)
    assert url in message and "check that the server is running" in message
    assert "\n" not in message
    assert info.value.run_id is not None
    assert _run_status(db, info.value.run_id) == "stopped_unreachable"
    rows = _stored(db)
    assert len(rows) < n  # requests never answered are not stored...
    assert all(text is None and etype in ("connection", "unreachable") for text, etype, _ in rows)

    with FakeOpenAIServer(port=port) as server:  # ...and the same URL, back up, answers them all
        ev = evaluate(models=[model], data=f"demo,n={n}", db=str(db), out=str(tmp_path / "b"))
        assert server.requests_total == n
    assert ev.results.status == "complete"
    assert ev.results.models[model].metrics["error_rate"].value == 0.0


def test_scattered_disconnects_do_not_stop_a_live_server(tmp_path):
    faults = FaultPlan(rate=0.3, kinds=("disconnect",), max_per_request=2, seed=5)
    with FakeOpenAIServer(faults=faults) as server:
        model = spec_for(server.base_url, "unreachable_after=5")
        ev = evaluate(models=[model], data="demo,n=40", db=str(tmp_path / "db"), out=str(tmp_path))
        assert server.faults_injected.get("disconnect", 0) > 0
    assert ev.results.status == "complete"
    assert ev.results.models[model].metrics["error_rate"].value == 0.0


def test_dead_url_through_the_cli_is_one_line_and_non_zero(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    run = _lmmprobe(
        "run", "-m", f"openai:fake-vlm@{url}", "--data", "demo,n=60",
        "--db", str(tmp_path / "db"), "--out", str(tmp_path / "o"), "-q",
        env={"OPENAI_API_KEY": "unused-key"},
    )  # fmt: skip
    assert run.returncode == 1  # stopped on the way, not bad input
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if "cannot reach" in line]
    assert len(lines) == 1 and url in lines[0] and "server is running" in lines[0]
    assert "status stopped_unreachable); the same command resumes it" in lines[0]
    with sqlite3.connect(tmp_path / "db") as c:
        assert c.execute("SELECT status FROM runs").fetchone()[0] == "stopped_unreachable"


def test_refused_key_stops_the_run_early_and_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("LMMPROBE_FAULT_KEY", "not-the-right-key-123")
    db, n = tmp_path / "db", 60
    with FakeOpenAIServer(api_key="the-right-key-456") as server:
        model = spec_for(server.base_url, "key_env=LMMPROBE_FAULT_KEY,max_concurrency=2")
        with pytest.raises(AuthenticationFailed) as info:
            evaluate(models=[model], data=f"demo,n={n}", db=str(db), out=str(tmp_path / "a"))
        assert server.requests_total < n
    assert "LMMPROBE_FAULT_KEY" in str(info.value) and "401" in str(info.value)
    assert info.value.run_id is not None
    assert _run_status(db, info.value.run_id) == "stopped_auth"
    assert {etype for _, etype, _ in _stored(db)} == {"auth"}


def test_refused_key_through_the_cli_exits_non_zero(tmp_path):
    with FakeOpenAIServer(api_key="the-right-key-456") as server:
        run = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=30",
            "--db", str(tmp_path / "db"), "--out", str(tmp_path / "o"), "-q",
            env={"OPENAI_API_KEY": "not-the-right-key-123"},
        )  # fmt: skip
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert "OPENAI_API_KEY" in run.stderr and "authentication" in run.stderr


@pytest.mark.parametrize(
    ("used", "advice"),
    [
        (32, "raise --max-new-tokens (this request: 32)"),
        (10, "after 10 of the 32 tokens asked for: the server's own limit (its context length) "
             "stopped it, not --max-new-tokens"),
    ],
)  # fmt: skip
def test_an_empty_reply_cut_off_by_a_token_limit_names_the_limit_that_stopped_it(
    tmp_path, used, advice
):
    # It always said "raise --max-new-tokens", even where the server stopped the reply after
    # 10 of the 32 tokens the run allowed, so raising it would change nothing.
    usage = {"prompt_tokens": 5, "completion_tokens": used, "total_tokens": 5 + used}
    reply = {"content": "", "finish_reason": "length"}
    with FakeOpenAIServer(replies=[reply] * 4, usage=usage) as server:
        model = spec_for(server.base_url, "max_attempts=1")
        # The run asks for at most 32 new tokens (the default).
        evaluate(models=[model], data="demo,n=2", db=str(tmp_path / "db"), out=str(tmp_path))
    messages = {msg for _, etype, msg in _stored(tmp_path / "db") if etype == "empty_response"}
    assert messages, messages
    assert all(advice in (msg or "") for msg in messages), messages
    if used < 32:
        assert not any("raise --max-new-tokens" in (msg or "") for msg in messages)
