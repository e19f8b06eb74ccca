"""benchmarks/report_frames.py on a few tiny clips: the three ways give the same page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.videos import needs_av

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "report_frames.py"


def test_a_tiny_run_ends_with_its_figures_and_identical_pages(tmp_path: Path) -> None:
    needs_av()
    args = ["--clips", "3", "--frames", "4", "--size", "64", "--workers", "2", "--h264-gop", "30"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = dict(kv.split("=", 1) for kv in done.stdout.strip().splitlines()[-1].split())
    assert last["identical"] == "True"
    assert {"alone_s", "pass_1_s", "pass_2_s", "speedup_2", "frames"} <= set(last)
    assert int(last["frames"]) > 0
