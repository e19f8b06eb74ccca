"""Loading MME-RealWorld (~29k questions) by name from a local copy: time and peak memory.

Writes a local copy in the schema lmms-eval reads (a hub snapshot of parquet shards, split
``train``: index, question, the five ``(A) ...`` option lines, answer, category, l2-category,
and the image as base64 text in ``bytes``), ``--rows`` rows (29,429 by default, the paper's
count) with a small PNG each (``--image-px`` square; the real images are megapixels, which
would time Pillow's check of each image, not the loader). Then, in one fresh process per
reading: ``iter_source`` streamed (samples counted, none kept) and ``load_source`` (the list),
each timed (wall, CPU) with its peak RSS (``ru_maxrss``) and the Python heap's peak under
tracemalloc in a second pass. Tests never assert on these figures.

Usage: python benchmarks/load_mme_realworld.py [--rows 29429] [--image-px 32]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time, tracemalloc
from lmmprobe.data.base import iter_source, load_source
spec, how, trace = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if trace:
    tracemalloc.start()
t0, c0 = time.perf_counter(), time.process_time()
if how == "stream":
    n = sum(1 for _ in iter_source(spec))
else:
    n = len(load_source(spec).samples)
out = {"n": n, "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
       "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if trace:
    out["heap_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
print(json.dumps(out))
"""


def write_copy(folder: Path, rows: int, px: int) -> Path:
    """The local copy: parquet shards of `rows` rows under ``folder/mme-realworld``."""
    from datasets import Dataset, Features, Sequence, Value
    from PIL import Image

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from tests.data.benchmarks.conftest import write_hub_snapshot

    features = Features({
        "index": Value("string"), "question": Value("string"),
        "multi-choice options": Sequence(Value("string")), "answer": Value("string"),
        "category": Value("string"), "l2-category": Value("string"), "bytes": Value("string"),
    })  # fmt: skip
    images = []
    for i in range(64):  # 64 distinct pictures in turn: the loader checks each row's own
        buf = io.BytesIO()
        Image.new("RGB", (px, px), (i * 4, 80, 160)).save(buf, "PNG")
        images.append(base64.b64encode(buf.getvalue()).decode("ascii"))
    tasks = ["Perception/Monitoring", "Reasoning/Autonomous_Driving", "Perception/Remote Sensing"]
    table = {
        "index": [f"q{i}" for i in range(rows)],
        "question": [f"How many cars are parked on the left side of the road? ({i})" for i in range(rows)],
        "multi-choice options": [[f"({c}) {i % 7 + k} cars" for k, c in enumerate("ABCDE")] for i in range(rows)],
        "answer": ["ABCDE"[i % 5] for i in range(rows)],
        "category": [tasks[i % 3] for i in range(rows)],
        "l2-category": ["counting/vehicle" for _ in range(rows)],
        "bytes": [images[i % 64] for i in range(rows)],
    }  # fmt: skip
    dataset = Dataset.from_dict(table, features=features)
    return write_hub_snapshot(folder / "mme-realworld", {"train": dataset})


def child(spec: str, how: str, trace: bool) -> dict[str, float]:
    """One reading in a fresh process; its figures."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, spec, how, "1" if trace else "0"],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=29_429)
    parser.add_argument("--image-px", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = write_copy(Path(tmp), args.rows, args.image_px)
        write_s = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
        spec = f"mme-realworld,path={folder}"
        figures = {}
        for how in ("stream", "list"):
            plain = child(spec, how, trace=False)
            traced = child(spec, how, trace=True)
            figures[how] = {**plain, "heap_peak_mib": traced["heap_peak_mib"]}
    print(f"copy: {args.rows} rows, {size:.2f} MiB parquet, written in {write_s:.1f} s")
    print(
        f"{'reading':<8} {'rows':>7} {'wall s':>8} {'cpu s':>8} {'us/row':>8} {'RSS MiB':>9} {'heap MiB':>9}"
    )
    for how, f in figures.items():
        per_row = 1e6 * f["cpu_s"] / max(f["n"], 1)
        print(f"{how:<8} {f['n']:>7} {f['wall_s']:>8.1f} {f['cpu_s']:>8.1f} {per_row:>8.0f} "
              f"{f['rss_mib']:>9.0f} {f['heap_peak_mib']:>9.1f}")  # fmt: skip
    s, ls = figures["stream"], figures["list"]
    print(f"rows={s['n']} stream_cpu_s={s['cpu_s']:.2f} stream_rss_mib={s['rss_mib']:.0f} "
          f"stream_heap_mib={s['heap_peak_mib']:.1f} list_cpu_s={ls['cpu_s']:.2f} "
          f"list_rss_mib={ls['rss_mib']:.0f} list_heap_mib={ls['heap_peak_mib']:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
