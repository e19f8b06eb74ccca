"""Numbers that disagreed or misled, through the console script (issue 34, item 15).

The run table's cost priced answers read from the store while the budget line counted this run
only; thinking on/off variants were told apart only in the legend; ``SQ 1975.3`` stood under a
"percent scale" heading; the baselines' free-form 0.000 read as a score; and the validity table
mixed ``0``, ``0.5`` and ``0.3816``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.testing.openai_server import FakeOpenAIServer

BASELINES = ("-m", "random", "-m", "first", "-m", "random,seed=3", "-m", "random,seed=7")


def _results(out: Path) -> dict[str, Any]:
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return results


def _cost(out: Path) -> float:
    (model,) = _results(out)["models"].values()
    return float(model["metrics"]["cost"]["value"])


def test_this_runs_spend_and_the_answers_cost_are_told_apart(tmp_path: Path) -> None:
    db = tmp_path / "db"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url},price=1000:1000,max_concurrency=1"
        args = ("run", "-m", model, "-q", "--db", db, "--max-cost", "100")
        first = lmmprobe(
            *args, "--data", "demo,n=6", "--out", tmp_path / "a", OPENAI_API_KEY="k-test"
        )
        again = lmmprobe(
            *args, "--data", "demo,n=10", "--out", tmp_path / "b", OPENAI_API_KEY="k-test"
        )
        stopped = lmmprobe(
            *args[:-1], "0.2", "--data", "demo,n=16", "--out", tmp_path / "c",
            OPENAI_API_KEY="k-test",
        )  # fmt: skip
    assert first.returncode == again.returncode == 0, again.stderr
    assert stopped.returncode == 3, stopped.stderr  # stopped by its budget
    paid_before, total = _cost(tmp_path / "a"), _cost(tmp_path / "b")
    out = " ".join(again.stdout.split())
    assert "answers' cost $" in out and f"{total:.4f}" in out  # the table: every answer
    # The line below says what this run paid for (the 4 new answers) and what the table adds.
    assert (
        f"spent by this run: ${total - paid_before:.4f} of --max-cost $100, on the 4 request(s) "
        f"it sent; answers' cost $ above: all 10 answers, ${total:.4f}, 6 of them read from the "
        "store (paid for by earlier runs)"
    ) in out
    first_out = " ".join(first.stdout.split())
    assert f"spent by this run: ${paid_before:.4f}" in first_out
    assert "every one sent by this run" in first_out
    # A budget stop names its spend in the same words.
    stop = " ".join(stopped.stdout.split())
    spent = re.search(r"spent by this run: \$(\d+\.\d{4}) of --max-cost \$0\.2", stop)
    assert spent is not None, stop
    assert f"a budget ran out (${spent.group(1)} spent by this run)" in stop


def test_thinking_variants_are_named_in_their_rows(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        on = f"openai:fake-vlm@{server.base_url},chat_template_kwargs=enable_thinking=true"
        off = f"openai:fake-vlm@{server.base_url},chat_template_kwargs=enable_thinking=false"
        proc = lmmprobe(
            "run", "-m", on, "-m", off, "--data", "demo,n=4", "-q", "--by", "subtask",
            "--db", tmp_path / "db", "--out", tmp_path / "o", OPENAI_API_KEY="k-test",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert any(r[:3] == ["fake-vlm", "thinking", "on"] for r in rows), proc.stdout
    assert any(r[:3] == ["fake-vlm", "thinking", "off"] for r in rows), proc.stdout
    assert "#2" not in proc.stdout
    assert f"fake-vlm thinking off = {off}" in proc.stdout  # the legend still gives the spec


@pytest.fixture(scope="module")
def synth_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any, str]:
    """Four baselines on a small synthetic set (free-form questions, several styles), twice."""
    root = tmp_path_factory.mktemp("synth")
    made = lmmprobe("synth", "generate", "--n", "16", "--size", "48", "--out", root / "set")
    assert made.returncode == 0, made.stderr
    db = root / "db"
    runs = [
        lmmprobe("run", *BASELINES, "--data", data, "--db", db, "--out", root / name)
        for name, data in (("synth", f"synth:{root / 'set'}"), ("demo", "demo"))
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    return root, runs[0], runs[1], _results(root / "demo")["run_id"]


def test_sensitivity_figures_show_their_own_scale(synth_runs: tuple[Path, Any, Any, str]) -> None:
    root, _, _, _ = synth_runs
    md = (root / "synth" / "results.md").read_text()
    assert "percent scale" not in md
    sq = re.search(r"SQ (\d+\.\d) \(their variance, points²\)", md)
    sc = re.search(r"SC (\d+\.\d) \(variance of accuracy over styles, points²\)", md)
    assert sq is not None and sc is not None, md
    assert "TFSQ" in md and "(0 = chance, 100 = perfect)" in md
    report = lmmprobe("report", root / "synth", "--format", "md", "--out", root / "report.md")
    assert report.returncode == 0, report.stderr
    text = (root / "report.md").read_text()
    assert "percent scale" not in text
    assert (
        "| SQ (points²) | SC (points²) |" in text and "SQ, SC: variances, in squared points" in text
    )
    # The baselines gave no free-form text: their leaderboard has no free-form score to show.
    board = next(line for line in text.splitlines() if line.startswith("| # | model |"))
    assert "freeform_score" not in board


def test_a_baseline_without_free_form_text_shows_no_free_form_score(
    synth_runs: tuple[Path, Any, Any, str],
) -> None:
    root, run, _, _ = synth_runs
    results = _results(root / "synth")
    assert results["models"]["first"]["metrics"]["freeform_score"]["value"] == 0.0  # kept
    table = [line.split() for line in run.stdout.splitlines()]
    header = next(r for r in table if r[:1] == ["model"])
    assert header[-2:] == ["free-form", "(0-100)"], run.stdout  # the last column
    for model in ("random", "first", "random,seed=3", "random,seed=7"):
        row = next(r for r in table if r[:1] == [model])
        assert row[-1] == "-", run.stdout
    assert "free-form score -: no text to score" in run.stdout
    md = (root / "synth" / "results.md").read_text()
    first_md = next(line for line in md.splitlines() if line.startswith("| first |"))
    assert first_md.endswith("| - |")
    assert "freeform_score `-`: random, first, random,seed=3, random,seed=7 gave no" in md


def test_the_validity_table_has_one_number_format_per_column(
    synth_runs: tuple[Path, Any, Any, str],
) -> None:
    root, _, _, demo_run = synth_runs
    synth_run = _results(root / "synth")["run_id"]
    proc = lmmprobe("runs", "validity", synth_run, demo_run, "--db", root / "db")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    body = [
        r for r in rows if r[:1] and r[0] in ("random", "first", "random,seed=3", "random,seed=7")
    ]
    assert len(body) == 4
    for r in body:
        assert re.fullmatch(r"\d\.\d{3}", r[1]) and re.fullmatch(r"\d\.\d{3}", r[3]), r


def test_the_web_apps_run_page_shows_no_free_form_score_either(
    synth_runs: tuple[Path, Any, Any, str],
) -> None:
    from tests.serve.conftest import client

    root, _, _, _ = synth_runs
    run_id = _results(root / "synth")["run_id"]
    with client(root / "db") as c:
        page = c.get(f"/runs/{run_id}").text
    cells = re.findall(
        r'<td class="metric" title="no free-form answer of this model[^"]*">-</td>', page
    )
    # Each baseline's lmmprobe free-form score; Dysca's caption score of a model that wrote no
    # text at all is not computed (`dysca_caption_metric`), so it has no cell to show.
    assert len(cells) == 4
    assert 'title="no free-form answer of this model' in page
    assert "SQ (variance, points²)" in page and "percent scale" not in page


def test_a_budget_stop_counts_answers_and_the_requests_left_unsent(tmp_path: Path) -> None:
    # The walkthrough: "all 300 answers, $0.0511, every one sent by this run" where 176 were
    # sent and 124 rows were budget errors.
    with FakeOpenAIServer() as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url},price=2.5:10,max_concurrency=1",
            "--data", "demo,n=60,seed=9", "--max-cost", "0.01", "--db", tmp_path / "db",
            "--out", tmp_path / "o", OPENAI_API_KEY="k-test",
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr  # stopped by its budget
    (model,) = _results(tmp_path / "o")["models"].values()
    stats = model["stats"]
    assert 0 < stats["errors"] < stats["requests"] == 60, stats
    answers = stats["requests"] - stats["errors"]
    out = " ".join(proc.stdout.split())
    assert (
        f"on the {stats['called']} request(s) it sent; {stats['errors']} request(s) left unsent "
        f"by the budget (no answer, no cost); answers' cost $ above: all {answers} answers, $"
    ) in out, out
    assert "all 60 answers" not in out


def test_a_budget_stop_counts_requests_left_unsent_not_rows(tmp_path: Path) -> None:
    # Re-test 20 #2: with --repeats (rows sharing a prompt share its request) the line said
    # "16 request(s) it sent; 43 request(s) left unsent" of 55 requests: 43 was the rows.
    with FakeOpenAIServer() as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url},price=2.5:10,max_concurrency=1",
            "--data", "demo,n=30,seed=9", "--repeats", "2", "--max-cost", "0.005",
            "--db", tmp_path / "db", "--out", tmp_path / "o", OPENAI_API_KEY="k-test",
        )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    (model,) = _results(tmp_path / "o")["models"].values()
    stats = model["stats"]
    assert stats["requests"] < 60, stats  # some rows share a request
    unsent = stats["requests"] - stats["called"]
    assert unsent > 0, stats
    out = " ".join(proc.stdout.split())
    assert (
        f"on the {stats['called']} request(s) it sent; {unsent} request(s) left unsent "
        "by the budget (no answer, no cost)"
    ) in out, out


def test_judging_a_budget_stopped_run_counts_its_stored_answers_not_its_errors(
    tmp_path: Path,
) -> None:
    # Re-test 20 #6: "answers' cost $ above: all 16 answers, $1.8120, 30 of them read from the
    # store": a run judged from the store reads its budget errors back too, and they were
    # counted as answers read from the store. (And the stop line still names the judged run.)
    # Every request (the model's and the judge's) is answered "A", which lmmprobe-choice reads.
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        first = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url},price=2.5:10,max_concurrency=1",
            "--data", "demo,n=30,seed=9", "--max-cost", "0.005",
            "--db", tmp_path / "db", "--out", tmp_path / "o", OPENAI_API_KEY="k-test",
        )  # fmt: skip
        assert first.returncode == 3, first.stderr
        source = _results(tmp_path / "o")
        judged = lmmprobe("judge", source["run_id"], "--db", tmp_path / "db",
                          "--judge", f"openai:judge@{server.base_url}",
                          "--judge-when", "always", "--max-cost", "none", "--out", tmp_path / "j",
                          OPENAI_API_KEY="k-test")  # fmt: skip
    assert judged.returncode == 3, judged.stderr
    (model,) = _results(tmp_path / "j")["models"].values()
    stats = model["stats"]
    answers = stats["requests"] - stats["errors"]
    assert 0 < answers < stats["cached"] == stats["requests"], stats
    out = " ".join(judged.stdout.split())
    assert f"all {answers} answers, $" in out and f"{answers} of them read from the store" in out
    assert f"{stats['errors']} of its requests were never answered" in out, out
