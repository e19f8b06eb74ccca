"""What checking a parquet file's decoded size costs, beside reading it: two sizes, peak RSS.

`lmmprobe.data.files.check_parquet` runs before GQA reads its parquet files and before the
``hf`` source lets `datasets` convert one: the footer's stated sizes are checked, then every
column is counted as it decodes, 256 rows at a time (re-test 7; before it, plain columns were
counted from the metadata only and dictionary-encoded text scanned still encoded; run it with
PYTHONPATH at the older tree for the older figures). Before any check, nothing was
checked (the old cost is nil, and a value repeated by dictionary encoding decoded to any
size). This prints, for a text table of N rows (an id, a question, a four-way label, as a
dataset's parquet file holds them) at two sizes, each step in a fresh process: the check, a
dense read of the whole table by pyarrow (what any reader pays at least) and the conversion
`datasets` makes of it (what ``hf:FILE`` did before and still does after the check); then
the check of re-test 6's 1 MB file of one 1 MiB value in 1,500 rows (1.5 GB decoded), which
is refused. Wall and CPU time (libraries imported first), and peak RSS (``ru_maxrss``, the
libraries included). The check runs once per file: a later load of the same file reads the
copy `datasets` made, unchecked. Tests never assert on these.

Usage: python benchmarks/parquet_check.py [--sizes 250000,1000000]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _write_text(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(0)
    table = pa.table(
        {
            "id": [f"q{i}" for i in range(rows)],
            "question": [f"What is item {rng.randrange(10**6)} about?" for _ in range(rows)],
            "label": [rng.choice("abcd") for _ in range(rows)],
        }
    )
    pq.write_table(table, path)


def _write_bomb(path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    value = pa.array([os.urandom(1 << 20)], pa.binary())
    image = pa.DictionaryArray.from_arrays(pa.array([0] * 1500, pa.int32()), value)
    ids = pa.array([f"img{i}" for i in range(1500)])
    pq.write_table(pa.table({"id": ids, "image": image}), path)


def _child(mode: str, path: Path) -> None:
    import datasets
    import pyarrow.parquet as pq

    from lmmprobe.data.files import UnreadableFile, check_parquet

    t0, c0 = time.perf_counter(), time.process_time()
    outcome = "ok"
    if mode == "check":
        try:
            check_parquet(path, what="a dataset")
        except UnreadableFile:
            outcome = "refused"
    elif mode == "read":
        pq.read_table(path)
    else:
        datasets.disable_progress_bars()
        with tempfile.TemporaryDirectory() as cache:
            datasets.load_dataset("parquet", data_files={"test": str(path)}, split="test",
                                  cache_dir=cache)  # fmt: skip
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{wall:.3f} {cpu:.3f} {rss:.0f} {outcome}")


def _measure(mode: str, path: Path) -> tuple[float, float, float, str]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), float(out[2]), out[3]


def main() -> None:
    """Print the table and the closing ``name=value`` line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250000,1000000")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    figures: dict[str, str] = {}
    print(f"{'file':<26}{'step':<10}{'wall s':>9}{'cpu s':>9}{'peak MB':>10}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"text_{rows}.parquet"
            _write_text(path, rows)
            name = f"text {rows:,} rows"
            for mode in ("check", "read", "convert"):
                wall, cpu, rss, outcome = _measure(mode, path)
                print(f"{name:<26}{mode:<10}{wall:>9.2f}{cpu:>9.2f}{rss:>10.0f}  {outcome}")
                figures[f"{mode}_cpu_s_{rows}"] = f"{cpu:.2f}"
            check, convert = figures[f"check_cpu_s_{rows}"], figures[f"convert_cpu_s_{rows}"]
            figures[f"check_over_convert_{rows}"] = f"{float(check) / float(convert):.2f}"
        bomb = Path(tmp) / "dict1500.parquet"
        _write_bomb(bomb)
        wall, cpu, rss, outcome = _measure("check", bomb)
        print(f"{'1 MiB value x 1,500 rows':<26}{'check':<10}{wall:>9.2f}{cpu:>9.2f}{rss:>10.0f}"
              f"  {outcome}")  # fmt: skip
        figures["bomb_check_s"] = f"{wall:.2f}"
        figures["bomb_peak_mb"] = f"{rss:.0f}"
        figures["bomb"] = outcome
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
