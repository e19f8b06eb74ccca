"""``lmmprobe elo`` refuses a votes CSV with a column named twice (re-test 11 #15).

``model_a,model_b,winner,winner`` took the last winner and ``model_a,model_a,…`` the last
model, silently; the prediction tables' reader refused the same header already, and now both
share its check (`lmmprobe.schema.text.repeated_column`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.console import lmmprobe


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ("model_a,model_b,winner,winner\na,b,a,b\n", "column 'winner' is given twice (columns 3 and 4)"),
        ("model_a,model_a,model_b,winner\nb,a,c,b\n", "column 'model_a' is given twice (columns 1 and 2)"),
    ],
    ids=["winner", "model_a"],
)  # fmt: skip
def test_a_votes_csv_column_named_twice_is_one_line_naming_file_and_line(
    tmp_path: Path, table: str, why: str
) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(table)
    proc = lmmprobe("elo", votes, "--shuffles", "0")
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line == f"error: {votes}:1: {why}; name each column once", line


def test_unnamed_columns_may_repeat_and_the_votes_are_read(tmp_path: Path) -> None:
    # A sheet saved with trailing empty columns: never read, so not refused.
    votes = tmp_path / "votes.csv"
    votes.write_text("model_a,model_b,winner,,\na,b,a,,\n")
    proc = lmmprobe("elo", votes, "--shuffles", "0", "--format", "json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"battles": 1' in proc.stdout
