"""Tokens and cost through the console script (issue 25, item 5).

The fake OpenAI server reports usage for every completion (prompt tokens: the prompt's words plus
85 per image; completion tokens: the answer's words), so a run's token and cost metrics can be
checked against the rows ``lmmprobe export`` gives; it also counts the requests it receives, so
``--max-cost`` and ``--dry-run`` can be shown to send exactly what they say.
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


def _lmmprobe(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, OPENAI_API_KEY="test-key")


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def _metrics(out: Path) -> dict[str, Any]:
    results = json.loads((out / "results.json").read_text())
    (model,) = results["models"].values()
    metrics: dict[str, Any] = model["metrics"]
    return metrics


def _runs(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def test_token_and_cost_metrics_of_a_known_run(tmp_path: Path) -> None:
    db, out = tmp_path / "db", tmp_path / "o"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url},price=2:10"
        proc = _lmmprobe("run", "-m", model, "--data", "demo,n=12", "-q", "--db", db, "--out", out)
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 12
        # The price changes no answer: the same model without it reuses every stored response
        # (and then has token metrics but no cost).
        server.reset_stats()
        again = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=12", "-q",
            "--db", db, "--out", tmp_path / "o2",
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 0
    exported = _lmmprobe("export", proc.stdout.split("run id: ")[1].split()[0], "--db", db)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(rows) == 12 and all(r["completion_tokens"] for r in rows)
    completion = sum(r["completion_tokens"] for r in rows)
    prompt = sum(r["prompt_tokens"] for r in rows)
    correct = sum(1 for r in rows if r["correct"])
    assert correct > 0
    dollars = (prompt * 2 + completion * 10) / 1e6
    m = _metrics(out)
    assert m["output_tokens"]["value"] == pytest.approx(completion / 12)
    assert m["tokens_per_correct"]["value"] == pytest.approx(completion / correct)
    assert m["cost"]["value"] == pytest.approx(dollars)
    assert m["cost_per_correct"]["value"] == pytest.approx(dollars / correct)
    assert "reasoning_tokens" not in m  # the fake's plain answers report no thinking tokens
    # The terminal shows them as columns of the result table.
    for column in ("out tokens", "tokens/correct", "cost $", "$/correct"):
        assert column in proc.stdout
    m2 = _metrics(tmp_path / "o2")
    assert m2["output_tokens"] == m["output_tokens"] and "cost" not in m2
    # `lmmprobe report` rebuilds the results from the store: the same figures.
    report = _lmmprobe("report", "--db", db, "--out", tmp_path / "r")
    assert report.returncode == 0, report.stderr


def test_price_table_prices_models_by_name(tmp_path: Path) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("# dollars per million tokens\nfake-vlm: {input: 0, output: 1000000}\n")
    with FakeOpenAIServer() as server:
        proc = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=4", "-q",
            "--db", tmp_path / "db", "--out", tmp_path / "o", "--prices", table,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    m = _metrics(tmp_path / "o")
    # One dollar per completion token, nothing for the prompt.
    assert m["cost"]["value"] == pytest.approx(m["output_tokens"]["value"] * 4)


@pytest.mark.parametrize(
    ("price", "needle"),
    [
        ("abc", "price='abc'"),
        ("1", "price='1'"),
        ("-1:2", "price='-1:2'"),
        ("1:inf", "1:inf"),
        # Before: taken, and the cost printed as a dollar amount 300 digits long.
        ("1e300:1e300", "from 0 to 1,000,000,000"),
        # Before: float() read Arabic-Indic digits, and the run was priced at $1 and $1.
        ("\u0661:\u0661", "price='\u0661:\u0661'"),
        ("1:\u0665", "price='1:\u0665'"),
    ],
)
def test_bad_price_option_is_one_line(tmp_path: Path, price: str, needle: str) -> None:
    proc = _lmmprobe(
        "run", "-m", f"random,price={price}", "--limit", "2", "-q", "--db", tmp_path / "db"
    )
    _one_line_error(proc, needle, "IN:OUT")
    assert not (tmp_path / "db").exists() or _runs(tmp_path / "db") == 0  # refused first


def test_a_yaml_price_in_exponent_form_is_a_number(tmp_path: Path) -> None:
    # Before: pyyaml (YAML 1.1) read 1e6 as the text '1e6', and the table was refused.
    table = tmp_path / "prices.yaml"
    table.write_text("fake-vlm: {input: 0e0, output: 1e6}\nother: {input: +.5, output: 0}\n")
    with FakeOpenAIServer() as server:
        proc = _lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=4", "-q",
            "--db", tmp_path / "db", "--out", tmp_path / "o", "--prices", table,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    m = _metrics(tmp_path / "o")
    assert m["cost"]["value"] == pytest.approx(m["output_tokens"]["value"] * 4)


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ('{input: "1e3", output: 1}', "input: Input should be a valid number (got '1e3')"),
        ("{input: $5, output: 1}", "input: Input should be a valid number (got '$5')"),
        ("{input: 1, output: 1e300}", "output: Input should be less than or equal to 1000000000"),
        # Before: YAML 1.1 read these as numbers: 1:30 is 90 (base 60), 0x10 is 16, 017 is 15.
        ("{input: 1:30, output: 1}", "input: Input should be a valid number (got '1:30')"),
        ("{input: 1, output: 0x10}", "output: Input should be a valid number (got '0x10')"),
        ("{input: 0b11, output: 1}", "input: Input should be a valid number (got '0b11')"),
        ("{input: 0o7, output: 1}", "input: Input should be a valid number (got '0o7')"),
        ("{input: 017, output: 1}", "input: Input should be a valid number (got '017')"),
        ("{input: 1_000, output: 1}", "input: Input should be a valid number (got '1_000')"),
        ("{input: 1:30.5, output: 1}", "input: Input should be a valid number (got '1:30.5')"),
    ],
)
def test_a_quoted_or_absurd_table_price_is_still_refused(
    tmp_path: Path, entry: str, needle: str
) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text(f"gpt-4o: {{input: 2.5, output: 10}}\nmine: {entry}\n")
    proc = _lmmprobe("run", "--limit", "2", "-q", "--db", tmp_path / "db", "--prices", table)
    _one_line_error(proc, f"{table}:2: model 'mine': {needle}")


def test_bad_price_table_names_file_line_and_model(tmp_path: Path) -> None:
    yaml_table = tmp_path / "prices.yaml"
    yaml_table.write_text("gpt-4o: {input: 2.5, output: 10}\nmine:\n  input: cheap\n  output: 1\n")
    proc = _lmmprobe("run", "--limit", "2", "-q", "--db", tmp_path / "db", "--prices", yaml_table)
    _one_line_error(proc, f"{yaml_table}:3", "'mine'", "input")
    json_table = tmp_path / "prices.json"
    json_table.write_text('{\n  "a": {"input": 1, "output": 2},\n  "b": {"input": 1}\n}\n')
    proc = _lmmprobe("run", "--limit", "2", "-q", "--db", tmp_path / "db", "--prices", json_table)
    _one_line_error(proc, f"{json_table}:3", "'b'", "output")
    proc = _lmmprobe(
        "run", "--limit", "2", "-q", "--db", tmp_path / "db", "--prices", tmp_path / "none.json"
    )
    _one_line_error(proc, "none.json", "does not exist")


def test_max_cost_needs_a_price_for_every_model(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", "random,price=1:1", "-m", "first", "--limit", "2", "-q",
        "--db", tmp_path / "db", "--max-cost", "1",
    )  # fmt: skip
    _one_line_error(proc, "--max-cost", "'first'", "price=IN:OUT")


def test_max_cost_stops_cleanly_and_the_same_command_resumes(tmp_path: Path) -> None:
    db, n = tmp_path / "db", 10
    with FakeOpenAIServer() as server:
        # One request at a time, so the spend is checked after each; about $0.12 a request.
        model = f"openai:fake-vlm@{server.base_url},price=1000:1000,max_concurrency=1"
        args = ("run", "-m", model, "--data", f"demo,n={n}", "-q", "--db", db, "--max-cost")
        first = _lmmprobe(*args, "0.3", "--out", tmp_path / "a")
        assert first.returncode == 3, first.stderr  # stopped by its budget
        assert "stopped_budget" in first.stdout and "run the same command again" in first.stdout
        stopped = json.loads((tmp_path / "a" / "results.json").read_text())
        assert stopped["status"] == "stopped_budget"
        (before,) = (m["stats"] for m in stopped["models"].values())
        sent = before["called"]  # answers stored; the rest are budget errors
        assert 0 < sent < n and before["errors"] == n - sent
        # At most the one request in flight when the money ran out was sent and not stored.
        assert sent <= server.requests_total <= sent + 1
        server.reset_stats()
        rest = _lmmprobe(*args, "100", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stderr
        assert server.requests_total == n - sent  # what the budget left, nothing asked twice
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["status"] == "complete"
    (stats,) = (m["stats"] for m in results["models"].values())
    assert stats["cached"] == sent and stats["called"] == n - sent and stats["errors"] == 0


def test_a_budget_spent_before_a_later_model_is_a_stop_not_a_failure(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        # The first model spends the budget; the second model's requests are all left unsent.
        first = f"openai:fake-vlm@{server.base_url},price=1000:1000,max_concurrency=1"
        second = f"openai:other-vlm@{server.base_url},price=1000:1000"
        proc = _lmmprobe(
            "run", "-m", first, "-m", second, "--data", "demo,n=6", "-q",
            "--db", tmp_path / "db", "--out", tmp_path / "o", "--max-cost", "0.2",
        )  # fmt: skip
    assert proc.returncode == 3, proc.stdout + proc.stderr  # a stop (exit 3), not a failure (1)
    assert "run the same command again" in proc.stdout
    assert "every request of" not in proc.stdout + proc.stderr


def test_dry_run_counts_only_uncached_requests_and_calls_nothing(tmp_path: Path) -> None:
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url},price=0:100"
        done = _lmmprobe("run", "-m", model, "--data", "demo,n=6", "-q", "--db", db)
        assert done.returncode == 0, done.stderr
        server.reset_stats()
        dry = _lmmprobe("run", "-m", model, "--data", "demo,n=10", "-q", "--db", db, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert server.requests_total == 0
    out = " ".join(dry.stdout.split())
    assert "4 request(s) to send of 10; 6 answered in the store" in out
    assert "at most $0.0128 (4 x 32 tokens)" in out  # 4 x 32 tokens at $100 per million
    assert "nothing was sent and no run was recorded" in out
    assert _runs(db) == 1  # only the first run
    # A store that does not exist is not created by looking at it.
    fresh = tmp_path / "fresh" / "x.db"
    dry = _lmmprobe("run", "-m", "random", "--limit", "3", "--db", fresh, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "random: 3 request(s) to send of 3; 0 answered in the store" in dry.stdout
    assert not fresh.parent.exists()
