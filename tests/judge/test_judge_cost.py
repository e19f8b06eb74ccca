"""Judge calls against ``--max-cost``, in the cost figures and in ``--dry-run`` (issue 26).

The fake OpenAI server reports usage (completion tokens: the words of the reply), so with a
price of ``0:1000000`` each completion word costs one dollar: a judge replying ``A`` costs $1 a
call, and the model answering ``unsure about itemN`` $3 an answer. Every figure is then exact.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.choice_rows import CHOICE_ASK, choice_rows, unsure_answers
from tests.console import lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer

DOLLAR_A_WORD = "price=0:1000000"


def _results(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    results = json.loads((out / "results.json").read_text())
    (model,) = results["models"].values()
    return results, model


def test_a_priced_judge_is_counted_apart_from_the_model(tmp_path: Path) -> None:
    data, answers = choice_rows(tmp_path / "rows.jsonl", 4), unsure_answers(4)
    prices = tmp_path / "prices.json"
    # The table's entry for the judge's name prices it, as it prices a model.
    prices.write_text(json.dumps({"judge-b": {"input": 0, "output": 2_000_000}}))
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *answers]) as server:
        url = server.base_url
        judge_a, judge_b = f"openai:judge-a@{url},{DOLLAR_A_WORD}", f"openai:judge-b@{url}"
        proc = lmmprobe_with_key(
            "run", "-m", f"openai:fake-vlm@{url},{DOLLAR_A_WORD}", "--data", data,
            "-q", "--db", tmp_path / "db", "--out", tmp_path / "o", "--prices", prices,
            "--judge", judge_a, "--judge", judge_b,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    _, model = _results(tmp_path / "o")
    # The model's cost is its own answers only: 4 answers of 3 words.
    assert model["metrics"]["cost"]["value"] == pytest.approx(12.0)
    calls = model["judge"]["calls"]
    assert calls[judge_a]["cost"] == pytest.approx(4.0)  # 4 one-word replies at $1
    assert calls[judge_b]["cost"] == pytest.approx(8.0)  # at $2 a word, from --prices
    assert f"judge {judge_a}: 4 requests, 0 from the store, 4 sent, 0 errors, $4.0000" in (
        " ".join(proc.stdout.split())
    )
    md = (tmp_path / "o" / "results.md").read_text()
    assert "Judge cost (apart from the models' own `cost`)" in md
    assert f"judged by `{judge_b}`: $8.0000" in md
    # The HTML report names the judges' cost beside the run, apart from the models'.
    html = tmp_path / "report.html"
    report = lmmprobe_with_key("report", "latest", "--db", tmp_path / "db", "--out", html)
    assert report.returncode == 0, report.stderr
    assert "cost $12.0000, apart from the models" in html.read_text()


def test_max_cost_needs_a_price_for_every_judge(tmp_path: Path) -> None:
    data = choice_rows(tmp_path / "rows.jsonl", 2)
    with FakeOpenAIServer() as server:
        url = server.base_url
        for flag in ("--max-cost", "--dry-run"):
            extra = ("--max-cost", "5") if flag == "--max-cost" else ("--max-cost", "5", flag)
            proc = lmmprobe_with_key(
                "run", "-m", f"openai:fake-vlm@{url},price=1:1", "--data", data, "-q",
                "--db", tmp_path / "db", "--judge", f"openai:judge@{url}", *extra,
            )  # fmt: skip
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert "--max-cost needs a price for every model and judge" in proc.stderr
            assert f"'openai:judge@{url}'" in proc.stderr
        assert server.requests_total == 0


def test_the_budget_runs_out_while_judging_and_the_same_command_resumes(tmp_path: Path) -> None:
    n = 8
    data, answers = choice_rows(tmp_path / "rows.jsonl", n), unsure_answers(n)
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *answers]) as server:
        url = server.base_url
        # The answers are free; the judge costs $1 a call, one call at a time, so the meter
        # is read after each: $3.5 lets 4 calls through.
        judge = f"openai:judge@{url},{DOLLAR_A_WORD},max_concurrency=1"
        args = ("run", "-m", f"openai:fake-vlm@{url},price=0:0", "--data", data, "-q",
                "--db", db, "--judge", judge, "--max-cost")  # fmt: skip
        first = lmmprobe_with_key(*args, "3.5", "--out", tmp_path / "a")
        assert first.returncode == 3, first.stderr  # stopped by its budget
        assert "run the same command again" in first.stdout
        results, model = _results(tmp_path / "a")
        assert results["status"] == "stopped_budget"
        judged = model["judge"]["decided"]["judge"]
        assert judged == 4
        assert model["judge"]["decided"]["unjudged"] == n - judged
        assert model["judge"]["calls"][judge]["errors"] == n - judged
        # The unjudged answers say why: the budget, never a guess.
        with sqlite3.connect(db) as conn:
            reasons = [r for (r,) in conn.execute(
                "SELECT reason FROM judgements WHERE decided_by = 'unjudged'")]  # fmt: skip
        assert len(reasons) == n - judged
        assert all(r.startswith("judge error budget: cost budget of $3.5") for r in reasons)
        server.reset_stats()
        rest = lmmprobe_with_key(*args, "100", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stderr
        # Only the judge calls the budget left: no answer, no stored judge reply asked again.
        assert server.requests_total == n - judged
    results, model = _results(tmp_path / "b")
    assert results["status"] == "complete"
    assert model["judge"]["decided"] == {"rule": 0, "judge": n, "unjudged": 0}
    assert model["judge"]["calls"][judge]["cost"] == pytest.approx(n)


def test_dry_run_counts_the_judge_calls_and_asks_nothing(tmp_path: Path) -> None:
    data = choice_rows(tmp_path / "rows.jsonl", 5)
    db = tmp_path / "db"
    # Two answers the rules read, three they cannot.
    answers = [(f"Which animal is item{i}?", "(A)" if i < 2 else f"unsure {i}") for i in range(5)]
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *answers]) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge@{url},price=0:1000"
        base = ("run", "-m", model, "--data", data, "-q", "--db", db)

        def dry() -> str:
            server.reset_stats()
            proc = lmmprobe_with_key(*base, "--judge", judge, "--dry-run")
            assert proc.returncode == 0, proc.stderr
            assert server.requests_total == 0
            return " ".join(proc.stdout.split())

        # Nothing answered yet: a bound, rules first.
        out = dry()
        assert (
            f"judge {judge} on {model}: at most 5 call(s); 5 not answered yet (rules first" in out
        )
        assert "judges: at most 5 call(s)" in out
        assert "nothing was sent and no run was recorded" in out
        # The answers stored: read as the judging step reads them, the rules' misses exactly.
        assert lmmprobe_with_key(*base, "--out", tmp_path / "o1").returncode == 0
        out = dry()
        assert (
            f"on {model}: 3 call(s); 5 answer(s) read from the store (rules applied, 0 judge" in out
        )
        assert "judges: 3 call(s)" in out
        assert "its completions cost at most" in out
        # Judged once: the judge's replies are stored, nothing would be sent.
        judged = lmmprobe_with_key(*base, "--judge", judge, "--out", tmp_path / "o2")
        assert judged.returncode == 0, judged.stderr
        out = dry()
        assert (
            f"on {model}: 0 call(s); 5 answer(s) read from the store (rules applied, 3 judge" in out
        )


def test_judging_a_run_its_budget_stopped_leaves_it_stopped_budget(tmp_path: Path) -> None:
    # Issue 34's leftover: a run that `--max-cost` stopped early, then `lmmprobe judge`d, was
    # recorded `complete_with_errors`, as if only some calls had failed: the judged run hid
    # that its answers stop where the budget stopped them.
    n = 4
    data, db = choice_rows(tmp_path / "rows.jsonl", n), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *unsure_answers(n)]) as server:
        url = server.base_url
        # $3 an answer (3 words at $1), one at a time: $4 lets 2 answers through, 2 are unsent.
        run = ("run", "-m", f"openai:fake-vlm@{url},{DOLLAR_A_WORD},max_concurrency=1",
               "--data", data, "-q", "--db", db, "--max-cost")  # fmt: skip
        first = lmmprobe_with_key(*run, "4", "--out", tmp_path / "a")
        assert first.returncode == 3, first.stderr  # stopped by its budget
        source, _ = _results(tmp_path / "a")
        assert source["status"] == "stopped_budget"
        judge = ("judge", source["run_id"], "--db", db, "-q", "--judge", f"openai:judge@{url}",
                 "--max-cost", "none")  # fmt: skip
        judged = lmmprobe_with_key(*judge, "--out", tmp_path / "j")
        assert judged.returncode == 3, judged.stderr  # still short of the budget's answers
        results, model = _results(tmp_path / "j")
        assert results["status"] == "stopped_budget"
        assert model["judge"]["decided"]["judge"] == 2  # the answers there are, judged
        # The terminal says whose budget stopped the answers and how to judge them all.
        out = " ".join(judged.stdout.split())
        assert (
            f"the answers judged are those of run {source['run_id']}, which stopped when its "
            "budget ran out: 2 of its requests were never answered"
        ) in out
        assert f"resume run {source['run_id']} with the command that started it" in out
        # Re-test 20 #18: the budget errors' line read "($6.0000 spent by this run); re-run to
        # continue", the source run's words: this run spent nothing on them, and judging again
        # answers none of them.
        assert (
            f"budget x2: cost budget of $4 reached ($6.0000 spent by run {source['run_id']}); "
            f"resume run {source['run_id']} with the command that started it to answer these"
        ) in out
        assert "spent by this run); re-run" not in out
        shown = " ".join(lmmprobe_with_key("show", "latest", "--db", db).stdout.split())
        assert f"($6.0000 spent by run {source['run_id']}); resume run" in shown
        # Doing so: the run resumed asks only what its budget left, and judged then, complete.
        server.reset_stats()
        rest = lmmprobe_with_key(*run, "100", "--out", tmp_path / "b")
        assert rest.returncode == 0, rest.stderr
        assert server.requests_total == n - 2
        resumed, _ = _results(tmp_path / "b")
        again = ("judge", resumed["run_id"], *judge[2:])
        done = lmmprobe_with_key(*again, "--out", tmp_path / "k")
        assert done.returncode == 0, done.stderr
    results, model = _results(tmp_path / "k")
    assert results["status"] == "complete"
    assert model["judge"]["decided"]["judge"] == n


def test_judge_dry_run_estimates_what_the_judge_prompts_cost(tmp_path: Path) -> None:
    """Retest 3, item 8: ``judge --dry-run`` said "completions cost at most $0.46" and the
    judging then spent $1.98: the judge prompts (which quote stored answers, so are known in
    advance) were left out. Their tokens are now estimated from their text."""
    data, db = choice_rows(tmp_path / "rows.jsonl", 4), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *unsure_answers(4)]) as server:
        url = server.base_url
        # $1 a prompt token, $1 a completion token.
        judge = f"openai:judge@{url},price=1000000:1000000"
        base = ("--db", db, "--judge", judge)
        done = lmmprobe_with_key("run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q",
                                 "--db", db, "--out", tmp_path / "a")  # fmt: skip
        assert done.returncode == 0, done.stderr
        dry = lmmprobe_with_key("judge", "latest", *base, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        judged = lmmprobe_with_key("judge", "latest", *base, "--max-cost", "none")
        assert judged.returncode == 0, judged.stderr
    out = " ".join(dry.stdout.split())
    found = re.search(
        r"completions cost at most \$([\d.]+); judge prompts about \$([\d.]+) more \(~(\d+) "
        r"tokens estimated at 4 characters a token; the server counts them\), so about "
        r"\$([\d.]+) in all",
        out,
    )
    assert found, out
    completions, prompts, tokens, total = map(float, found.groups())
    assert prompts == tokens and total == pytest.approx(completions + prompts)
    assert "its prompts about $" in out  # on the judge's own line too
    spent = float(re.search(r"spent by this run: \$([\d.]+)", judged.stdout)[1])  # type: ignore[index]
    # The fake server counts a prompt's words, fewer than its characters / 4: the estimate is
    # above what was paid, and of its order (before: 4 completions of 1 token, $4 of $100+).
    assert spent > completions
    assert spent <= total <= 3 * spent
