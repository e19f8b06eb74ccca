"""Judges through the console script (issue 26: items 1, 3, 4, 5, 6 and 8).

The model and the judges are the fake OpenAI server, scripted by prompt (`reply_table`): each
row's model answer and each judge's reply about it are fixed, so the verdicts, the paths that
decided them, the coverage and the calls the server received are known exactly.
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

CHOICE_ASK = "Say which option the answer chose"
OPEN_ASK = "You are grading a model's answer"

# Model answers by question: q1 and q2 are read by rules, q3-q6 are not (unparsed).
MODEL = [
    ("Which animal is q1?", "(A)"),
    ("Which animal is q2?", "(B)"),
    ("Which animal is q3?", "I would say the feline one"),
    ("Which animal is q4?", "Probably the barking one"),
    ("Which animal is q5?", "hmm, the grumpy one"),
    ("Which animal is q6?", "zzz unclear"),
]


def _rows(path: Path) -> Path:
    lines = [
        {"id": f"q{i}", "images": [], "question": q, "choices": ["cat", "dog"], "answer": 0}
        for i, (q, _) in enumerate(MODEL, 1)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _table(judge_replies: list[tuple[str, str]]) -> list[tuple[str, str]]:
    # Judge prompts quote the model's answer: they are matched first; then the model's rows.
    return [*judge_replies, *[(q, a) for q, a in MODEL]]


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return lmmprobe(*args, OPENAI_API_KEY="test-key")


def _results(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "results.json").read_text())
    return doc


CHOICE_JUDGE = [
    ('">\nI would say the feline one', "A"),  # correct
    ('">\nProbably the barking one', "(B)"),  # wrong
    ('">\nhmm, the grumpy one', "I cannot tell, maybe"),  # unreadable
    ('">\nzzz unclear', "!fail"),  # failing judge
]


def test_choice_judge_reads_only_what_rules_cannot(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    db, out = tmp_path / "db", tmp_path / "o"
    with FakeOpenAIServer(reply_table=_table(CHOICE_JUDGE)) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", db,
            "--out", out, "--judge", f"openai:judge-a@{url}",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        # 6 model answers, then the judge only for the 4 the rules could not read.
        assert server.requests_total == 6 + 4
    res = _results(out)
    (model,) = res["models"].values()
    judge = model["judge"]
    assert judge["protocols"] == {"lmmprobe-choice": "2"}
    assert judge["decided"] == {"rule": 2, "judge": 2, "unjudged": 2}
    assert judge["calls"][f"openai:judge-a@{url}"]["errors"] == 1
    # Judged figure: q1 right, q2 wrong (rules), q3 right, q4 wrong (judge): 2/4.
    assert model["metrics"]["judge_score"]["value"] == pytest.approx(0.5)
    assert model["metrics"]["judge_coverage"]["value"] == pytest.approx(4 / 6)
    # The headline takes the judge's verdict where the rules read nothing (q3 right, q4
    # wrong); q5 and q6, read by neither, are not correct: 2/6. The rules alone: 1/6.
    assert model["metrics"]["accuracy"]["value"] == pytest.approx(2 / 6)
    assert model["metrics"]["accuracy"]["n"] == 6
    assert model["metrics"]["accuracy_rules_only"]["value"] == pytest.approx(1 / 6)
    assert model["judged_headline"] == {
        "judges": [f"openai:judge-a@{url}"],
        "answers": 2,
        "correct": 1,
        "metrics": ["accuracy", "balanced_accuracy"],
    }
    assert "lmmprobe-choice" in res["manifest"]["judge"]["protocols"]
    assert "2 by rule, 2 by judge, 2 unjudged" in proc.stdout
    md = (out / "results.md").read_text()
    assert "## Judges" in md and "lmmprobe-choice (version 2)" in md
    # Stored verdicts, with the reason of each unjudged one.
    with sqlite3.connect(db) as conn:
        rows = dict(
            conn.execute(
                "SELECT sample_id, decided_by || ':' || COALESCE(reason, '') FROM judgements"
            )
        )
    assert rows["q1"] == "rule:" and rows["q3"] == "judge:"
    assert rows["q5"].startswith("unjudged:unreadable reply")
    assert rows["q6"].startswith("unjudged:judge error")
    # Exported rows carry their verdicts.
    export = _run("export", res["run_id"], "--db", db)
    assert export.returncode == 0, export.stderr
    by_id = {r["sample_id"]: r for r in map(json.loads, export.stdout.splitlines())}
    assert by_id["q3"]["judgements"][0]["reading"] == "A"
    assert (
        "judgements" not in by_id.get("q1", {})
        or by_id["q1"]["judgements"][0]["decided_by"] == "rule"
    )


def test_resume_asks_only_failed_judge_calls_again(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    db = tmp_path / "db"
    with FakeOpenAIServer(reply_table=_table(CHOICE_JUDGE)) as server:
        url = server.base_url
        args = ("run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", db,
                "--judge", f"openai:judge-a@{url}")  # fmt: skip
        assert _run(*args, "--out", tmp_path / "o1").returncode == 0
        server.reset_stats()
        second = _run(*args, "--out", tmp_path / "o2")
        assert second.returncode == 0, second.stderr
        # Every stored answer and judge reply is reused; only the failed judge call (q6)
        # is asked again. The unreadable reply (q5) is re-read, not re-asked.
        assert server.requests_total == 1
    (model,) = _results(tmp_path / "o2")["models"].values()
    assert model["judge"]["decided"] == {"rule": 2, "judge": 2, "unjudged": 2}


def test_judge_when_always_and_agreement_with_rules(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    out = tmp_path / "o"
    replies = [('">\n(A)', "A"), ('">\n(B)', "A"), *CHOICE_JUDGE]
    with FakeOpenAIServer(reply_table=_table(replies)) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db",
            "--out", out, "--judge", f"openai:judge-a@{url}", "--judge-when", "always",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert server.requests_total == 6 + 6
    (model,) = _results(out)["models"].values()
    assert model["judge"]["decided"] == {"rule": 0, "judge": 4, "unjudged": 2}
    with_rules = model["judge"]["agreement"]["with_rules"][f"openai:judge-a@{url}"]
    # The rules read q1 (A) and q2 (B); the judge said A for both.
    assert with_rules["items"] == 2 and with_rules["percent"] == pytest.approx(0.5)


def test_several_judges_majority(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    out = tmp_path / "o"
    # judge-b always says B, judge-c says the gold A: per answer A/B/A → majority A (q3),
    # and on q4 B/B/A → B.
    replies = [
        ('">\nI would say the feline one', "A"),
        ('">\nProbably the barking one', "B"),
        ('">\nhmm, the grumpy one', "A"),
        ('">\nzzz unclear', "B"),
    ]
    with FakeOpenAIServer(reply_table=_table(replies)) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db",
            "--out", out, "--judge", f"openai:judge-a@{url}", "--judge", f"openai:judge-b@{url}",
            "--judge", f"openai:judge-c@{url}",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        # Three judges: three distinct identities, so three calls per unparsed answer.
        assert server.requests_total == 6 + 3 * 4
    (model,) = _results(out)["models"].values()
    assert model["judge"]["decided"] == {"rule": 2, "judge": 4, "unjudged": 0}
    assert model["metrics"]["judge_coverage"]["value"] == pytest.approx(1.0)
    # q1 right, q2 wrong (rules); q3 A right, q4 B wrong, q5 A right, q6 B wrong.
    assert model["metrics"]["judge_score"]["value"] == pytest.approx(3 / 6)
    agreement = model["judge"]["agreement"]
    assert agreement["percent"] == pytest.approx(1.0) and agreement["items"] == 4
    assert agreement["fleiss_kappa"] == pytest.approx(1.0)


def test_two_judges_who_differ_cohen_kappa(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    out = tmp_path / "o"
    # judge-a: A, B, A, B on q3..q6; judge-b: A, A, A, B. Kappa of those two label lists.
    a = ["A", "B", "A", "B"]
    b = ["A", "A", "A", "B"]
    texts = [q for q in ("I would say the feline one", "Probably the barking one",
                         "hmm, the grumpy one", "zzz unclear")]  # fmt: skip
    replies = [(f'@judge-a ">\n{t}', x) for t, x in zip(texts, a, strict=True)]
    replies += [(f'@judge-b ">\n{t}', x) for t, x in zip(texts, b, strict=True)]
    with FakeOpenAIServer(reply_table=_table(replies)) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db",
            "--out", out, "--judge", f"openai:judge-a@{url}", "--judge", f"openai:judge-b@{url}",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = _results(out)["models"].values()
    agreement = model["judge"]["agreement"]
    assert agreement["items"] == 4 and agreement["percent"] == pytest.approx(0.75)
    # Cohen's kappa by hand: p_o = 3/4; p_e = (2/4)(3/4) + (2/4)(1/4) = 1/2 → 0.5.
    assert agreement["cohen_kappa"] == pytest.approx(0.5)
    # q4: the judges split 1-1 on a verdict, so it is not judged (a tie decides nothing).
    assert model["metrics"]["judge_coverage"]["value"] == pytest.approx(5 / 6)
    assert "judges agree: percent 0.750, cohen_kappa 0.500" in proc.stdout


def _open_rows(path: Path) -> Path:
    rows = [
        {"id": "o1", "images": [], "question": "Name the capital of France.", "answer": ["Paris"]},
        {"id": "o2", "images": [], "question": "Describe the sky.", "answer": ["blue"],
         "metadata": {"rubric": "mentions a colour"}},
        {"id": "o3", "images": [], "question": "What is 2+2?", "answer": ["4"]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_open_ended_graded_on_a_scale_and_own_template(tmp_path: Path) -> None:
    data = _open_rows(tmp_path / "open.jsonl")
    model_replies = [
        ("Name the capital", "Paris, of course"),
        ("Describe the sky", "It is grey"),
        ("What is 2+2", "five"),
    ]
    judge = [
        ('">\nParis, of course', "5"),
        ('">\nIt is grey', "Grade: 2"),
        ('">\nfive', "no idea"),
    ]
    with FakeOpenAIServer(reply_table=[*judge, *model_replies]) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db",
            "--out", tmp_path / "o", "--judge", f"openai:judge-a@{url}", "--judge-scale", "1-5",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = _results(tmp_path / "o")["models"].values()
    assert model["judge"]["protocols"] == {"lmmprobe-open": "2:1-5"}
    assert model["metrics"]["judge_score"]["value"] == pytest.approx(3.5)
    assert model["metrics"]["judge_coverage"]["value"] == pytest.approx(2 / 3)

    # Two judges grading: the judged figure is their mean grade; Krippendorff's alpha
    # (interval) over both judges' grades, the unreadable one missing.
    judges = [
        ('@judge-b ">\nParis, of course', "4"),
        ('@judge-b ">\nIt is grey', "1"),
        ('@judge-b ">\nfive', "1"),
        *judge,
    ]
    with FakeOpenAIServer(reply_table=[*judges, *model_replies]) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db2",
            "--out", tmp_path / "o3", "--judge", f"openai:judge-a@{url}",
            "--judge", f"openai:judge-b@{url}", "--judge-scale", "1-5",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = _results(tmp_path / "o3")["models"].values()
    # o1: (5 + 4) / 2, o2: (2 + 1) / 2, o3: judge-b alone, 1.
    assert model["metrics"]["judge_score"]["value"] == pytest.approx((4.5 + 1.5 + 1) / 3)
    from lmmprobe.metrics.agreement import krippendorff_alpha

    want = krippendorff_alpha([[5.0, 2.0, None], [4.0, 1.0, 1.0]], level="interval")
    assert model["judge"]["agreement"]["krippendorff_alpha"] == pytest.approx(want)

    # A template of one's own: a bad placeholder fails before the run, naming it.
    bad = tmp_path / "bad.txt"
    bad.write_text("Q: {question}\nA: {answr}\n")
    proc = _run(
        "run", "-m", "first", "--data", data, "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "o2", "--judge", "openai:judge-a@http://127.0.0.1:9/v1",
        "--judge-prompt", bad,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert str(bad) in proc.stderr and "{answr}" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    missing = tmp_path / "missing.txt"
    missing.write_text("Q: {question}\n")
    proc = _run(
        "run", "-m", "first", "--data", data, "-q", "--db", tmp_path / "db",
        "--judge", "openai:j@http://127.0.0.1:9/v1", "--judge-prompt", missing,
    )  # fmt: skip
    assert proc.returncode == 2 and "missing required placeholder {answer}" in proc.stderr


def test_a_judge_cut_off_inside_its_thinking_is_unjudged_as_truncated(tmp_path: Path) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    db, out = tmp_path / "db", tmp_path / "o"
    judge = [  # q3 is read from the answer after the thinking; q4-q6 stop inside it
        ('">\nI would say the feline one', "<think>Barking? (B)?</think>\n\n(A)"),
        *[(ask, "<think>It could be (A), but") for ask, _ in CHOICE_JUDGE[1:]],
    ]
    with FakeOpenAIServer(reply_table=_table(judge)) as server:
        url = server.base_url
        proc = _run(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", db,
            "--out", out, "--judge", f"openai:judge-a@{url}",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = _results(out)["models"].values()
    assert model["judge"]["decided"] == {"rule": 2, "judge": 1, "unjudged": 3}
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT sample_id, COALESCE(reason, reading) FROM judgements"))
    assert [rows[q] for q in ("q3", "q4", "q5", "q6")] == ["A", *["truncated"] * 3]
