"""``lmmprobe compare --audit``: two runs' differing verdicts by cause, through the console script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe


def _ok(*args: str | Path) -> str:
    proc = lmmprobe(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    tmp = tmp_path_factory.mktemp("audit")
    db = tmp / "db"
    _ok("run", "-m", "random", "-m", "first", "-d", "demo,n=40", "-q", "--db", db, "--out", tmp)
    results = json.loads((tmp / "results.json").read_text())
    return db, results["run_id"]


def test_compare_audit_explains_the_whole_gap(run: tuple[Path, str]) -> None:
    db, run_id = run
    both = ("compare", run_id, "-m", "random", "-m", "first", "--db", db, "-f", "json")
    plain: dict[str, Any] = json.loads(_ok(*both))
    doc: dict[str, Any] = json.loads(_ok(*both, "--audit"))
    # The same pairs and the same paired statistics as `compare`, seen from B's side.
    assert doc["n"] == plain["n"]
    assert doc["difference"] == pytest.approx(-plain["difference"])
    assert doc["mcnemar_p"] == pytest.approx(plain["mcnemar_p"])
    assert doc["gap"] == plain["b_only_correct"] - plain["a_only_correct"]
    # Every differing item has one cause, and the causes add up to the gap.
    assert len(doc["items"]) == plain["differ_total"]
    assert sum(c["net"] for c in doc["causes"].values()) == doc["gap"]
    # Two models gave different answers: that is the cause, not the reading.
    assert set(doc["causes"]) == {"answer"}


def test_compare_audit_table_names_causes(run: tuple[Path, str]) -> None:
    db, run_id = run
    out = _ok("compare", run_id, "-m", "random", "-m", "first", "--db", db, "--audit")
    assert "different model answer:" in out
    assert "on 40 paired items: gap" in out
    assert "McNemar p =" in out


def test_compare_audit_of_an_imported_run_and_a_lmmprobe_run(tmp_path: Path) -> None:
    # A lmmprobe run of `first`, and "another tool's" file of the same answers (a third of
    # them replaced by the gold text) imported as a run: the same raw answer read two ways is
    # extraction, a different answer is a different model answer.
    db = tmp_path / "db"
    _ok("run", "-m", "first", "-d", "demo,n=12", "-q", "--db", db, "--out", tmp_path / "a")
    ours = json.loads((tmp_path / "a" / "results.json").read_text())["run_id"]
    exported = _ok("export", ours, "--db", db, "--format", "jsonl")
    rows = [json.loads(line) for line in exported.splitlines() if line.strip()]
    lines = []
    for i, r in enumerate(rows):
        text = r["gold_text"] if i % 3 == 0 else r["text"]
        lines.append(json.dumps({"qid": r["sample_id"], "answer": text, "gt": r["gold_text"]}))
    (tmp_path / "preds.jsonl").write_text("\n".join(lines) + "\n")
    _ok(
        "import", tmp_path / "preds.jsonl", "--model", "other-tool",
        "--field", "id=qid,prediction=answer,gold=gt", "--db", db, "--out", tmp_path / "b",
    )  # fmt: skip
    theirs = json.loads((tmp_path / "b" / "results.json").read_text())["run_id"]
    doc = json.loads(_ok("compare", ours, theirs, "--audit", "--db", db, "-f", "json"))
    assert doc["n"] == 12
    assert sum(c["net"] for c in doc["causes"].values()) == doc["gap"]
    assert {item["cause"] for item in doc["items"]} == {"answer", "extraction"}
    for item in doc["items"]:
        same = item["a"]["raw"].strip() == item["b"]["raw"].strip()
        assert item["cause"] == ("extraction" if same else "answer"), item
