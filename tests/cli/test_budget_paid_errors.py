"""A reply that states its usage is paid for, even when it cannot be used (issue 34, re-test 11 #6).

A server that bills each reply and then answers with no choices, or with null content, was
asked again and again: the meter never moved ("spent by this run: $0.0000"), so ``--max-cost``
stopped nothing, and the summary counted 5 requests where 15 were sent and paid. Each test runs
the real console script against the fake OpenAI server, every reply costing $2.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.testing.openai_server import FakeOpenAIServer

TWO_DOLLARS = {"prompt_tokens": 0, "completion_tokens": 1, "total_tokens": 1}
"""With ``price=0:2000000``, each reply costs $2."""


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, OPENAI_API_KEY="test-key-1234", COLUMNS="400")


def _spent(stdout: str) -> float:
    return float(
        " ".join(stdout.split()).split("spent by this run: $")[1].split(" ")[0].rstrip(",")
    )


def _stats(out: Path) -> dict[str, Any]:
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    stats: dict[str, Any] = model["stats"]
    return stats


def _errors(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as c:
        return [(t, m) for t, m in c.execute("SELECT error_type, error_message FROM responses")]


@pytest.mark.parametrize("fault", ["no_choices", "null_content"])
def test_a_paid_reply_that_is_retried_counts_against_max_cost(tmp_path: Path, fault: str) -> None:
    # Re-test 11 #6: 5 rows, 3 attempts each, $1 a reply, --max-cost 3: 15 requests were sent
    # ($15 by the server's account) and "$0.0000" printed.
    with FakeOpenAIServer(always=fault, usage=TWO_DOLLARS) as server:
        model = (
            f"openai:fake-vlm@{server.base_url},price=0:2000000,max_attempts=3,"
            "max_concurrency=1,backoff=0"
        )
        proc = _run("run", "-m", model, "--data", "demo,n=5", "--db", tmp_path / "db",
                    "--out", tmp_path / "o", "--max-cost", "3")  # fmt: skip
        sent = server.requests_total
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    # One at a time: the first reply ($2) is asked again ($4), and the budget stops there.
    assert sent == 2, (sent, proc.stdout)
    assert _spent(proc.stdout) == pytest.approx(4.0), proc.stdout
    assert "(2 attempts, retries included)" in " ".join(proc.stdout.split()), proc.stdout
    stats = _stats(tmp_path / "o")
    assert stats["called"] == 1 and stats["attempts"] == 2
    assert stats["completion_tokens"] == 2  # both replies' usage, on the row that failed
    kinds = [t for t, _ in _errors(tmp_path / "db")]
    assert kinds.count("budget") == 4, kinds


def test_the_attempts_are_counted_and_the_error_names_the_shape(tmp_path: Path) -> None:
    with FakeOpenAIServer(always="no_choices", usage=TWO_DOLLARS) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:2000000,max_attempts=3,backoff=0"
        proc = _run("run", "-m", model, "--data", "demo,n=5", "--db", tmp_path / "db",
                    "--out", tmp_path / "o")  # fmt: skip
        sent = server.requests_total
    assert sent == 15
    out = " ".join(proc.stdout.split())
    # Every reply was billed: 15 x $2; 5 requests, 15 attempts.
    assert _spent(proc.stdout) == pytest.approx(30.0), out
    assert "on the 5 request(s) it sent (15 attempts, retries included)" in out, out
    messages = {m for _, m in _errors(tmp_path / "db")}
    assert messages == {"malformed response: the reply has no choices (after 3 attempts)"}
    assert "IndexError" not in proc.stdout + proc.stderr


def test_a_refusal_that_states_its_usage_is_counted(tmp_path: Path) -> None:
    refusal = {"content": None, "refusal": "I will not."}
    with FakeOpenAIServer(replies=[refusal] * 3, usage=TWO_DOLLARS) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:2000000"
        proc = _run("run", "-m", model, "--data", "demo,n=3", "--db", tmp_path / "db",
                    "--out", tmp_path / "o")  # fmt: skip
    assert _spent(proc.stdout) == pytest.approx(6.0), proc.stdout
    assert [t for t, _ in _errors(tmp_path / "db")] == ["refusal"] * 3


def test_one_attempt_is_said_in_the_singular(tmp_path: Path) -> None:
    # Re-test 13 left "(after 1 attempts)" where a model is asked once (max_attempts=1).
    with FakeOpenAIServer(always="no_choices") as server:
        model = f"openai:fake-vlm@{server.base_url},max_attempts=1"
        proc = _run("run", "-m", model, "--data", "demo,n=2", "--db", tmp_path / "db",
                    "--out", tmp_path / "o")  # fmt: skip
    messages = {m for _, m in _errors(tmp_path / "db")}
    assert messages == {"malformed response: the reply has no choices (after 1 attempt)"}
    assert "1 attempts" not in proc.stdout + proc.stderr
