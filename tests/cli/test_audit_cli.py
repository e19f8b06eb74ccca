"""``lmmprobe compare --audit``: two runs' differing verdicts by cause, through the console script."""

from __future__ import annotations

import json
import re
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
    # The same pairs, sides, sign (A - B) and paired statistics as `compare`.
    assert (doc["label_a"], doc["label_b"]) == ("random", "first")
    assert doc["n"] == plain["n"]
    assert doc["difference"] == pytest.approx(plain["difference"])
    assert (doc["low"], doc["high"]) == pytest.approx((plain["low"], plain["high"]))
    assert doc["mcnemar_p"] == pytest.approx(plain["mcnemar_p"])
    assert doc["gap_items"] == plain["a_only_correct"] - plain["b_only_correct"]
    # Every differing item has one cause, and the causes add up to the gap.
    assert len(doc["items"]) == plain["differ_total"]
    assert sum(c["net_items"] for c in doc["causes"].values()) == doc["gap_items"]
    # "gap" was 4.0 (items) in JSON where the terminal's "gap" is points: each field names its
    # unit, and the points are the terminal's figure.
    assert "gap" not in doc and "net" not in next(iter(doc["causes"].values()))
    assert doc["gap_points"] == pytest.approx(doc["gap_items"] * 100 / doc["n"])
    assert doc["gap_points"] == pytest.approx(plain["difference"] * 100)
    terminal = _ok("compare", run_id, "-m", "random", "-m", "first", "--db", db, "--audit")
    assert f"gap {doc['gap_points']:+.2f} points" in terminal
    # Two models gave different answers: that is the cause, not the reading.
    assert set(doc["causes"]) == {"answer"}


def test_compare_audit_gives_the_sides_and_sign_of_compare(run: tuple[Path, str]) -> None:
    # Issue 34, item 12: `compare` printed "A - B -0.075" (A random, B first) while --audit
    # printed "first 37.50 vs random 30.00 ... gap +7.50": other order, other sign.
    db, run_id = run
    both = ("compare", run_id, "-m", "random", "-m", "first", "--db", db)
    plain = _ok(*both)
    audited = _ok(*both, "--audit")
    diff = float(re.search(r"A - B\s+([+-][0-9.]+)", plain).group(1))  # type: ignore[union-attr]
    acc = re.search(r"accuracy\s+A ([0-9.]+)\s+B ([0-9.]+)", plain)
    assert acc is not None
    head = re.search(
        r"random ([0-9.]+) vs first ([0-9.]+) on 40 paired items: gap ([+-][0-9.]+) points "
        r"\(random - first; ([+-][0-9]+) items\)",
        audited,
    )
    assert head is not None, audited
    assert float(head.group(1)) == pytest.approx(100 * float(acc.group(1)), abs=0.05)
    assert float(head.group(2)) == pytest.approx(100 * float(acc.group(2)), abs=0.05)
    assert float(head.group(3)) == pytest.approx(100 * diff, abs=0.05)
    assert diff != 0 and (float(head.group(3)) > 0) == (diff > 0)
    only = re.search(r"only A right: (\d+), only B right: (\d+)", plain)
    assert only is not None
    assert int(head.group(4)) == int(only.group(1)) - int(only.group(2))
    # The item tables list A's verdict before B's, as compare's do.
    assert re.search(r"item\s+gold\s+random\s+first", audited)


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
    assert sum(c["net_items"] for c in doc["causes"].values()) == doc["gap_items"]
    assert {item["cause"] for item in doc["items"]} == {"answer", "extraction"}
    for item in doc["items"]:
        same = item["a"]["raw"].strip() == item["b"]["raw"].strip()
        assert item["cause"] == ("extraction" if same else "answer"), item
