"""``--max-cost`` against a server that bills concurrently and reports usage badly (issue 34, item 4).

The fake OpenAI server's ``usage`` option replaces the usage of every completion with what a
test scripts: $2 a call (one completion token at $2M per million), negative, NaN, Infinity,
strings, huge numbers, or none at all. Each test runs the real console script.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.schema import MAX_TOKEN_COUNT
from lmmprobe.testing.openai_server import FakeOpenAIServer

TWO_DOLLARS = {"prompt_tokens": 0, "completion_tokens": 1, "total_tokens": 1}
"""With ``price=0:2000000``, each completion costs $2."""


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, OPENAI_API_KEY="test-key-1234")


def _stats(out: Path) -> tuple[str, dict[str, Any]]:
    results = json.loads((out / "results.json").read_text())
    (model,) = results["models"].values()
    return results["status"], model["stats"]


def _spent(stdout: str) -> float:
    return float(" ".join(stdout.split()).split("a budget ran out ($")[1].split(" spent")[0])


def test_answers_in_flight_when_the_budget_runs_out_are_stored_and_counted(
    tmp_path: Path,
) -> None:
    # The reproduction: $2 a call, 16 in flight, a $10 budget. Today 16 answers come
    # back, 5 are stored, the rest become budget errors (paid again on the next run), and the
    # spend printed counts the 5.
    n, db = 40, tmp_path / "db"
    with FakeOpenAIServer(latency=0.3, usage=TWO_DOLLARS) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:2000000,max_concurrency=16"
        args = ("run", "-m", model, "--data", f"demo,n={n}", "-q", "--db", db)
        first = _run(*args, "--max-cost", "10", "--out", tmp_path / "a")
        assert first.returncode == 3, first.stderr  # stopped by its budget
        delivered = server.completed
        status, stats = _stats(tmp_path / "a")
        assert status == "stopped_budget"
        # Every answer the server delivered (and billed) is stored, none became an error...
        assert stats["called"] == delivered == server.requests_total
        assert stats["errors"] == n - delivered
        # ...and the spend printed is what was paid: $2 for each of them.
        assert _spent(first.stdout) == pytest.approx(2.0 * delivered)
        # No new call starts once the budget is crossed: at most the ones in flight then.
        assert 5 <= delivered <= 5 + 16
        server.reset_stats()
        rest = _run(*args, "--max-cost", "none", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stderr
        # Nothing paid for is asked again.
        assert server.requests_total == n - delivered
    status, stats = _stats(tmp_path / "b")
    assert status == "complete" and stats["cached"] == delivered


@pytest.mark.slow
def test_on_ray_too_answers_in_flight_are_stored_and_counted(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    n = 30
    with FakeOpenAIServer(latency=0.3, usage=TWO_DOLLARS) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:2000000,max_concurrency=8"
        proc = lmmprobe("run", "-m", model, "--data", f"demo,n={n}", "-q", "--db",
                        tmp_path / "db", "--out", tmp_path / "o", "--max-cost", "10",
                        "--executor", "ray", OPENAI_API_KEY="test-key-1234")  # fmt: skip
        assert proc.returncode == 3, proc.stderr  # stopped by its budget
        delivered = server.completed
    status, stats = _stats(tmp_path / "o")
    assert status == "stopped_budget"
    assert stats["called"] == delivered and stats["errors"] == n - delivered
    assert _spent(proc.stdout) == pytest.approx(2.0 * delivered)


def test_negative_usage_does_not_lower_the_meter(tmp_path: Path) -> None:
    # -1,000,000 prompt tokens at $1M per million would give back $1,000,000 a call: 200 of 200
    # calls were paid past a $10 budget. Read as 0 (re-test 21 #10), a server reporting
    # negative prompt tokens still got free prompts: the budget counted its completions only.
    # A negative count is no count: unknown, as a missing one, so the prompt cannot be priced
    # and the budget cannot be kept: the answer is stored, nothing more is sent.
    usage = {"prompt_tokens": -1_000_000, "completion_tokens": 1, "total_tokens": -999_999}
    db = tmp_path / "db"
    with FakeOpenAIServer(usage=usage) as server:
        model = f"openai:fake-vlm@{server.base_url},price=1000000:2000000,max_concurrency=1"
        proc = _run("run", "-m", model, "--data", "demo,n=20", "-q", "--db", db,
                    "--out", tmp_path / "o", "--max-cost", "10")  # fmt: skip
        assert proc.returncode == 3, proc.stderr  # stopped by its budget
        assert server.requests_total == 1
    assert "--max-cost cannot be kept" in proc.stdout and "--max-cost none" in proc.stdout
    status, stats = _stats(tmp_path / "o")
    assert status == "stopped_budget" and stats["called"] == 1 and stats["errors"] == 19
    with sqlite3.connect(db) as conn:
        counts = conn.execute(
            "SELECT prompt_tokens, completion_tokens FROM responses WHERE error_type IS NULL"
        ).fetchall()
    assert counts == [(None, 1)]  # unknown, not 0
    assert "no count (prompt_tokens=-1000000)" in proc.stderr  # said, once


def test_a_negative_completion_count_is_counted_at_the_token_limit(tmp_path: Path) -> None:
    # Free prompts, $1 a completion token: a negative completion count read as 0 made every
    # answer free. Unknown, it counts at the limit sent (4 tokens): $4, $8, $12.
    usage = {"prompt_tokens": 10, "completion_tokens": -5, "total_tokens": 5}
    with FakeOpenAIServer(usage=usage) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:1000000,max_concurrency=1"
        proc = _run("run", "-m", model, "--data", "demo,n=6", "-q", "--db", tmp_path / "db",
                    "--out", tmp_path / "o", "--max-cost", "10", "--max-new-tokens", "4")  # fmt: skip
        assert proc.returncode == 3, proc.stderr  # stopped by its budget
        assert server.requests_total == 3
    assert _spent(proc.stdout) == pytest.approx(12.0)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": float("nan"), "completion_tokens": 3, "total_tokens": 3},
        {"prompt_tokens": 10, "completion_tokens": float("inf"), "total_tokens": "13"},
        {"prompt_tokens": "10", "completion_tokens": "3", "total_tokens": None},
        {"prompt_tokens": True, "completion_tokens": [3], "total_tokens": {}},
        "lots",
    ],
    ids=["nan", "infinity", "strings", "other-types", "not-an-object"],
)
def test_a_malformed_usage_field_is_ignored_never_the_answer(tmp_path: Path, usage: Any) -> None:
    # Today such a reply is "malformed", retried 6 times and stored as an error.
    with FakeOpenAIServer(usage=usage) as server:
        proc = _run("run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=4",
                    "-q", "--db", tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 4  # one call each: nothing retried
    status, stats = _stats(tmp_path / "o")
    assert status == "complete" and stats["errors"] == 0 and stats["called"] == 4
    assert "no count" in proc.stderr  # said, once


def test_usage_above_two_to_the_63_is_clamped_before_the_store(tmp_path: Path) -> None:
    # Today the store's 64-bit integers overflow and the run fails.
    usage = {"prompt_tokens": 2**64, "completion_tokens": 10**30, "total_tokens": 2**65}
    db = tmp_path / "db"
    with FakeOpenAIServer(usage=usage) as server:
        proc = _run("run", "-m", f"openai:fake-vlm@{server.base_url},price=1:1", "--data",
                    "demo,n=3", "-q", "--db", db, "--out", tmp_path / "o")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    status, stats = _stats(tmp_path / "o")
    assert status == "complete" and stats["called"] == 3
    with sqlite3.connect(db) as conn:
        counts = conn.execute("SELECT prompt_tokens, completion_tokens FROM responses").fetchall()
    assert counts == [(MAX_TOKEN_COUNT, MAX_TOKEN_COUNT)] * 3


def test_reasoning_tokens_above_the_completions_are_the_completions(tmp_path: Path) -> None:
    # "out tokens 5, think tokens 900" was taken silently: reasoning tokens are part of the
    # completion's, so more than all of them is no count.
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "completion_tokens_details": {"reasoning_tokens": 900},
    }
    db = tmp_path / "db"
    with FakeOpenAIServer(usage=usage) as server:
        proc = _run("run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=3",
                    "-q", "--db", db, "--out", tmp_path / "o")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    assert "reasoning_tokens=900 above completion_tokens=5" in proc.stderr, proc.stderr
    with sqlite3.connect(db) as conn:
        counts = conn.execute(
            "SELECT completion_tokens, reasoning_tokens FROM responses"
        ).fetchall()
    assert counts == [(5, 5)] * 3


def test_missing_usage_stops_a_budget_it_cannot_keep(tmp_path: Path) -> None:
    # Today an answer without usage costs nothing to the meter: the budget is never reached.
    db = tmp_path / "db"
    with FakeOpenAIServer(usage={}) as server:
        model = f"openai:fake-vlm@{server.base_url},price=1:1,max_concurrency=1"
        args = ("run", "-m", model, "--data", "demo,n=6", "-q", "--db", db)
        proc = _run(*args, "--max-cost", "10", "--out", tmp_path / "a")
        assert proc.returncode == 3, proc.stderr  # stopped by its budget
        # The prompt cannot be priced: the answer is kept, nothing more is sent.
        assert server.requests_total == 1
        assert "--max-cost cannot be kept" in proc.stdout
        assert "--max-cost none" in proc.stdout
        status, stats = _stats(tmp_path / "a")
        assert status == "stopped_budget" and stats["called"] == 1 and stats["errors"] == 5
        # Switched off, the same command goes on, asking only what is not answered.
        server.reset_stats()
        rest = _run(*args, "--max-cost", "none", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stderr
        assert server.requests_total == 5
        assert _stats(tmp_path / "b")[0] == "complete"


def test_missing_usage_with_free_prompts_counts_max_new_tokens(tmp_path: Path) -> None:
    # The completion is bounded by the token limit sent: $1 a token, 4 tokens a call.
    with FakeOpenAIServer(usage={}) as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:1000000,max_concurrency=1"
        proc = _run("run", "-m", model, "--data", "demo,n=6", "-q", "--db", tmp_path / "db",
                    "--out", tmp_path / "o", "--max-cost", "10", "--max-new-tokens", "4")  # fmt: skip
        assert proc.returncode == 3, proc.stderr  # stopped by its budget
        assert server.requests_total == 3  # $4, $8, $12: the third crosses $10
    assert _spent(proc.stdout) == pytest.approx(12.0)


# "٥" (Arabic-Indic 5) and "５" (fullwidth): float() reads them, a budget must not; nor "1_0",
# which it read as 10 (re-test 19 of issue 34, #17).
@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "\u0665", "\uff15", "1_0"])
def test_max_cost_values_and_how_to_switch_it_off(tmp_path: Path, value: str) -> None:
    proc = _run("run", "-m", "random,price=1:1", "--limit", "2", "-q", "--db", tmp_path / "db",
                "--max-cost", value)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"--max-cost {value!r}" in proc.stderr and "--max-cost none" in proc.stderr


@pytest.mark.parametrize("value", ["1e400", "5" * 5000])
def test_a_huge_max_cost_is_called_huge_and_not_echoed_whole(tmp_path: Path, value: str) -> None:
    # 1e400 was refused as "give dollars above 0"; 5,000 digits were echoed whole.
    proc = _run("run", "-m", "random,price=1:1", "--limit", "2", "-q", "--db", tmp_path / "db",
                "--max-cost", value)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "more than 1,000,000,000,000 dollars stops nothing" in line, line
    assert "--max-cost none" in line and len(line) < 300, line


@pytest.mark.parametrize("value", ["none", "off", "NONE"])
def test_max_cost_none_is_no_limit(tmp_path: Path, value: str) -> None:
    # A model without a price is fine then: no budget needs one.
    proc = _run("run", "-m", "random", "--limit", "2", "-q", "--db", tmp_path / "db",
                "--out", tmp_path / "o", "--max-cost", value)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert _stats(tmp_path / "o")[0] == "complete"


@pytest.mark.parametrize(
    ("option", "limit"),
    [("max_requests=3", "max_requests"), ("max_tokens_total=2", "max_tokens_total")],
)
def test_requests_a_backends_own_budget_refused_are_not_counted_as_sent(
    tmp_path: Path, option: str, limit: str
) -> None:
    # Retest 3, item 6: "20 requests, 20 sent, 17 errors" while the server answered 3, and the
    # advice named "--max-cost or max_requests" when max_tokens_total had stopped the run.
    n = 20
    with FakeOpenAIServer() as server:
        # At most 4 in flight: those sent before the first answer spends the token budget.
        model = f"openai:fake-vlm@{server.base_url},{option},max_concurrency=4"
        args = ("run", "-m", model, "--data", f"demo,n={n}", "--db", tmp_path / "db")
        done = _run(*args, "--out", tmp_path / "o")
        answered = server.completed
    assert done.returncode == 3, done.stderr
    assert 0 < answered < n
    _, stats = _stats(tmp_path / "o")
    assert stats["called"] == answered and stats["refused"] == n - answered
    text = " ".join(done.stdout.split())
    assert (
        f"fake-vlm: {n} requests, 0 from the store, {answered} sent, {n - answered} refused by "
        f"{option} (not sent), {n - answered} errors"
    ) in text
    assert f"with a higher {limit} to go further at once" in text
    assert "--max-cost or" not in text
    # results.md counts them the same way: what was called is what reached the server.
    md = (tmp_path / "o" / "results.md").read_text()
    assert f"| {n} | 0 | {answered} | {n - answered} |" in md
    assert f"{n - answered} request(s) refused by the backend's own budget" in md
