"""``lmmprobe compare RUN_A RUN_B --judge SPEC``: a judge compares two runs' answers pairwise.

Two runs answer the same rows (two model names on one fake server, each scripted by prompt);
the judge is the same server scripted by the pairwise prompt, which quotes both answers in the
order shown. Item by item: side A better in both orders, side B better in both orders, a judge
that always prefers the first place (a flip: a tie), and one unreadable reply (unjudged).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_arena_judge import SECRET, secret_urls
from tests.console import lmmprobe

from lmmprobe.judge.protocol import delimit
from lmmprobe.testing.openai_server import FakeOpenAIServer

N = 4


def _shown(first: str, second: str) -> str:
    return f"[Answer A]\n{delimit(first, 'answer_a')}\n\n[Answer B]\n{delimit(second, 'answer_b')}"


JUDGE = [
    (_shown("answer-a0", "answer-b0"), "Verdict: A"),  # A better, in both orders
    (_shown("answer-b0", "answer-a0"), "Verdict: B"),
    (_shown("answer-a1", "answer-b1"), "Verdict: B"),  # B better, in both orders
    (_shown("answer-b1", "answer-a1"), "Verdict: A"),
    (_shown("answer-a2", "answer-b2"), "Verdict: A"),  # the first place wins: a flip, a tie
    (_shown("answer-b2", "answer-a2"), "Verdict: A"),
    (_shown("answer-a3", "answer-b3"), "hard to say"),  # unreadable: unjudged
    (_shown("answer-b3", "answer-a3"), "Verdict: tie"),
]
MODELS = [
    (f"@{m} Which animal is item{i}?", f"answer-{m[-1]}{i}")
    for m in ("vlm-a", "vlm-b")
    for i in range(N)
]


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, OPENAI_API_KEY="test-key")


def test_a_judge_compares_two_runs_in_both_orders(tmp_path: Path) -> None:
    rows = [
        {"id": f"r{i}", "images": [], "question": f"Which animal is item{i}?",
         "choices": ["cat", "dog"], "answer": 0}
        for i in range(N)
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[*JUDGE, *MODELS]) as server:
        url = server.base_url
        runs = []
        for name in ("vlm-a", "vlm-b"):
            out = tmp_path / name
            proc = _run("run", "-m", f"openai:{name}@{url}", "--data", data, "-q", "--db", db,
                        "--out", out)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            runs.append(json.loads((out / "results.json").read_text())["run_id"])
        server.reset_stats()
        judge = f"openai:judge@{url}"
        proc = _run("compare", *runs, "--judge", judge, "--db", db, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 2 * N  # each pair in both orders, no model asked
        summary = json.loads(proc.stdout)["judge"]
        server.reset_stats()
        again = _run("compare", *runs, "--judge", judge, "--db", db)
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 0  # every reply came from the store
    assert summary["a"] == {"run": runs[0], "model": f"openai:vlm-a@{url}"}
    assert summary["pairs"] == N
    assert (summary["a_wins"], summary["b_wins"], summary["ties"], summary["unjudged"]) == (
        1, 1, 1, 1
    )  # fmt: skip
    # Over the three pairs with both replies readable, one flipped with the order.
    assert summary["flips"] == 1
    assert abs(summary["position_consistency"] - 2 / 3) < 1e-9
    assert summary["calls"] == {"requests": 8, "cached": 0, "called": 8, "errors": 0, "unsent": 0}
    text = " ".join(again.stdout.split())
    assert f"A openai:vlm-a@{url} (run {runs[0]}): 1 wins, 1 losses, 1 ties" in text
    assert "position consistency: 0.667 (1 flipped with the order)" in text
    assert "judge calls: 8 requests, 8 from the store, 0 sent, 0 errors" in text
    # The unjudged pair's reply was unreadable, not a failed call: it is not asked again.
    assert "unjudged: 1 (1 unreadable reply(ies): stored, not asked again)" in text
    assert "where a call failed" not in text
    # The accuracy comparison is still there, after the judge's.
    assert "McNemar" in again.stdout or "accuracy" in again.stdout


def test_a_thinking_judge_is_read_from_its_answer_and_a_cut_off_reply_is_unjudged(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": f"r{i}", "images": [], "question": f"Which animal is item{i}?",
         "choices": ["cat", "dog"], "answer": 0}
        for i in range(2)
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    thinks = "<think>My first instinct is Verdict: A, but answer B is more correct.</think>\n\n"
    judge_replies = [
        # Pair 0: each reply's thinking names the other answer; its answer names B both ways.
        (_shown("answer-a0", "answer-b0"), f"{thinks}Verdict: B"),
        (_shown("answer-b0", "answer-a0"), f"{thinks}Verdict: A"),
        # Pair 1: the swapped reply is cut off inside its thinking (after naming a verdict).
        (_shown("answer-a1", "answer-b1"), "Verdict: A"),
        (_shown("answer-b1", "answer-a1"), "<think>Hmm. My first instinct is Verdict: B ... so"),
    ]
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[*judge_replies, *MODELS]) as server:
        url = server.base_url
        runs = []
        for name in ("vlm-a", "vlm-b"):
            out = tmp_path / name
            proc = _run("run", "-m", f"openai:{name}@{url}", "--data", data, "-q", "--db", db,
                        "--out", out)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            runs.append(json.loads((out / "results.json").read_text())["run_id"])
        proc = _run("compare", *runs, "--judge", f"openai:judge@{url}", "--db", db,
                    "--format", "json")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["judge"]
    assert (summary["a_wins"], summary["b_wins"], summary["ties"], summary["unjudged"]) == (
        0, 1, 0, 1
    )  # fmt: skip
    assert summary["flips"] == 0
    assert summary["unjudged_reasons"] == {"swapped order: truncated": 1}


def test_compare_judge_with_audit_is_refused(tmp_path: Path) -> None:
    done = _run("run", "-m", "random", "-m", "first", "--limit", "3", "-q", "--db",
                tmp_path / "db", "--out", tmp_path / "o")  # fmt: skip
    assert done.returncode == 0, done.stderr
    proc = _run("compare", "latest", "--judge", "random", "--audit", "--db", tmp_path / "db")
    assert proc.returncode == 2 and "--judge and --audit" in proc.stderr


def test_compare_judge_never_shows_a_secret_in_the_judge_url(tmp_path: Path) -> None:
    # Re-test 9 (#6): the judge spec was printed as given in the header line ("judge SPEC
    # (lmmprobe-pairwise ...): N pairs"), the error line and the -f json "judge" field.
    rows = [
        {"id": f"r{i}", "images": [], "question": f"Which animal is item{i}?",
         "choices": ["cat", "dog"], "answer": 0}
        for i in range(2)
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[*JUDGE, *MODELS]) as server:
        url = server.base_url
        models = [f"openai:{name}@{url}" for name in ("vlm-a", "vlm-b")]
        done = _run("run", "-m", models[0], "-m", models[1], "--data", data, "-q", "--db", db,
                    "--out", tmp_path / "o")  # fmt: skip
        assert done.returncode == 0, done.stderr
        sides = ("latest", "--db", db, "-m", models[0], "-m", models[1])
        for judge_url in secret_urls(url):
            judge = f"openai:judge@{judge_url},max_attempts=1"
            table = _run("compare", *sides, "--judge", judge)
            doc = _run("compare", *sides, "--judge", judge, "--format", "json")
            for proc in (table, doc):
                said = proc.stdout + proc.stderr
                assert SECRET not in said, (judge_url, said)
                assert "[redacted]" in said, (judge_url, said)
            if doc.returncode == 0:  # the judge answered: its spec is the document's, redacted
                assert "[redacted]" in json.loads(doc.stdout)["judge"]["judge"]


def test_compare_judge_under_max_cost_stops_paid_judge_calls_and_resumes(tmp_path: Path) -> None:
    # Re-test 19 of issue 34 (#15): `compare --judge` had no --max-cost or --prices, so its
    # paid judge calls were unbounded. They read as `run` and `judge` read them.
    rows = [
        {"id": f"r{i}", "images": [], "question": f"Which animal is item{i}?",
         "choices": ["cat", "dog"], "answer": 0}
        for i in range(N)
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[*JUDGE, *MODELS]) as server:
        url = server.base_url
        models = [f"openai:{name}@{url}" for name in ("vlm-a", "vlm-b")]
        done = _run("run", "-m", models[0], "-m", models[1], "--data", data, "-q", "--db", db,
                    "--out", tmp_path / "o")  # fmt: skip
        assert done.returncode == 0, done.stderr
        sides = ("latest", "--db", db, "-m", models[0], "-m", models[1])
        # $1 a completion token, one call at a time: the budget stops the calls past $3.
        judge = ("--judge", f"openai:judge@{url},max_concurrency=1")
        prices = tmp_path / "prices.yaml"
        prices.write_text("judge: {input: 0, output: 1000000}\n")
        # Each refusal as `run` words it, before any call.
        server.reset_stats()
        for bad, said in [
            (("--max-cost", "1_0"), "error: --max-cost '1_0': give dollars above 0"),
            (("--max-cost", "5"), "error: --max-cost needs a price for every judge; "),
            (
                ("--prices", tmp_path / "none.yaml"),
                f"error: {tmp_path / 'none.yaml'}: file does not",
            ),
        ]:
            proc = _run("compare", *sides, *judge, *bad)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert proc.stderr.startswith(said) and len(proc.stderr.splitlines()) == 1, said
        without = _run("compare", *sides, "--max-cost", "5")
        assert without.returncode == 2 and "give --judge SPEC" in without.stderr
        assert server.requests_total == 0

        stopped = _run("compare", *sides, *judge, "--prices", prices, "--max-cost", "3")
        assert stopped.returncode == 3, stopped.stdout + stopped.stderr
        sent = server.requests_total
        assert 1 <= sent < 2 * N
        said = " ".join(stopped.stdout.split())
        assert "spent by this command: $" in said and " of --max-cost $3, on the " in said
        assert f"{2 * N - sent} left unsent by the budget" in said
        assert "call(s) left unsent by --max-cost: asked again by the same command" in said
        stop = " ".join(stopped.stderr.split())
        assert stop.startswith("judging stopped: a budget ran out ($"), stop
        assert "run the same command again to continue" in stop
        # The same command with no limit asks only the calls the budget left.
        server.reset_stats()
        rest = _run("compare", *sides, *judge, "--prices", prices, "--max-cost", "none",
                    "--format", "json")  # fmt: skip
        assert rest.returncode == 0, rest.stdout + rest.stderr
        assert server.requests_total == 2 * N - sent
    summary = json.loads(rest.stdout)["judge"]
    assert summary["calls"]["unsent"] == 0 and summary["unjudged"] == 1  # the unreadable one
    assert summary["spent"] > 0
