"""Judges as a new user meets them (issue 34's walkthrough), through the console script.

`lmmprobe judge` judges a run as the store holds it, whatever became of its data file; a
judge that read nothing fails the command (``run --judge``, ``judge``, ``compare --judge``);
``--max-cost`` under ``judge`` prices the judges alone; the dry run counts what is sent; the
run table's counts say nothing of judging in a run without a judge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.choice_rows import CHOICE_ASK, choice_rows, unsure_answers
from tests.console import lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer


def _results(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "results.json").read_text())
    return doc


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_judge_reads_the_run_as_stored_after_its_data_changes(tmp_path: Path) -> None:
    # The walkthrough: after `synth filter SET --run RUN` rewrote the set, `lmmprobe judge RUN`
    # judged 334 rows where the run had 456, with no warning; with the file moved it failed
    # with "data file not found". The run is judged from the store: its rows, as recorded.
    data, db = choice_rows(tmp_path / "rows.jsonl", 6), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *unsure_answers(6)]) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge@{url}"
        done = lmmprobe_with_key(
            "run", "-m", model, "--data", data, "-q", "--db", db, "--out", tmp_path / "a"
        )
        assert done.returncode == 0, done.stderr
        stored = _results(tmp_path / "a")
        choice_rows(data, 3)  # the set rewritten: 3 of its 6 rows left
        server.reset_stats()
        proc = lmmprobe_with_key("judge", stored["run_id"], "--db", db, "-q", "--judge", judge,
                                 "--out", tmp_path / "b")  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 6  # the judge alone, about the 6 stored answers
        data.unlink()  # the set moved away
        moved = lmmprobe_with_key("judge", stored["run_id"], "--db", db, "-q", "--judge", judge,
                                  "--out", tmp_path / "c")  # fmt: skip
        assert moved.returncode == 0, moved.stderr
        assert "not found" not in moved.stderr
        assert server.requests_total == 6  # its replies stored: nothing asked again
    for out in ("b", "c"):
        judged = _results(tmp_path / out)
        assert judged["status"] == "complete"
        assert judged["data"]["samples"] == stored["data"]["samples"] == 6
        (before,) = stored["models"].values()
        (after,) = judged["models"].values()
        assert after["counts"]["rows"] == before["counts"]["rows"] == 6
        # The rules' reading is the stored run's; the headline takes the judge's where the
        # rules read none (every answer here: unsure, read by the judge as A, right).
        assert after["metrics"]["accuracy_rules_only"] == before["metrics"]["accuracy"]
        assert before["metrics"]["accuracy"]["value"] == 0.0
        assert after["metrics"]["accuracy"]["value"] == 1.0
        assert after["judged_headline"]["answers"] == 6
        assert after["judge"]["decided"] == {"rule": 0, "judge": 6, "unjudged": 0}
        # The answers' counts are the stored run's (tokens read back from the store too).
        for key in ("requests", "errors", "prompt_tokens", "completion_tokens"):
            assert after["stats"][key] == before["stats"][key], key
        assert after["stats"]["cached"] == 6


def test_a_judge_whose_every_reply_is_unreadable_fails_the_command(tmp_path: Path) -> None:
    # The walkthrough: every reply unreadable, coverage 0.000, status complete, exit 0.
    data, db = choice_rows(tmp_path / "rows.jsonl", 4), tmp_path / "db"
    table = [("@mute ", "I would rather not say."), (CHOICE_ASK, "A"), *unsure_answers(4)]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        model, mute = f"openai:fake-vlm@{url}", f"openai:mute@{url}"
        base = ("run", "-m", model, "-m", "first", "--data", data, "-q", "--db", db)
        proc = lmmprobe_with_key(*base, "--out", tmp_path / "a", "--judge", mute)
        assert proc.returncode == 1, proc.stderr
        (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
        assert (
            f"judge {mute}: none of its 4 replies could be read (first: 'I would rather not say.')"
        ) in line
        assert "is judging_failed" in line
        results = _results(tmp_path / "a")
        assert results["status"] == "judging_failed"
        assert results["models"][model]["judge"]["unjudged"] == {"unreadable reply": 4}
        # `lmmprobe judge` reads the stored replies again, and fails the same way.
        run_id = results["run_id"]
        judged = lmmprobe_with_key("judge", run_id, "--db", db, "-q", "--judge", mute)
        assert judged.returncode == 1
        assert f"judge {mute}: none of its 4 replies could be read" in _flat(judged.stderr)
        # compare --judge: every pairwise reply unreadable fails too (before: exit 0).
        compared = lmmprobe_with_key("compare", run_id, "--db", db, "-m", model, "-m", "first",
                                     "--judge", mute)  # fmt: skip
        assert compared.returncode == 1, compared.stderr
        assert (
            f"judge {mute}: none of its 8 replies could be read (first: 'I would rather not say.')"
        ) in _flat(compared.stderr)
        # A judge that reads its replies passes both (the rules read `first`'s answers).
        good = f"openai:judge@{url}"
        table_ok = lmmprobe_with_key("judge", run_id, "--db", db, "-q", "--judge", good)
        assert table_ok.returncode == 0, table_ok.stderr


def test_compare_judge_failing_every_call_fails_the_command(tmp_path: Path) -> None:
    data, db = choice_rows(tmp_path / "rows.jsonl", 3), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[("@gone ", "!missing")]) as server:
        url = server.base_url
        model, gone = f"openai:fake-vlm@{url}", f"openai:gone@{url}"
        done = lmmprobe_with_key(
            "run", "-m", model, "-m", "first", "--data", data, "-q", "--db", db
        )
        assert done.returncode == 0, done.stderr
        proc = lmmprobe_with_key(
            "compare", "latest", "--db", db, "-m", model, "-m", "first", "--judge", gone
        )
    assert proc.returncode == 1
    assert f"judge {gone}: every one of 6 call(s) failed: " in _flat(proc.stderr)


def test_max_cost_under_judge_prices_the_judges_alone(tmp_path: Path) -> None:
    # The walkthrough: `judge RUN --judge 'J,price=2.5:10' --max-cost 0.001` was refused for
    # the stored model's price ("add price=IN:OUT to the model spec"), though its stored
    # answers cost nothing; two unpriced judges read "'A', 'B' has none".
    data, db = choice_rows(tmp_path / "rows.jsonl", 4), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *unsure_answers(4)]) as server:
        url = server.base_url
        model = f"openai:fake-vlm@{url}"
        done = lmmprobe_with_key(
            "run", "-m", model, "--data", data, "-q", "--db", db, "--out", tmp_path / "a"
        )
        assert done.returncode == 0, done.stderr
        run_id = _results(tmp_path / "a")["run_id"]
        priced = f"openai:judgeP@{url},price=2.5:10"
        proc = lmmprobe_with_key(
            "judge", run_id, "--db", db, "-q", "--judge", priced, "--max-cost", "0.001",
            "--out", tmp_path / "b",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        results = _results(tmp_path / "b")
        assert results["status"] == "complete"
        assert results["spec"]["max_cost"] == 0.001
        (stats,) = results["models"].values()
        assert stats["judge"]["calls"][priced]["cost"] > 0
        two = lmmprobe_with_key("judge", run_id, "--db", db, "--judge", f"openai:a@{url}",
                                "--judge", f"openai:b@{url}", "--max-cost", "1")  # fmt: skip
    assert two.returncode == 2
    assert (
        f"--max-cost needs a price for every judge; 'openai:a@{url}' and 'openai:b@{url}' "
        "have none: add price=IN:OUT to their specs"
    ) in _flat(two.stderr)


def test_the_judge_dry_run_counts_what_is_sent(tmp_path: Path) -> None:
    # The walkthrough: `judge latest --judge J --dry-run` said 60 calls; the run sent 58 (two
    # demo answers share their judge prompt, asked once) while reporting "60 by judge".
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A")]) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge2@{url}"
        done = lmmprobe_with_key("run", "-m", model, "-q", "--db", db)
        assert done.returncode == 0, done.stderr
        dry = _flat(
            lmmprobe_with_key("judge", "latest", "--db", db, "--judge", judge, "--dry-run").stdout
        )
        found = re.search(r"dry run: (\d+) judge call\(s\) would be sent", dry)
        assert found, dry
        planned = int(found.group(1))
        again = lmmprobe_with_key("run", "-m", model, "--db", db, "--judge", judge, "--dry-run")
        assert f"and {planned} judge call(s) would be sent" in _flat(again.stdout)
        server.reset_stats()
        proc = lmmprobe_with_key("judge", "latest", "--db", db, "-q", "--judge", judge)
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == planned
    out = _flat(proc.stdout)
    verdicts = int(re.search(r"(\d+) by judge", out).group(1))  # type: ignore[union-attr]
    assert planned < verdicts  # answers that share a judge prompt
    assert "share(s) another answer's judge prompt (asked once)" in dry
    # The run's own account adds up: requests sent for the verdicts counted.
    assert (
        f"judge {judge}: {planned} requests for {verdicts} verdicts (answers whose judge "
        f"prompts are identical share one request and its verdict), 0 from the store, "
        f"{planned} sent"
    ) in out


def test_a_run_without_a_judge_says_nothing_of_judging(tmp_path: Path) -> None:
    pytest.importorskip("pycocoevalcap")  # caption rows are scored as a corpus
    # The walkthrough: the run table's "judged" column sat beside "coverage 0.000", and a run
    # with no judge printed "152 rows not judged".
    rows = [
        {"id": "c0", "images": [], "question": "Which animal?", "choices": ["cat", "dog"],
         "answer": 0},
        {"id": "o0", "images": [], "question": "Describe it.", "formulation": "caption",
         "answer": ["a cat"]},
        {"id": "o1", "images": [], "question": "Describe that.", "formulation": "caption",
         "answer": ["a dog"]},
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = lmmprobe_with_key("run", "-m", "first", "--data", data, "-q", "--db", tmp_path / "db",
                             "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "judged" not in proc.stdout
    out = _flat(proc.stdout)
    assert "model rows accuracy n accuracy [95% CI]" in out
    assert "first: 2 rows not in accuracy (2 free-form/caption with no text)" in out
    md = (tmp_path / "o" / "results.md").read_text()
    assert "| model | rows | accuracy n |" in md
