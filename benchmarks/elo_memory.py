"""``lmmprobe elo`` on vote files of many new models: time and peak RSS, old code beside new.

Writes a vote file of N battles, each between two models seen nowhere else (2N models: the
shape that makes models x shuffles large), and rates it with ``lmmprobe elo FILE --format json``
(HEMM's 1,000 shuffles) in a fresh process per size and per code: wall time, peak RSS
(``ru_maxrss`` of that child) and a digest of the printed JSON. ``--old-src`` names the source
folder of the code to compare with (the children's ``PYTHONPATH``); at a size both rate, the
digests must be equal (the figures are unchanged).

The medians over shuffles were taken on a (shuffles, models) float64 matrix built by
concatenating the blocks of orders, then copied again by ``np.median``: three such matrices at
once. Now the blocks are replayed in place in one matrix and the medians taken a block of models
at a time; models x shuffles is bounded (`lmmprobe.metrics.elo.MAX_ELO_RATINGS`) and a larger
file is refused in one line. Tests never assert on these figures.

Usage: python benchmarks/elo_memory.py [--sizes 4000,16000] [--old-src OLD/src]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _votes(folder: Path, battles: int) -> Path:
    path = folder / f"votes_{battles}.jsonl"
    with path.open("w") as f:
        for i in range(battles):
            f.write(json.dumps({"model_a": f"a{i}", "model_b": f"b{i}", "winner": "a"}) + "\n")
    return path


def _rate(votes: Path, src: Path) -> tuple[float, float, str, int]:
    """Wall seconds, peak RSS (MB), digest of stdout and exit status of one child."""
    exe = Path(sys.executable).parent / "lmmprobe"
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    child = subprocess.Popen(
        [str(exe), "elo", str(votes), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, hashlib.sha256(out).hexdigest()[:12], child.returncode


def main() -> None:
    """Rate each size with each code and print the table and the summary line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4000,16000", help="battles per file, comma-separated")
    parser.add_argument("--old-src", type=Path, default=None, help="the old code's src folder")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    codes = [("new", SRC)] + ([("old", args.old_src)] if args.old_src else [])
    figures: dict[str, float] = {}
    print(
        f"{'battles':>8} {'models':>7} {'code':>4} {'wall s':>7} {'peak MB':>8} {'digest':>13} rc"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            votes = _votes(Path(tmp), n)
            digests = {}
            for name, src in codes:
                wall, peak, digest, rc = _rate(votes, src)
                digests[name] = digest
                print(f"{n:>8} {2 * n:>7} {name:>4} {wall:>7.1f} {peak:>8.0f} {digest:>13} {rc}")
                figures[f"{name}_peak_mb_at_{n}"] = round(peak)
                figures[f"{name}_wall_s_at_{n}"] = round(wall, 1)
            if len(set(digests.values())) > 1:
                print(f"  figures differ at {n} battles: {digests}")
            figures[f"same_figures_at_{n}"] = int(len(set(digests.values())) == 1)
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
