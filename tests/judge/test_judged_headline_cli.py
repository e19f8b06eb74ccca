"""A judge's reading reaches the headline, named as judged (issue 36, item 5, second half).

Thirty single-choice items through the console script, the model and the judge the fake OpenAI
server scripted by prompt: the rules read 10 answers (all right), the judge reads 15 of the 20
they could not (all right) and replies unreadably about the last 5. Before, the headline
``accuracy`` stayed at the rules' 10/30 while ``judge_score`` read 1.0 over 25 answers; now it
is 25/30, named as judged, with the rules' 10/30 beside it as ``accuracy_rules_only``. The 5
answers read by neither stay in the denominator as not correct, and out of ``judge_coverage``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.report import rebuild_results
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

READ = "(A)"  # the rules read it: right
FELINE = "I would say the feline one"  # the rules cannot; the judge reads A: right
UNCLEAR = "zzz unclear"  # neither can: the judge's reply is unreadable


def _answers() -> list[str]:
    return [READ] * 10 + [FELINE] * 15 + [UNCLEAR] * 5


def _data(path: Path) -> Path:
    rows = [
        {
            "id": f"q{i:02d}",
            "images": [],
            "question": f"Which animal is item {i:02d}?",
            "choices": ["cat", "dog"],
            "answer": 0,
            # Two --by groups: the first holds every rule-read answer and 5 the judge read.
            "metadata": {"part": "first" if i <= 15 else "second"},
        }
        for i in range(1, 31)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _table() -> list[tuple[str, str]]:
    # A judge prompt quotes the model's answer after `">` and a newline: matched first.
    judge = [(f'">\n{FELINE}', "A"), (f'">\n{UNCLEAR}', "I cannot tell, maybe")]
    model = [(f"Which animal is item {i:02d}?", a) for i, a in enumerate(_answers(), 1)]
    return [*judge, *model]


def _run(tmp_path: Path, *judge: str, name: str = "o") -> tuple[Any, dict[str, Any], Path]:
    data, db, out = _data(tmp_path / "rows.jsonl"), tmp_path / "db", tmp_path / name
    with FakeOpenAIServer(reply_table=_table()) as server:
        url = server.base_url
        flags = [a.replace("URL", url) for a in judge]
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "--db", db, "--out", out,
            "--by", "part", "--bootstrap", "200", *flags, OPENAI_API_KEY="test-key",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads((out / "results.json").read_text())
    return proc, doc, db


def _value(metrics: dict[str, Any], name: str) -> float:
    value: float = metrics[name]["value"]
    return value


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any], Path]:
    return _run(tmp_path_factory.mktemp("judged"), "--judge", "openai:judge@URL")


def test_the_headline_takes_the_judges_reading_and_says_so(
    judged: tuple[Any, dict[str, Any], Path],
) -> None:
    proc, doc, db = judged
    (model,) = doc["models"].values()
    metrics = model["metrics"]
    # 10 read by rules + 15 by the judge, of 30 items: every item in the denominator.
    assert _value(metrics, "accuracy") == pytest.approx(25 / 30)
    assert metrics["accuracy"]["n"] == 30
    assert _value(metrics, "accuracy_rules_only") == pytest.approx(10 / 30)
    assert metrics["accuracy_rules_only"]["n"] == 30
    # The judged figures are unchanged: the judge read 25 (with the rules' 10), 5 unread.
    assert _value(metrics, "judge_score") == pytest.approx(1.0)
    assert metrics["judge_score"]["n"] == 25
    assert _value(metrics, "judge_coverage") == pytest.approx(25 / 30)
    # The unparsed rate still counts what the rules could not read.
    assert _value(metrics, "unparsed_rate") == pytest.approx(20 / 30)
    # The intervals are drawn from the judged verdicts: the rules-only one lies far below.
    assert metrics["accuracy"]["low"] > metrics["accuracy_rules_only"]["high"]
    headline = model["judged_headline"]
    assert headline["answers"] == 15 and headline["correct"] == 15
    assert headline["metrics"] == ["accuracy", "balanced_accuracy"]
    (judge,) = headline["judges"]
    assert judge.startswith("openai:judge@")
    # The printed headline shows the judged figure and a line naming it as judged.
    assert re.search(r"\b0\.833\b", proc.stdout), proc.stdout
    out = " ".join(proc.stdout.split())  # the terminal wraps long lines
    assert "accuracy, balanced_accuracy judged: 15 answer(s) the rules could not read" in out
    assert "accuracy_rules_only 0.333" in out
    md = (db.parent / "o" / "results.md").read_text()
    assert "Judged: " in md and "accuracy_rules_only 0.333" in md


def test_by_groups_take_the_judges_reading_too(judged: tuple[Any, dict[str, Any], Path]) -> None:
    _, doc, _ = judged
    (model,) = doc["models"].values()
    first, second = model["breakdown"]["part"]["first"], model["breakdown"]["part"]["second"]
    # first: 10 by rules and 5 by the judge, all right; second: 10 by the judge, 5 unread.
    assert _value(first, "accuracy") == pytest.approx(1.0)
    assert _value(first, "accuracy_rules_only") == pytest.approx(10 / 15)
    assert _value(second, "accuracy") == pytest.approx(10 / 15)
    assert _value(second, "accuracy_rules_only") == pytest.approx(0.0)
    assert second["accuracy"]["n"] == 15


def test_results_rebuilt_from_the_store_give_the_same_figures(
    judged: tuple[Any, dict[str, Any], Path],
) -> None:
    _, doc, db = judged
    with Store(db, read_only=True) as store:
        rebuilt = rebuild_results(store, doc["run_id"]).model_dump(mode="json")
    for spec, model in doc["models"].items():
        assert rebuilt["models"][spec]["metrics"] == model["metrics"]
        assert rebuilt["models"][spec]["breakdown"] == model["breakdown"]
        assert rebuilt["models"][spec]["judged_headline"] == model["judged_headline"]
    # The report, which reads the stored rows as Scores, shows the same headline.
    report = lmmprobe("report", doc["run_id"], "--db", db, "--format", "md")
    assert report.returncode == 0, report.stderr
    assert "0.833" in report.stdout
    # ... and names it as judged.
    shown = " ".join(report.stdout.split())
    assert "accuracy, balanced_accuracy judged: 15 answer(s) the rules could not read" in shown


def test_without_a_judge_the_headline_is_the_rules_and_names_nothing(tmp_path: Path) -> None:
    proc, doc, _ = _run(tmp_path)
    (model,) = doc["models"].values()
    assert _value(model["metrics"], "accuracy") == pytest.approx(10 / 30)
    assert "accuracy_rules_only" not in model["metrics"]
    assert "judged_headline" not in model
    assert "judged:" not in proc.stdout
    assert "Judged:" not in (tmp_path / "o" / "results.md").read_text()


def test_serves_run_page_names_the_judged_headline(
    judged: tuple[Any, dict[str, Any], Path],
) -> None:
    # The web app showed the judged figure with no word that a judge decided it.
    from tests.serve.conftest import client

    _, doc, db = judged
    page = client(db).get(f"/runs/{doc['run_id']}")
    assert page.status_code == 200
    (line,) = re.findall(r'<p class="sub judged-headline">(.*?)</p>', page.text, re.S)
    assert "accuracy" in line and "15 answer(s) the rules could not read" in line, line
    assert "(15 right)" in line and "openai:judge@" in line
