"""Peak memory of ``lmmprobe run`` at two sizes: an old checkout vs this one, side by side.

Writes a text-only single-choice JSONL set (demo-like: four colour options, a ``subtask``),
then runs ``lmmprobe run --model first --data FILE --by subtask`` on it once per size and
checkout, each in a fresh process: the console script beside this interpreter, with
``PYTHONPATH`` set to the old checkout's ``src`` (``--old-src``, default ``/work/main/src``)
or to this one's. Each run's wall time, CPU time and peak RSS (``ru_maxrss`` of the run's
process) are printed (on a shared machine, CPU time per row is the one to compare), and the
two runs' figures (``results.json``'s models, latency aside) must be identical. The last line
gives them as ``name=value`` pairs, with the new side's growth from the smallest size to the
largest (``new_mib_ratio``, ``new_cpu_ms_per_row_ratio``).

The runner plans, answers, scores, stores and drops 10,000 samples at a time
(`CHUNK_SAMPLES`) and builds the results from the stored rows, read in chunks. Before the
streamed load (issue 35) it still took every sample of the data at once (about 3 KiB each);
now data of more than one chunk is read once to be counted, checked and fingerprinted, then
again a chunk at a time (`lmmprobe.data.StreamedLoad`), so a run holds one chunk of samples.
The results step after the answers read the stored rows in chunks but still grew ~0.9 KiB a
row (a dict of every sample id and per-chunk copies of the whole per-sample table, for the model
and its ``--by`` groups). Its sums now keep each complete sample as its profile's number, 2
bytes, for the model and for its group (`lmmprobe.metrics.sample_profiles`), no id, since the
store gives rows in sample-id order.
Time per row is the run's CPU time (start-up included) over its rows. Tests never assert on
time or memory: this script is where the figures come from.

With ``--judge``, the run is judged as well (``--judge first --judge-when miss``: the choice
protocol's rule reads every answer of ``first``, so the judge is never asked, but the judging
step reads every sample and row): the judging step used to read the run's data whole again;
it now reads it a chunk at a time, as the run does.

Usage: python benchmarks/run_scale.py [--sizes 100000 1000000] [--old-sizes 100000]
       [--old-src /path/to/old/src] [--judge]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

NEW_SRC = Path(__file__).resolve().parents[1] / "src"
SUBTASKS = ("color", "shape", "count", "position", "style", "text", "age", "emotion")
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")


def write_rows(path: Path, n: int, seed: int = 0) -> None:
    """`n` text-only single-choice rows, demo-like."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            choices = rng.sample(COLORS, 4)
            row = {
                "id": f"s-{i:07d}",
                "images": [],
                "question": f"Which colour is item {i}?",
                "choices": choices,
                "answer": rng.randrange(4),
                "metadata": {"subtask": SUBTASKS[i % len(SUBTASKS)]},
            }
            f.write(json.dumps(row) + "\n")


def run_once(
    src: Path, data: Path | str, work: Path, judge: bool = False
) -> tuple[float, float, float, dict[str, Any]]:
    """Seconds, CPU seconds, peak MiB and the models' figures of one ``lmmprobe run``."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "the lmmprobe console script is not installed beside this Python"
    out = work / "out"
    args = [exe, "run", "--model", "first", "--data", str(data), "--by", "subtask", "-q",
            "--db", str(work / "store.db"), "--out", str(out)]  # fmt: skip
    if judge:
        args += ["--judge", "first", "--judge-when", "miss"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    # A fresh wrapper per run: RUSAGE_CHILDREN is then that run's peak alone.
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "s = time.perf_counter() - t\n"
        "sys.stderr.write(done.stderr[-2000:])\n"
        "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(done.returncode, s, use.ru_utime + use.ru_stime, use.ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, *args], capture_output=True, text=True, env=env, check=True
    )
    code, seconds, cpu, kib = done.stdout.split()
    assert code == "0", done.stderr
    models: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))[
        "models"
    ]
    for model in models.values():
        model["stats"].pop("mean_latency_s")  # a measurement of this machine, not a figure
    return float(seconds), float(cpu), int(kib) / 1024, models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--old-src", "--old", dest="old", type=Path, default=Path("/work/main/src"))
    parser.add_argument("--judge", action="store_true", help="judge the run too (first as judge)")
    parser.add_argument(
        "--old-sizes", type=int, nargs="*", default=None,
        help="the sizes the old checkout runs too (default: every size); '-' in its columns",
    )  # fmt: skip
    args = parser.parse_args()
    old_sizes = args.sizes if args.old_sizes is None else args.old_sizes
    judged = " --judge first" if args.judge else ""
    print(f"old: {args.old}  new: {NEW_SRC}  (peak RSS of the `lmmprobe run{judged}` process)")
    print(
        f"{'rows':>8} {'old s':>8} {'new s':>8} {'old cpu ms/row':>14} {'new cpu ms/row':>14} "
        f"{'old MiB':>8} {'new MiB':>8} identical"
    )
    pairs: list[str] = []
    new: dict[int, tuple[float, float]] = {}  # size → (CPU ms per row, peak MiB)
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "rows.jsonl"
            write_rows(data, n)
            figures: dict[str, tuple[float, float, float, dict[str, Any]]] = {}
            for name, src in (("old", args.old), ("new", NEW_SRC)):
                if name == "old" and n not in old_sizes:
                    continue
                work = Path(tmp) / name
                work.mkdir()
                figures[name] = run_once(src, data, work, args.judge)
        ns, nc, nm, nf = figures["new"]
        nt = 1000 * nc / n
        new[n] = (nt, nm)
        k = f"{n // 1000}k"
        pairs += [
            f"new_s_{k}={ns:.1f}",
            f"new_mib_{k}={nm:.0f}",
            f"new_cpu_ms_per_row_{k}={nt:.3f}",
        ]
        if "old" not in figures:
            print(f"{n:>8} {'-':>8} {ns:>8.1f} {'-':>14} {nt:>14.3f} {'-':>8} {nm:>8.0f} -")
            continue
        os_, oc, om, of = figures["old"]
        same = of == nf
        ot = 1000 * oc / n
        print(f"{n:>8} {os_:>8.1f} {ns:>8.1f} {ot:>14.3f} {nt:>14.3f} {om:>8.0f} {nm:>8.0f} {same}")
        pairs += [
            f"old_s_{k}={os_:.1f}", f"old_mib_{k}={om:.0f}", f"old_cpu_ms_per_row_{k}={ot:.3f}",
            f"identical_{k}={same}",
        ]  # fmt: skip
    if len(new) > 1:
        (t0, m0), (t1, m1) = new[min(new)], new[max(new)]
        pairs += [f"new_mib_ratio={m1 / m0:.2f}", f"new_cpu_ms_per_row_ratio={t1 / t0:.2f}"]
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
