"""`--field` paths with odd list indexes, or very long, are one short line (re-test 20 #10).

A path step that `str.isdigit` accepts but `int` refuses (``preds.²``) or cannot read
(5,000 digits: Python's 4,300-digit limit) ended ``score``/``import`` in a traceback; ``preds.٣``
was read as index 3; a 100,000-character path was echoed whole in the row's line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "p.jsonl"
    rows = [{"id": "q1", "preds": ["A", "B", "C", "D"], "gold": "A"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["score", "import"])
@pytest.mark.parametrize(
    "step", ["²", "9" * 5_000, "٣", "-1", "1" * 19], ids=["super", "huge", "arabic", "neg", "19"]
)
def test_a_step_that_is_no_ascii_index_is_a_missing_field(
    tmp_path: Path, command: str, step: str
) -> None:
    db = ["--db", tmp_path / "db"] if command == "import" else []
    proc = lmmprobe(command, _file(tmp_path), "--reader", "mapped",
                    "--field", f"id=id,prediction=preds.{step},gold=gold", *db)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and line.endswith(": missing required field"), line
    assert len(line) < 300


def test_an_ascii_index_still_reads_the_list(tmp_path: Path) -> None:
    proc = lmmprobe("score", _file(tmp_path), "--reader", "mapped",
                    "--field", "id=id,prediction=preds.0,gold=gold", "-f", "json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert '"accuracy"' in proc.stdout


def test_a_long_path_is_echoed_cut(tmp_path: Path) -> None:
    proc = lmmprobe("score", _file(tmp_path), "--reader", "mapped",
                    "--field", f"id=id,prediction={'a' * 100_000},gold=gold")  # fmt: skip
    assert proc.returncode == 2
    assert "(100,000 characters): missing required field" in proc.stderr
    assert len(proc.stderr) < 300
