"""A store's first write: the whole-file integrity check, and the seal that skips it.

Builds the store `benchmarks/results_scale.py` builds (one model, one finished single-choice
run) at each size, then times opening it and creating one run, as every writing command's
first write does: once unsealed (the seal removed, so SQLite's ``quick_check`` reads the
whole file first, as every command's first write did before) and once sealed (the store was
closed cleanly by the previous write and is untouched since: `lmmprobe.store.seal`). Each way
is timed ``--repeats`` times, alternately, and the best kept; the file is in the page cache
(a cold read of a large store costs the check more).

Usage: python benchmarks/first_write.py [--sizes 20000 200000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

from lmmprobe.store import Store
from lmmprobe.store.seal import SEAL_SUFFIX

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results_scale import build_store


def _first_write(db: Path) -> float:
    """Seconds to open `db`, create one run and close it."""
    start = time.perf_counter()
    with Store(db) as store:
        store.create_run(uuid.uuid4().hex, {}, str(db.parent / "out"))
    return time.perf_counter() - start


def main() -> None:
    """Print the table and one ``name=value`` line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    figures: list[str] = []
    print(f"{'rows':>8} {'store MiB':>9} {'unsealed s':>10} {'sealed s':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            db = Path(tmp) / f"n{n}" / "lmmprobe.db"
            db.parent.mkdir()
            build_store(db, n)
            seal = db.with_name(db.name + SEAL_SUFFIX)
            unsealed, sealed = [], []
            for _ in range(args.repeats):
                seal.unlink(missing_ok=True)
                unsealed.append(_first_write(db))  # checks, then seals on close
                sealed.append(_first_write(db))
            mib = db.stat().st_size / 2**20
            print(f"{n:>8} {mib:>9.0f} {min(unsealed):>10.3f} {min(sealed):>9.3f}", flush=True)
            k = f"{n // 1000}k"
            figures += [f"unsealed_s_{k}={min(unsealed):.3f}", f"sealed_s_{k}={min(sealed):.3f}"]
    print(" ".join(figures))


if __name__ == "__main__":
    main()
