"""What counting a JSON file's key paths costs `check_json`, beside the conversion it guards.

`lmmprobe.data.files.check_json` runs before the ``hf`` source lets `datasets` convert a JSON
or JSON Lines file. Before re-test 10 it read each line's bytes only (its length, its brackets
and commas); now it also decodes every record and counts the distinct key paths of the whole
file (`_KeyPaths`), since each is a column (8 records of 16,000 distinct keys, 1.9 MB, took
`datasets` 117 s and 1.6 GB, or aborted under a 2 GB limit). This prints, for an ordinary
JSON Lines file of N records (an id, an image path, a question, an answer, four choices and a
small ``meta`` object) at two sizes, each step in a fresh process: the check as it was (the
same scan with the key count switched off: ``old``), the check now (``new``), and the
conversion `datasets` makes of the file (what ``hf:`` pays after either); then the new check
of re-test 10's file of 8 records of 16,000 keys, which it refuses. Wall and CPU time
(libraries imported first) and peak RSS (``ru_maxrss``, the libraries included). Tests never
assert on these.

Usage: python benchmarks/json_check.py [--sizes 100000,400000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _write_rows(path: Path, rows: int) -> None:
    rng = random.Random(0)
    with path.open("w") as fh:
        for i in range(rows):
            row = {"id": f"q{i}", "image": f"images/{i}.png",
                   "question": f"What is item {rng.randrange(10**6)} about?",
                   "answer": rng.choice("ABCD"), "choices": ["red", "green", "blue", "navy"],
                   "meta": {"source": "synth", "level": rng.randrange(5)}}  # fmt: skip
            fh.write(json.dumps(row) + "\n")


def _write_spread(path: Path) -> None:
    with path.open("w") as fh:
        for r in range(8):
            fh.write(json.dumps({f"k{r}_{i}": 0 for i in range(16_000)}) + "\n")


def _child(mode: str, path: Path) -> None:
    import datasets

    from lmmprobe.data import files
    from lmmprobe.data.base import DataError

    if mode == "old":  # the scan as it was: no record decoded, no key counted
        files._KeyPaths.record = lambda self, data, n: None  # type: ignore[method-assign]
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = "ok"
    if mode in ("old", "new"):
        try:
            with path.open("rb") as fh:
                files.check_json(path, fh)
        except DataError:
            outcome = "refused"
    else:
        datasets.disable_progress_bars()
        with tempfile.TemporaryDirectory() as cache:
            datasets.load_dataset("json", data_files={"test": str(path)}, split="test",
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
    parser.add_argument("--sizes", default="100000,400000")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    figures: dict[str, str] = {}
    print(f"{'file':<30}{'step':<10}{'wall s':>9}{'cpu s':>9}{'peak MB':>10}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"rows_{rows}.jsonl"
            _write_rows(path, rows)
            name = f"{rows:,} records"
            for mode in ("old", "new", "convert"):
                wall, cpu, rss, outcome = _measure(mode, path)
                print(f"{name:<30}{mode:<10}{wall:>9.2f}{cpu:>9.2f}{rss:>10.0f}  {outcome}")
                figures[f"{mode}_cpu_s_{rows}"] = f"{cpu:.2f}"
                figures[f"{mode}_peak_mb_{rows}"] = f"{rss:.0f}"
            old, new = (float(figures[f"{m}_cpu_s_{rows}"]) for m in ("old", "new"))
            convert = float(figures[f"convert_cpu_s_{rows}"])
            figures[f"new_minus_old_over_convert_{rows}"] = f"{(new - old) / convert:.2f}"
        spread = Path(tmp) / "s8_16000.jsonl"
        _write_spread(spread)
        wall, cpu, rss, outcome = _measure("new", spread)
        print(f"{'8 records x 16,000 keys':<30}{'new':<10}{wall:>9.2f}{cpu:>9.2f}{rss:>10.0f}"
              f"  {outcome}")  # fmt: skip
        figures["spread_check_s"] = f"{wall:.2f}"
        figures["spread_peak_mb"] = f"{rss:.0f}"
        figures["spread"] = outcome
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
