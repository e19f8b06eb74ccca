"""Importing predictions for a benchmark with images twice: the second import's cost, old vs new.

Writes an lmmprobe JSONL benchmark of N single-choice questions, each with its own small PNG
(distinct pixels, so distinct files and hashes), and a mapped JSONL of N predictions, then
runs ``lmmprobe import`` twice into one fresh store per side, each import a whole process:
wall time, CPU time (user + system: on a loaded machine the wall time is mostly waiting)
and peak RSS (``ru_maxrss`` of that process). ``--old-src`` is an older checkout's
src (the imports' ``PYTHONPATH``), run side by side with this one at each size. The new import
reads and records the store's image checks (`remembered_images`), so its second import neither
decodes nor hashes an unchanged image again; the old one checked every image with Pillow each
time. Tests never assert on these times.

Usage: python benchmarks/import_images.py [--sizes 500 2000] [--old-src OLD/src]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

NEW_SRC = Path(__file__).resolve().parent.parent / "src"


def _write(folder: Path, n: int) -> tuple[Path, Path]:
    """A benchmark of `n` questions with one PNG each, and a file answering every one."""
    (folder / "img").mkdir()
    data, preds = folder / "bench.jsonl", folder / "preds.jsonl"
    with data.open("w") as d, preds.open("w") as p:
        for i in range(n):
            Image.new("RGB", (32, 32), (i % 256, i // 256 % 256, 7)).save(folder / f"img/{i}.png")
            row = {"id": f"q{i}", "images": [f"img/{i}.png"], "question": f"Question {i}?",
                   "choices": ["red", "blue", "green", "grey"], "answer": i % 4}  # fmt: skip
            d.write(json.dumps(row) + "\n")
            p.write(json.dumps({"qid": f"q{i}", "pred": "ABCD"[i % 3]}) + "\n")
    return data, preds


def _import(src: Path, data: Path, preds: Path, db: Path, out: Path) -> tuple[float, float, float]:
    """One ``lmmprobe import`` in its own process: (wall s, CPU s, peak RSS in MiB)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [str(Path(sys.executable).parent / "lmmprobe"), "import", str(preds), "--benchmark",
           str(data), "--field", "id=qid,prediction=pred", "--model", "m", "--db", str(db),
           "--out", str(out), "--format", "json"]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"import failed ({src}): {stderr.strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    """Print each side's first and second import at each size, then the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--old-src", type=Path, help="an older checkout's src, run side by side")
    args = ap.parse_args()
    sides = {"new": NEW_SRC} | ({"old": args.old_src.resolve()} if args.old_src else {})
    figures: dict[str, str] = {}
    print(f"{'size':>6} {'side':>4} {'1st s':>7} {'2nd s':>7} {'1st cpu':>8} {'2nd cpu':>8} "
          f"{'1st MiB':>8} {'2nd MiB':>8}")  # fmt: skip
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            data, preds = _write(folder, n)
            for side, src in sides.items():
                db = folder / f"{side}.db"
                first = _import(src, data, preds, db, folder / f"{side}1")
                second = _import(src, data, preds, db, folder / f"{side}2")
                print(f"{n:>6} {side:>4} {first[0]:>7.2f} {second[0]:>7.2f} {first[1]:>8.2f} "
                      f"{second[1]:>8.2f} {first[2]:>8.0f} {second[2]:>8.0f}")  # fmt: skip
                figures[f"{side}_second_s_{n}"] = f"{second[0]:.2f}"
                figures[f"{side}_second_cpu_{n}"] = f"{second[1]:.2f}"
                figures[f"{side}_second_mib_{n}"] = f"{second[2]:.0f}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
