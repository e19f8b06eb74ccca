"""A page of the runs list over stores of many runs: without the runs index (layout 12) and with it.

Re-test 11 #19: over 100,000 runs each ``/api/runs`` of ``lmmprobe serve`` took 4 s and the
server 757 MB, because the page's query (`lmmprobe.store.runs.read_runs`, newest first) sorted
every run, spec and results included. Layout 13 adds ``runs_newest``; this benchmark fills a
store of N runs (one run with about 5.5 KB of spec and results, made through the Store API,
copied N times), then, for each size, times the page query at the first page and at the last
in a fresh child process per variant (the store opened as serve's readers open it: mmap and
a 32 MB page cache), and reports each child's peak RSS. ``old`` is the same store with the
index dropped: the query text is the same.

Usage: .venv/bin/python benchmarks/serve_many_runs.py [--sizes 10000 50000] [--folder /tmp/x]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from lmmprobe.store import Store

_CHILD = r"""
import json, resource, sqlite3, sys, time
from lmmprobe.store.runs import read_runs
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA query_only = 1")
conn.execute("PRAGMA mmap_size = 1073741824")
conn.execute("PRAGMA cache_size = -32768")
offset = int(sys.argv[2])
start = time.perf_counter()
runs = read_runs(conn, 500, offset)
took = time.perf_counter() - start
print(json.dumps({"s": took, "rows": len(runs),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _fill(db: Path, n: int) -> None:
    with Store(db) as store:
        store.create_run("base", {"models": ["random"], "data": "demo,n=3", "pad": "s" * 2500},
                         str(db.parent / "o"))  # fmt: skip
        store.update_run("base", status="complete", results={
            "models": {"random": {"metrics": {"accuracy": {"value": 0.5, "n": 3}}}},
            "pad": "r" * 3000})  # fmt: skip
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
        row = conn.execute("SELECT * FROM runs").fetchone()
        i, c = cols.index("id"), cols.index("created_at")
        conn.executemany(
            f"INSERT INTO runs VALUES ({','.join('?' * len(cols))})",
            (
                [f"run-{k:07d}" if j == i else (row[c] + k if j == c else v)
                 for j, v in enumerate(row)]
                for k in range(n - 1)
            ),
        )  # fmt: skip


def _page(db: Path, offset: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(db), str(offset)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return dict(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="lmmprobe-many-runs-"))
    figures: dict[str, str] = {}
    print(f"{'runs':>8} {'page':>6} {'variant':>7} {'seconds':>8} {'peak RSS MB':>12} {'rows':>5}")
    try:
        for n in args.sizes:
            new = folder / f"new-{n}.sqlite"
            _fill(new, n)
            old = folder / f"old-{n}.sqlite"
            shutil.copy(new, old)
            with sqlite3.connect(old) as conn:
                conn.execute("DROP INDEX runs_newest")
            for page, offset in (("first", 0), ("last", n - 10)):
                for variant, db in (("old", old), ("new", new)):
                    got = _page(db, offset)
                    print(f"{n:>8} {page:>6} {variant:>7} {got['s']:>8.3f} {got['rss_mb']:>12.0f} "
                          f"{got['rows']:>5.0f}")  # fmt: skip
                    figures[f"{variant}_{page}_{n}_s"] = f"{got['s']:.3f}"
                    figures[f"{variant}_{page}_{n}_rss_mb"] = f"{got['rss_mb']:.0f}"
            old.unlink()
            new.unlink()
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
