"""A short run of benchmarks/arena_load.py: concurrent raters on a real server on loopback,
and every acknowledged vote is in the store afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ten_raters_for_three_seconds_lose_no_vote() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "arena_load.py"),
            "--raters",
            "10",
            "--seconds",
            "3",
            "--samples",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    figures = dict(item.split("=", 1) for item in last.split())
    assert figures["raters"] == "10"
    assert int(figures["votes_acked"]) > 0
    assert figures["votes_stored"] == figures["votes_acked"]
    refused = next(line for line in done.stdout.splitlines() if line.startswith("votes refused"))
    assert refused.split()[-1] == "0", refused
