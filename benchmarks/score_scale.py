"""``lmmprobe score`` of another tool's file at two sizes: peak RSS and time, old code beside new.

Re-test 12 #5: ``score`` of a mapped file held a pydantic Score per row (a 9 MB file of 300,000
rows ran out of 2 GB), where ``import`` of the same file streamed. The new ``score`` goes the
import's way through a temporary store. This writes the re-test's file (a JSON array of
``{"i": "N", "p": "A", "g": "A"}``) at each size and runs the real console script on it,
``lmmprobe score FILE --reader mapped --field id=i,prediction=p,gold=g``, once with this tree's
code and once with ``--old-src`` (a checkout of the previous code), each in a fresh process
under an address-space cap (``--cap-mb``, the re-test's 2 GB): peak RSS (``ru_maxrss`` of the
child), wall time, the exit status and the accuracy line printed (equal where both finish).

Usage: python benchmarks/score_scale.py --old-src OLD/src [--sizes 30000,300000] [--cap-mb 2048]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import resource, subprocess, sys, time
cap = int(sys.argv[1]) * 1024 * 1024
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], capture_output=True, text=True, preexec_fn=limit)
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(done.returncode, rss, round(wall, 1))
sys.stdout.write(done.stdout[-3000:] + done.stderr[-500:])
"""


def _write(folder: Path, n: int) -> Path:
    path = folder / f"a{n}.json"
    path.write_text("[" + ",".join(f'{{"i":"{i}","p":"A","g":"A"}}' for i in range(n)) + "]")
    return path


def _score(path: Path, src: str, cap_mb: int) -> tuple[int, int, float, str]:
    """Exit status, peak RSS (MiB), wall seconds and the accuracy row of one ``score``."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "the lmmprobe console script is not installed beside this Python"
    argv = [exe, "score", str(path), "--reader", "mapped", "--field", "id=i,prediction=p,gold=g"]
    env = {**os.environ, "PYTHONPATH": src, "COLUMNS": "120"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(cap_mb), *argv],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    head, _, rest = out.partition("\n")
    rc, rss, wall = head.split()
    found = re.search(r"accuracy\s+(\S+ \[[^\]]+\])", rest)
    return int(rc), int(rss), float(wall), found.group(1) if found else "-"


def main() -> None:
    """Print the table and one ``name=value`` line."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="30000,300000")
    ap.add_argument("--old-src", required=True, help="src/ of the previous code")
    ap.add_argument("--cap-mb", type=int, default=2048)
    args = ap.parse_args()
    new_src = str(Path(__file__).resolve().parents[1] / "src")
    sizes = [int(s) for s in args.sizes.split(",")]
    figures: dict[str, str] = {}
    print(f"{'code':<5} {'rows':>8} {'rc':>3} {'peak RSS MiB':>13} {'wall s':>7}  accuracy")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = _write(Path(tmp), n)
            for code, src in (("old", args.old_src), ("new", new_src)):
                rc, rss, wall, acc = _score(path, src, args.cap_mb)
                print(f"{code:<5} {n:>8} {rc:>3} {rss:>13} {wall:>7.1f}  {acc}", flush=True)
                figures[f"{code}_rss_mib_{n}"] = str(rss) if rc == 0 else f"fail_rc{rc}"
    ratio = ""
    a, b = figures.get(f"new_rss_mib_{sizes[0]}"), figures.get(f"new_rss_mib_{sizes[-1]}")
    if a and b and a.isdigit() and b.isdigit():
        ratio = f" new_rss_ratio={int(b) / int(a):.2f}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()) + ratio)


if __name__ == "__main__":
    main()
