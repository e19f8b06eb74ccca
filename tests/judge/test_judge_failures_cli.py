"""A judging step that fails, a judge that fails every call, and why answers are unjudged
(issue 34, items 3, 5 and 14), through the console script with the fake OpenAI server.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.choice_rows import CHOICE_ASK, choice_rows, unsure_answers
from tests.console import as_from_a_shell, lmmprobe_with_key
from tests.serve.conftest import client

from lmmprobe.testing.openai_server import FakeOpenAIServer


def _status(db: Path) -> dict[str, str]:
    listed = lmmprobe_with_key("runs", "--db", db, "--format", "json", "--limit", "0")
    assert listed.returncode == 0, listed.stderr
    return {r["id"]: r["status"] for r in json.loads(listed.stdout)}


def _results(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "results.json").read_text())
    return doc


def _run_id(stderr: str) -> str:
    found = re.search(r"run (\d{8}-\d{6}-[0-9a-f]{6})", stderr)
    assert found, stderr
    return found.group(1)


def test_a_judging_step_that_raises_leaves_the_run_judging_failed_and_resumable(
    tmp_path: Path,
) -> None:
    # The case: the answers are in, then the judging step raises (a judge server that
    # will not start). Before, the run stayed `complete` with no results.
    data, db = choice_rows(tmp_path / "rows.jsonl"), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A")]) as server:
        model = f"openai:fake-vlm@{server.base_url}"
        base = ("run", "-m", model, "--data", data, "-q", "--db", db)
        failed = lmmprobe_with_key(
            *base, "--out", tmp_path / "a", "--judge", "vllm:judge,command=false"
        )
        assert failed.returncode == 1, failed.stderr
        assert "judging failed: ServerStartError" in failed.stderr
        assert "status judging_failed" in failed.stderr
        assert "the same command resumes it" in failed.stderr
        run_id = _run_id(failed.stderr)
        assert _status(db)[run_id] == "judging_failed"
        assert server.requests_total == 4  # the answers, stored
        # Resumed with a judge that works: the answers come from the store, only the
        # judge is asked, and the run is complete.
        server.reset_stats()
        judge = f"openai:judge@{server.base_url}"
        again = lmmprobe_with_key(*base, "--out", tmp_path / "b", "--judge", judge)
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 4  # 4 judge calls, no answer asked again
        assert _results(tmp_path / "b")["status"] == "complete"
        # `lmmprobe judge` completes the failed run too, asking nothing it has stored.
        server.reset_stats()
        judged = lmmprobe_with_key(
            "judge", run_id, "--db", db, "-q", "--judge", judge, "--out", tmp_path / "c"
        )
        assert judged.returncode == 0, judged.stderr
        assert server.requests_total == 0
        assert _results(tmp_path / "c")["status"] == "complete"


def test_a_judge_failing_every_call_fails_the_run_naming_it(tmp_path: Path) -> None:
    # The case: a misspelt judge model, every call a 404. Before: exit 0, coverage 0.
    data, db = choice_rows(tmp_path / "rows.jsonl"), tmp_path / "db"
    table = [("@gpt-4o-mni ", "!missing"), (CHOICE_ASK, "A")]
    with FakeOpenAIServer(reply_table=table) as server:
        model = f"openai:fake-vlm@{server.base_url}"
        typo = f"openai:gpt-4o-mni@{server.base_url}"
        base = ("run", "-m", model, "--data", data, "-q", "--db", db)
        proc = lmmprobe_with_key(*base, "--out", tmp_path / "a", "--judge", typo)
        assert proc.returncode == 1, proc.stderr
        (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
        assert f"judge {typo}: every one of 4 call(s) failed" in line
        assert "does not exist" in line
        assert "is judging_failed" in line
        results = _results(tmp_path / "a")
        assert results["status"] == "judging_failed"
        (stats,) = results["models"].values()
        assert stats["judge"]["unjudged"] == {"failed call": 4}
        assert (
            "its verdicts: 0 read, 4 unjudged: 4 failed call(s) (asked again by the same command)"
        ) in " ".join(proc.stdout.split())
        # `lmmprobe judge` with the same judge fails the same way.
        judged = lmmprobe_with_key("judge", results["run_id"], "--db", db, "-q", "--judge", typo)
        assert judged.returncode == 1, judged.stderr
        assert f"judge {typo}: every one of 4 call(s) failed" in judged.stderr
        # Two judges, one failing: still a failure (the other's verdicts are kept).
        good = f"openai:judge@{server.base_url}"
        two = lmmprobe_with_key(*base, "--out", tmp_path / "b", "--judge", good, "--judge", typo)
        assert two.returncode == 1
        assert f"judge {typo}: every one of" in two.stderr
        assert two.stderr.count("every one of") == 1  # the judge that answered is not named


def test_two_judges_one_misspelt_counts_each_judges_verdicts_and_fails_the_run(
    tmp_path: Path,
) -> None:
    # Hostile re-test #13: two judges, the second answering 404 (`model_not_found`) on every
    # call. Before, the terminal said "4 by judge, 0 unjudged" (answers) and then "unjudged
    # verdicts: 4 failed call(s)" (the judges' verdicts pooled), and the 404 read
    # `bad_request: HTTP 404`. Now the answers and each judge's verdicts are counted apart,
    # the 404 is `not_found` and says the name is probably misspelt, and the judge that
    # failed every call fails the run (issue 34, item 5, judge by judge).
    data, db = choice_rows(tmp_path / "rows.jsonl"), tmp_path / "db"
    table = [("@judgeB ", "!missing"), (CHOICE_ASK, "A"), *unsure_answers(4)]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        good, typo = f"openai:judgeA@{url}", f"openai:judgeB@{url}"
        proc = lmmprobe_with_key(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", db,
            "--out", tmp_path / "o", "--judge", good, "--judge", typo,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    out = " ".join(proc.stdout.split())
    # Answers: every one decided by the judge that answered; the same line says that half the
    # verdicts were lost (retest 3, item 12: "0 unjudged" above "4 unjudged" read as a
    # contradiction).
    assert (
        "answers judged (lmmprobe-choice v2): 0 by rule, 4 by judge, 0 unjudged (answers no "
        "judge read); of the judges' 8 verdicts, 4 read and 4 unjudged"
    ) in out
    # Verdicts, judge by judge: each judge's read and unjudged add up to its 4.
    assert (
        f"judge {good}: 4 requests, 0 from the store, 4 sent, 0 errors; its verdicts: 4 read" in out
    )
    assert (
        f"judge {typo}: 4 requests, 0 from the store, 4 sent, 4 errors; its verdicts: 0 read, "
        "4 unjudged: 4 failed call(s) (asked again by the same command)"
    ) in out
    assert "unjudged verdicts:" not in out  # no pooled count to contradict the answers'
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert f"judge {typo}: every one of 4 call(s) failed: not_found: HTTP 404:" in line
    assert "serves no model 'judgeB': the model name is probably misspelt" in line
    assert "bad_request" not in line
    assert f"judge {good}" not in line  # the judge that answered is not blamed
    results = _results(tmp_path / "o")
    assert results["status"] == "judging_failed"
    assert _status(db) == {results["run_id"]: "judging_failed"}
    (stats,) = results["models"].values()
    calls = stats["judge"]["calls"]
    assert (calls[good]["read"], calls[good]["unjudged"]) == (4, {})
    assert (calls[typo]["read"], calls[typo]["unjudged"]) == (0, {"failed call": 4})
    assert stats["judge"]["decided"] == {"rule": 0, "judge": 4, "unjudged": 0}
    with sqlite3.connect(db) as conn:
        kinds = {
            k
            for (k,) in conn.execute(
                "SELECT error_type FROM responses WHERE error_type IS NOT NULL"
            )
        }
    assert kinds == {"not_found"}


def test_partial_judge_failures_pass_and_say_why_answers_are_unjudged(tmp_path: Path) -> None:
    data = choice_rows(tmp_path / "rows.jsonl")
    table = [
        # The judge prompt quotes the answer in a delimited block (`judge.protocol.delimit`).
        ('">\nunsure about item0', "!fail"),  # a failed call
        ('">\nunsure about item1', "no idea at all"),  # an unreadable reply
        (CHOICE_ASK, "A"),
    ]
    answers = unsure_answers(4)
    with FakeOpenAIServer(reply_table=[*table, *answers]) as server:
        url = server.base_url
        proc = lmmprobe_with_key(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db",
            tmp_path / "db", "--out", tmp_path / "o", "--judge", f"openai:judge@{url}",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "2 by judge, 2 unjudged" in out
    assert (
        "its verdicts: 2 read, 2 unjudged: 1 failed call(s) (asked again by the same command), "
        "1 unreadable reply(ies) (stored; read again, not asked again)"
    ) in out
    (stats,) = _results(tmp_path / "o")["models"].values()
    assert stats["judge"]["unjudged"] == {"failed call": 1, "unreadable reply": 1}
    assert _results(tmp_path / "o")["status"] == "complete"
    # serve's sample page says what the next run does with each, as the code does (before,
    # every unjudged answer read "asked again on resume", the unreadable one included).
    run_id = _results(tmp_path / "o")["run_id"]
    with client(tmp_path / "db") as c:
        failed = " ".join(c.get(f"/runs/{run_id}/samples/q0").text.split())
        unreadable = " ".join(c.get(f"/runs/{run_id}/samples/q1").text.split())
    assert "its failed judge call is asked again on resume" in failed
    assert "read again on resume, not asked again" in unreadable
    assert "asked again on resume" not in unreadable.replace("not asked again", "")


def test_an_imported_run_is_judged_from_the_store(tmp_path: Path) -> None:
    # Before: `lmmprobe judge` on an imported run said "unknown model backend 'other tool'".
    rows = [
        {"qid": f"q{i}", "answer": f"it is red {i}", "gt": "red"} for i in range(3)
    ]  # fmt: skip
    (tmp_path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "db"
    imported = lmmprobe_with_key(
        "import", tmp_path / "preds.jsonl", "--model", "other tool", "--db", db,
        "--field", "id=qid,prediction=answer,gold=gt", "--out", tmp_path / "imp",
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    run_id = _results(tmp_path / "imp")["run_id"]
    table = [("it is red 0", "correct"), ("it is red 1", "incorrect"), ("it is red 2", "hmm")]
    with FakeOpenAIServer(reply_table=table) as server:
        judge = f"openai:judge@{server.base_url}"
        # A dry run counts from the stored run too (before, it was refused for an import:
        # it counted from the data, which an import does not carry).
        dry = lmmprobe_with_key("judge", run_id, "--db", db, "--judge", judge, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "dry run: 3 judge call(s) would be sent" in " ".join(dry.stdout.split())
        proc = lmmprobe_with_key(
            "judge", run_id, "--db", db, "-q", "--judge", judge, "--out", tmp_path / "j"
        )
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 3  # the judge only: no model, no data reloaded
        again = lmmprobe_with_key("judge", run_id, "--db", db, "--judge", judge, "--dry-run")
        assert "dry run: 0 judge call(s) would be sent" in " ".join(again.stdout.split())
    results = _results(tmp_path / "j")
    assert results["status"] == "complete"
    assert results["manifest"]["origin"]["tool"] == "mapped"  # still an import
    judged = results["models"]["other tool"]["judge"]
    assert judged["decided"] == {"rule": 0, "judge": 2, "unjudged": 1}
    assert judged["unjudged"] == {"unreadable reply": 1}
    assert results["models"]["other tool"]["metrics"]["judge_score"]["value"] == 0.5


def test_the_fake_server_command_scripts_a_judge(tmp_path: Path) -> None:
    # Before: the fake server's scripted replies were Python-only, though docs/judges.md lists
    # it as a judge spec.
    table = tmp_path / "judge.jsonl"
    table.write_text(
        json.dumps({"contains": CHOICE_ASK, "reply": "B"}) + "\n"
        + json.dumps({"contains": "Which animal", "reply": "I would pick the second"}) + "\n"
    )  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--port", "0",
         "--reply-table", str(table)],
        preexec_fn=as_from_a_shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        found = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", server.stdout.readline())
        assert found
        url = found.group(1)
        proc = lmmprobe_with_key(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", choice_rows(tmp_path / "rows.jsonl"),
            "-q", "--db", tmp_path / "db", "--out", tmp_path / "o",
            "--judge", f"openai:judge@{url}",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=60)
    (stats,) = _results(tmp_path / "o")["models"].values()
    # The rules cannot read "I would pick the second"; the scripted judge reads B (wrong).
    assert stats["judge"]["decided"] == {"rule": 0, "judge": 4, "unjudged": 0}
    assert stats["metrics"]["judge_score"]["value"] == 0.0


def test_a_bad_reply_table_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"contains": "a", "reply": "b"}\n{"contains": "a", "reply": 3}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "lmmprobe.testing.openai_server", "--reply-table", str(bad)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert f"{bad}:2: an entry must be" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_judge_command_dry_run_max_cost_and_prices(tmp_path: Path) -> None:
    # Before: `lmmprobe judge` had no --dry-run, --max-cost or --prices, and the run's dry-run
    # summary left the judge calls out.
    data, db = choice_rows(tmp_path / "rows.jsonl"), tmp_path / "db"
    answers = [(f"Which animal is item{i}?", f"unsure {i}") for i in range(4)]
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A"), *answers]) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge@{url}"
        done = lmmprobe_with_key(
            "run", "-m", model, "--data", data, "-q", "--db", db, "--out", tmp_path / "a"
        )
        assert done.returncode == 0, done.stderr
        run_id = _results(tmp_path / "a")["run_id"]
        prices = tmp_path / "prices.json"
        prices.write_text(json.dumps({"judge": {"input": 0, "output": 1000}}))
        server.reset_stats()
        dry = lmmprobe_with_key(
            "judge", run_id, "--db", db, "--judge", judge, "--prices", prices, "--dry-run"
        )
        assert dry.returncode == 0, dry.stderr
        assert server.requests_total == 0
        out = " ".join(dry.stdout.split())
        assert f"judge {judge} on {model}: 4 call(s)" in out
        # Only the judge is paid for: the stored answers cost nothing now (issue 34 walkthrough:
        # before, the model's missing price was counted and the summary spoke of its requests).
        assert "dry run: 4 judge call(s) would be sent (completions cost at most $0.0320)" in out
        assert "model request" not in out
        # --max-cost needs a price for the judge, and for it alone.
        unpriced = lmmprobe_with_key(
            "judge", run_id, "--db", db, "--judge", judge, "--max-cost", "1"
        )
        assert unpriced.returncode == 2
        assert (
            f"--max-cost needs a price for every judge; '{judge}' has none: add price=IN:OUT "
            "to its spec"
        ) in " ".join(unpriced.stderr.split())
        judged = lmmprobe_with_key(
            "judge", run_id, "--db", db, "-q", "--judge", judge, "--prices", prices,
            "--max-cost", "5", "--out", tmp_path / "b",
        )  # fmt: skip
        assert judged.returncode == 0, judged.stderr
        assert server.requests_total == 4  # the judge only
    results = _results(tmp_path / "b")
    assert results["status"] == "complete"
    assert results["spec"]["max_cost"] == 5
    (stats,) = results["models"].values()
    assert stats["judge"]["calls"][judge]["cost"] > 0  # priced by the --prices table


def test_a_judge_spec_that_cannot_work_is_refused_before_any_model_is_asked(
    tmp_path: Path,
) -> None:
    # Re-test 13 #1: every model was asked (and paid), then the run ended `judging_failed`
    # with "judging failed: ValueError: openai backend: ...". #11: rich read `:x:` as an emoji.
    data, db = choice_rows(tmp_path / "rows.jsonl"), tmp_path / "db"
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, "A")]) as server:
        model = f"openai:fake-vlm@{server.base_url}"
        base = ("run", "-m", model, "--data", data, "-q", "--db", db, "--out", tmp_path / "o")
        for judge, says in [
            (f"openai:judge@{server.base_url},timeout=-1", "option timeout='-1' must be"),
            (f"openai:judge@{server.base_url},bogus=1", "unknown option(s) ['bogus']"),
            ("nosuch:x", "unknown model backend 'nosuch'"),
        ]:
            refused = lmmprobe_with_key(*base, "--judge", judge)
            assert refused.returncode == 2, refused.stderr
            errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
            assert len(errors) == 1 and errors[0].startswith(f"error: --judge {judge}: "), errors
            assert says in errors[0]
            assert server.requests_total == 0
        assert not db.exists() or _status(db) == {}
        done = lmmprobe_with_key(*base)
        assert done.returncode == 0, done.stderr
        run_id = _run_id(done.stderr + done.stdout)
        # `lmmprobe judge` refuses it as well, recording no new run.
        again = lmmprobe_with_key(
            "judge", run_id, "--db", db, "-q", "--judge", f"openai:j@{server.base_url},bogus=1"
        )
        assert again.returncode == 2, again.stderr
        assert "error: --judge openai:j@" in again.stderr
        assert list(_status(db)) == [run_id]


def test_a_judges_think_option_that_cannot_be_read_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    # Re-test 19: a judge's `think=` value was read only when its first reply was: `run` asked
    # (and paid) every model, then ended `judging_failed` with "judging failed: ValueError:
    # think='bogus' ..."; `lmmprobe judge` recorded such a run; `compare --judge` and `arena
    # judge` sent their judge calls, then failed. A model's think= is refused at the start.
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=[("", "A")]) as server:
        judge = f"openai:judge@{server.base_url},think=bogus"
        base = ("--db", db, "-q")
        made = lmmprobe_with_key("run", "-m", "random", "-m", "first", "--data", "demo,n=3", *base)
        assert made.returncode == 0, made.stderr
        run_id = _run_id(made.stdout + made.stderr)
        commands = [
            ("run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=3", *base),
            ("judge", run_id, *base),
            ("compare", run_id, "-m", "random", "-m", "first", "--db", db),
            ("arena", "judge", "--db", db),
        ]
        for command in commands:
            proc = lmmprobe_with_key(*command, "--judge", judge)
            assert proc.returncode == 2, (command, proc.stdout + proc.stderr)
            errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
            assert len(errors) == 1, (command, proc.stderr)
            assert errors[0].startswith(f"error: --judge {judge}: think='bogus': expected off"), (
                command,
                errors,
            )
            assert server.requests_total == 0, command
    assert list(_status(db)) == [run_id]  # nothing recorded but the first run


def test_a_judge_whose_api_key_is_not_set_is_refused_before_any_model_is_asked(
    tmp_path: Path,
) -> None:
    # Re-test 19: a model's missing key is refused at the start, a judge's was found when the
    # judging step built it: every model asked (and paid) first, then "judging failed:
    # ValueError: no API key ...". The dry run, which sends nothing, still plans it.
    db = tmp_path / "db"
    judge = "openai:gpt-4o@https://api.example.invalid/v1,key_env=LMMPROBE_RETEST19_NO_KEY"
    with FakeOpenAIServer() as server:
        model = f"openai:fake-vlm@{server.base_url}"
        base = ("--data", "demo,n=2", "--db", db, "-q", "--judge", judge)
        refused = lmmprobe_with_key("run", "-m", model, *base)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert server.requests_total == 0
        assert refused.stderr.strip() == (
            f"error: --judge {judge}: no API key: set the environment variable "
            "LMMPROBE_RETEST19_NO_KEY (or name another with key_env=VAR)"
        ), refused.stderr
        assert not db.exists() or _status(db) == {}
        planned = lmmprobe_with_key("run", "-m", model, *base, "--dry-run")
        assert planned.returncode == 0, planned.stderr
        made = lmmprobe_with_key("run", "-m", model, "--data", "demo,n=2", "--db", db, "-q")
        assert made.returncode == 0, made.stderr
        run_id = _run_id(made.stdout + made.stderr)
        again = lmmprobe_with_key("judge", run_id, "--db", db, "-q", "--judge", judge)
        assert again.returncode == 2, again.stderr
        assert "no API key: set the environment variable LMMPROBE_RETEST19_NO_KEY" in again.stderr
        assert list(_status(db)) == [run_id]
