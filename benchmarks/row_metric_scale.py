"""A plugin metric over a stored run: `ctx.scores` (old form) vs `@row_metric` (new form).

Builds the store `benchmarks/results_scale.py` builds (one model, one finished single-choice
run of N rows, ``--by subtask``, 1,000 bootstrap resamples), then rebuilds its results in fresh
processes, one per way and size, with one plugin metric registered (share of right answers
read by their mark):

- none: no plugin (what the rebuild costs by itself);
- old: the metric written against `MetricContext.scores` (the lazy view: every row of the run
  built as a `Score` for it), its value only;
- new: the same metric as a `row_metric` (the rows reduced chunk by chunk), value and interval.

Each prints its wall time and peak RSS (``ru_maxrss``); the old and new values must be equal
for the run and every group. Tests never assert on time: this script is where the figures come
from.

Usage: python benchmarks/row_metric_scale.py [--sizes 20000 200000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lmmprobe.metrics import MetricContext, MetricValue, Row, row_metric, run_metric, run_metrics
from lmmprobe.report import rebuild_results
from lmmprobe.store import Store
from results_scale import RUN, build_store

NAME = "marked_right"
WAYS = ("none", "old", "new")


def _register(way: str) -> None:
    if way == "old":

        @run_metric(NAME, summary="right and read by mark / judged rows (ctx.scores)")
        def old(ctx: MetricContext) -> MetricValue | None:
            judged = [s for s in ctx.scores if s.error_type is None and s.correct is not None]
            if not judged:
                return None
            right = sum(bool(s.correct) and s.stage == "mark" for s in judged)
            return MetricValue(right / len(judged), None, None, len(judged))

    elif way == "new":

        @row_metric(NAME, summary="right and read by mark / judged rows (row_metric)")
        def new(row: Row) -> float | None:
            if not row.answered or row.correct is None:
                return None
            return float(row.correct and row.stage == "mark")


def _measure(way: str, db: Path, out: Path) -> None:
    run_metrics()  # the registry's discovery imports are start-up, the same for every way
    _register(way)
    t0 = time.perf_counter()
    with Store(db, read_only=True) as store:
        results = rebuild_results(store, RUN)
    seconds = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    values: dict[str, Any] = {}
    for model, r in results.models.items():
        if NAME in r.metrics:
            values[model] = r.metrics[NAME].to_dict()
            for label, metrics in r.breakdown["subtask"].items():
                values[f"{model}/{label}"] = metrics[NAME].to_dict()
    out.write_text(json.dumps({"seconds": seconds, "peak_mib": peak_mib, "values": values}))


def _fresh(way: str, db: Path, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--measure", way, "--db", str(db), "--out", str(out)]
    subprocess.run(cmd, check=True)
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _same_values(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """The old form's values (no interval) equal the new form's, for the run and every group."""
    keys = old["values"].keys()
    return (
        bool(keys)
        and keys == new["values"].keys()
        and all(old["values"][k]["value"] == new["values"][k]["value"] for k in keys)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--measure", choices=WAYS, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        _measure(args.measure, args.db, args.out)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            db = Path(tmp) / f"n{n}" / "lmmprobe.db"
            db.parent.mkdir()
            build_store(db, n)
            got = {way: _fresh(way, db, db.parent / f"{way}.json") for way in WAYS}
            rows.append((n, got, _same_values(got["old"], got["new"])))
    print("a plugin metric over a stored run (1 model, --by subtask, 1000 resamples), rebuilt")
    print(f"{'rows':>8} {'none s':>7} {'old s':>7} {'new s':>7} {'none MiB':>9} {'old MiB':>8} {'new MiB':>8} same values")  # fmt: skip
    for n, got, same in rows:
        s = {w: got[w]["seconds"] for w in WAYS}
        m = {w: got[w]["peak_mib"] for w in WAYS}
        print(
            f"{n:>8} {s['none']:>7.2f} {s['old']:>7.2f} {s['new']:>7.2f} {m['none']:>9.0f} "
            f"{m['old']:>8.0f} {m['new']:>8.0f} {same}"
        )
    pairs = []
    for n, got, same in rows:
        k = f"{n // 1000}k"
        pairs += [f"{w}_s_{k}={got[w]['seconds']:.2f}" for w in WAYS]
        pairs += [f"{w}_mib_{k}={got[w]['peak_mib']:.0f}" for w in WAYS]
        pairs.append(f"same_values_{k}={same}")
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
