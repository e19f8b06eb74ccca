"""`lmmprobe judge` keeps the judged run's --max-cost, and says so when it refuses an unpriced
judge (re-test 20 of issue 34, #8).

``lmmprobe judge RUN --judge J`` with no --max-cost of its own failed with "--max-cost needs a
price for every judge", naming an option the user never typed: the budget was the run's.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe


def test_an_inherited_budget_is_named_as_the_runs_when_a_judge_has_no_price(
    tmp_path: Path,
) -> None:
    db = tmp_path / "db"
    ran = lmmprobe("run", "-m", "random,price=1:1", "--data", "demo", "--limit", "2",
                   "--max-cost", "0.5", "--db", db, "--out", tmp_path / "o")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))["run_id"]
    proc = lmmprobe("judge", run_id, "--db", db, "--judge", "first")
    assert proc.returncode == 2, proc.stdout
    line = proc.stderr.strip()
    assert line.startswith("error: --max-cost needs a price for every judge"), line
    assert f"this --max-cost, $0.5, is run {run_id}'s" in line
    assert "--max-cost none switches it off" in line
    # One typed here is the user's own: no such note.
    typed = lmmprobe("judge", run_id, "--db", db, "--judge", "first", "--max-cost", "2")
    assert typed.returncode == 2 and "is run" not in typed.stderr, typed.stderr
