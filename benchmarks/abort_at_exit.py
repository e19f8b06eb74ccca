"""How often a console call dies at interpreter exit (SIGABRT), code beside code (issue 34).

``lmmprobe run --data hemm-winoground,path=F --dry-run --strict`` over a hub copy whose first
row names a FIFO as its image printed the right one-line error, then, about one call in 250,
``terminate called without an active exception`` and died with signal 6: a pyarrow thread
still dropping its last references to Python objects (a file `datasets` had handed Arrow, the
buffers read from it) as the interpreter finalized (`lmmprobe.data.arrow_files`).

This runs that call `--runs` times for each ``--src NAME=PATH`` (the ``src/`` folder to put on
``PYTHONPATH``), interleaved name by name so a machine whose load drifts affects each alike,
`--jobs` calls at a time. Each call gets a fresh copy of the data (so `datasets` converts it,
as in the test) and a fresh `datasets` cache. A call is counted as

- ``ok``: exit status 2 and the row's one-line error;
- ``abort``: killed by SIGABRT (exit status -6);
- ``other``: anything else (its first lines are printed, up to five calls a name).

``--minutes`` stops starting calls once that long has passed (on a loaded machine a call
takes several seconds); the figures then count the calls made. Prints a table and ends with
one line of ``name=value`` figures, such as
``main_calls=300 main_aborts=3 main_other=0 new_calls=300 ... jobs=2 minutes=21.4``.
Rare events need many calls: 0 aborts in 300 calls bounds the rate below about 1 % (95 %).

Usage: nice python benchmarks/abort_at_exit.py --src main=/work/main/src --src new=src
    [--runs 300] [--jobs 2] [--minutes 25]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_PARQUET = "data/test-00000-of-00001.parquet"
_FIFO = "pipe.png"
_MAX_SHOWN = 5


def _template(root: Path) -> Path:
    """A Winoground hub copy's parquet file whose row 0 names ``pipe.png`` (no bytes)."""
    import datasets  # type: ignore[import-untyped]
    from datasets import Dataset, Features, Image, Value
    from PIL import Image as PILImage

    datasets.disable_progress_bars()  # the table stays readable
    folder = root / "template"
    (folder / "data").mkdir(parents=True)
    os.mkfifo(folder / _FIFO)
    png = root / "ok.png"
    PILImage.new("RGB", (4, 4)).save(png)
    names = ("tag", "secondary_tag", "collapsed_tag", "caption_0", "caption_1")
    features = Features(
        {"id": Value("int32"), "image_0": Image(), "image_1": Image()}
        | {"num_main_preds": Value("int32")}
        | {n: Value("string") for n in names}
    )
    held = {"bytes": png.read_bytes(), "path": None}
    with contextlib.chdir(folder):  # `datasets` sizes a path-only value from its file
        ds = Dataset.from_dict(
            {
                "id": [0],
                "image_0": [{"bytes": None, "path": _FIFO}],
                "image_1": [held],
                "num_main_preds": [1],
                **{n: ["a"] for n in names},
            },
            features=features,
        )
        ds.to_parquet(str(folder / _PARQUET))
    return folder / _PARQUET


def _call(exe: str, src: Path, parquet: Path, work: Path) -> tuple[str, str]:
    """One call in a fresh copy under `work`: its outcome (ok, abort, other) and its output."""
    folder = work / "wino"
    (folder / "data").mkdir(parents=True)
    shutil.copyfile(parquet, folder / _PARQUET)
    os.mkfifo(folder / _FIFO)
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "HF_HOME": str(work / "hf"),
        "HF_DATASETS_CACHE": str(work / "hf/datasets"),
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
    }
    argv = [exe, "run", "-m", "first", "--data", f"hemm-winoground,path={folder}"]
    argv += ["--db", str(work / "db"), "--dry-run", "--strict"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work, check=False)
    out = done.stdout + done.stderr
    shutil.rmtree(work, ignore_errors=True)
    lines = [line for line in out.splitlines() if line.strip()]
    if done.returncode == -signal.SIGABRT:
        return "abort", out
    if done.returncode == 2 and len(lines) == 1 and "a FIFO, not a regular file" in lines[0]:
        return "ok", out
    return "other", f"exit {done.returncode}: {out[-600:]}"


def main() -> None:
    """Run the calls, print the table and one ``name=value`` line."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--src", action="append", required=True, metavar="NAME=PATH",
        help="a name and the src/ folder its calls import (repeat for each code)",
    )  # fmt: skip
    ap.add_argument("--runs", type=int, default=300, help="calls per name")
    ap.add_argument("--jobs", type=int, default=2, help="calls at a time")
    ap.add_argument(
        "--minutes", type=float, default=None,
        help="stop starting calls after this long; the figures count the calls made",
    )  # fmt: skip
    args = ap.parse_args()
    srcs: dict[str, Path] = {}
    for item in args.src:
        name, sep, path = item.partition("=")
        if not sep or not name or not Path(path, "lmmprobe").is_dir():
            raise SystemExit(f"--src {item!r}: expected NAME=PATH, PATH a src/ folder of lmmprobe")
        srcs[name] = Path(path).resolve()
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    if exe is None:
        raise SystemExit("the lmmprobe console script is not installed beside this Python")
    counts: dict[str, Counter[str]] = {name: Counter() for name in srcs}
    shown: Counter[str] = Counter()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        parquet = _template(root)
        order = [(i, name) for i in range(args.runs) for name in srcs]  # interleaved
        budget = None if args.minutes is None else start + args.minutes * 60

        def call(name: str, work: Path) -> tuple[str, str] | None:
            if budget is not None and time.monotonic() > budget:
                return None  # past the budget: not started, not counted
            return _call(exe, srcs[name], parquet, work)

        with ThreadPoolExecutor(args.jobs) as pool:
            futures = [(name, pool.submit(call, name, root / f"{name}-{i}")) for i, name in order]
            for done, (name, future) in enumerate(futures, start=1):
                result = future.result()
                if result is None:
                    continue
                outcome, out = result
                counts[name][outcome] += 1
                if outcome != "ok" and shown[name] < _MAX_SHOWN:
                    shown[name] += 1
                    print(f"[{name}] {outcome}: {out.strip()[-400:]}", flush=True)
                if done % 50 == 0:  # progress on a loaded machine, where a call takes seconds
                    so_far = " ".join(
                        f"{n}={sum(c.values())}/{c['abort']}" for n, c in counts.items()
                    )
                    print(f"calls/aborts so far: {so_far}", flush=True)
    minutes = (time.monotonic() - start) / 60
    print(f"{'name':<12} {'calls':>6} {'aborts':>7} {'other':>6} {'abort rate':>11}")
    figures: list[str] = []
    for name, c in counts.items():
        calls = sum(c.values())
        rate = c["abort"] / calls if calls else 0.0
        print(f"{name:<12} {calls:>6} {c['abort']:>7} {c['other']:>6} {rate:>11.2%}")
        figures += [f"{name}_calls={calls}", f"{name}_aborts={c['abort']}"]
        figures.append(f"{name}_other={c['other']}")
    print(" ".join([*figures, f"jobs={args.jobs}", f"minutes={minutes:.1f}"]))


if __name__ == "__main__":
    main()
