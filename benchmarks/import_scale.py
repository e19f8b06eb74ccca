"""Importing 100k predictions: time to import and score, and memory at 10k vs 100k.

Generates an lmmprobe JSONL benchmark copy of N single-choice items (text only: images would
time the image hashing, not the import) and a mapped JSONL of N predictions (letters, option
texts, prose and unreadable answers in turn), then, each size in a fresh process:

- ``read``: the mapped reader streaming the file (tracemalloc peak: what streaming holds);
- ``import``: ``lmmprobe.predictions.importing.import_file`` end to end (benchmark loaded, rows
  joined, every answer scored by the run's scorer, responses/samples/scores stored, results
  built with bootstrap intervals), wall time and peak RSS (``ru_maxrss``) of the process;
- ``run``: the same benchmark run by lmmprobe (the instant ``first`` model), wall time and
  peak RSS: what a run of it holds, beside what importing its answers holds.

The reader's peak stays flat from 10k to 100k rows (one row and one 1 MiB chunk at a time). The
import streams: rows are joined, scored and stored 2,000 at a time, and a row's request,
response and read record are dropped once stored. What still grows with N (tracemalloc: about
5 KiB a row, almost all pydantic objects) is what a run of the same benchmark holds too: the
loaded benchmark copy's `Sample`s (the join's index) and one `Score` per row, which the run
metrics and their bootstrap read all at once; the ``run`` column shows a run holding as
much. Tests never assert on these times.

A last import gives the smallest size's rows long answers (``--long`` characters of reasoning
prose before each): the file grows tenfold and more, the memory should not.

Usage: python benchmarks/import_scale.py [--sizes 10000,100000] [--bootstrap 200] [--long 10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

LETTERS = "ABCD"


def _write(folder: Path, n: int, pad: int = 0) -> tuple[Path, Path]:
    data = folder / f"bench_{n}.jsonl"
    preds = folder / f"preds_{n}_{pad}.jsonl"
    prose = ("Let me think step by step. " * (pad // 27 + 1))[:pad]
    with data.open("w") as d, preds.open("w") as p:
        for i in range(n):
            choices = [f"option {i % 7} {k}" for k in range(4)]
            answer = i % 4
            d.write(json.dumps({"id": f"q{i}", "images": [], "question": f"Question {i}?",
                                "choices": choices, "answer": answer}) + "\n")  # fmt: skip
            kind = i % 4
            said = [LETTERS[(answer + i % 3) % 4], choices[answer], f"I think ({LETTERS[i % 4]})",
                    "no idea"][kind]  # fmt: skip
            # With `pad`, each answer comes after that many characters of reasoning prose.
            p.write(json.dumps({"qid": f"q{i}", "answer": f"{prose} {said}" if pad else said})
                    + "\n")  # fmt: skip
    return data, preds


def _child(mode: str, data: Path, preds: Path, db: Path, bootstrap: int) -> None:
    fields = {"id": "qid", "prediction": "answer"}
    if mode == "read":
        from lmmprobe.predictions.imported import READERS, ReadOptions

        reader = READERS.get("mapped")
        tracemalloc.start()
        t0 = time.perf_counter()
        rows = sum(1 for _ in reader.read(preds, ReadOptions(field_map=fields)))
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(json.dumps({"rows": rows, "seconds": seconds, "peak_mib": peak / 2**20}))
        return
    if mode == "run":
        # The same benchmark run by lmmprobe itself (an instant model answering the first
        # option): what a run of it holds, for comparison with the import of its answers.
        from lmmprobe import RunSpec, evaluate

        spec = RunSpec(models=["first"], data=f"jsonl:{data}", db=str(db), bootstrap=bootstrap)
        t0 = time.perf_counter()
        ev = evaluate(spec, out=str(db.parent / f"run_{db.stem}"))
        seconds = time.perf_counter() - t0
        acc = ev.results.models["first"].metrics["accuracy"]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        print(json.dumps({"rows": len(ev.outcome.models[0].scores), "seconds": seconds,
                          "rss_mib": rss, "accuracy": acc.value if acc else None}))  # fmt: skip
        return
    from lmmprobe.predictions.importing import import_file

    t0 = time.perf_counter()
    run = import_file(preds, f"jsonl:{data}", model="imported-scale", db=str(db),
                      field_map=fields, bootstrap=bootstrap)  # fmt: skip
    seconds = time.perf_counter() - t0
    acc = run.results.models["imported-scale"].metrics["accuracy"]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"rows": len(run.scores), "seconds": seconds, "rss_mib": rss,
                      "accuracy": acc.value if acc else None}))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--long", type=int, default=10_000,
                    help="characters of reasoning before each answer in the long-answer import "
                    "of the smallest size (0: skip it)")  # fmt: skip
    ap.add_argument("--child", nargs=5, metavar=("MODE", "DATA", "PREDS", "DB", "BOOT"))
    args = ap.parse_args()
    if args.child:
        mode, data, preds, db, boot = args.child
        _child(mode, Path(data), Path(preds), Path(db), int(boot))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            data, preds = _write(Path(tmp), n)
            results[n] = {}
            for mode in ("read", "import", "run"):
                db = Path(tmp) / f"store_{n}_{mode}.db"
                cmd = [sys.executable, __file__, "--child", mode, str(data), str(preds), str(db),
                       str(args.bootstrap)]  # fmt: skip
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                results[n][mode] = json.loads(done.stdout.strip().splitlines()[-1])
        long: dict[str, float] = {}
        if args.long:
            # The same rows with long answers: the file grows by ~N x --long bytes; memory
            # should not (the text is stored, not held; a choice row keeps the option read).
            data, preds = _write(Path(tmp), sizes[0], pad=args.long)
            db = Path(tmp) / "store_long.db"
            cmd = [sys.executable, __file__, "--child", "import", str(data), str(preds), str(db),
                   str(args.bootstrap)]  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            long = json.loads(done.stdout.strip().splitlines()[-1])
            long["file_mib"] = preds.stat().st_size / 2**20
    print(f"{'rows':>8} {'read s':>8} {'read peak MiB':>14} {'import s':>9} {'rows/s':>8} "
          f"{'import RSS MiB':>15} {'run s':>6} {'run RSS MiB':>12} {'accuracy':>9}")  # fmt: skip
    for n in sizes:
        r, i, run = results[n]["read"], results[n]["import"], results[n]["run"]
        print(f"{n:>8} {r['seconds']:>8.2f} {r['peak_mib']:>14.2f} {i['seconds']:>9.1f} "
              f"{n / i['seconds']:>8.0f} {i['rss_mib']:>15.0f} {run['seconds']:>6.1f} "
              f"{run['rss_mib']:>12.0f} {i['accuracy']:>9.3f}")  # fmt: skip
    small, big = sizes[0], sizes[-1]
    if long:
        print(f"{small} rows with {args.long:,}-character answers: file {long['file_mib']:.0f} MiB, "
              f"import {long['seconds']:.1f} s, RSS {long['rss_mib']:.0f} MiB (short answers: "
              f"{results[small]['import']['rss_mib']:.0f} MiB)")  # fmt: skip
    tail = (
        f" long_file_mib_{small}={long['file_mib']:.0f} "
        f"import_rss_mib_{small}_long={long['rss_mib']:.0f}"
        if long
        else ""
    )
    print(
        f"import_s_{big}={results[big]['import']['seconds']:.1f} "
        f"read_peak_mib_{small}={results[small]['read']['peak_mib']:.2f} "
        f"read_peak_mib_{big}={results[big]['read']['peak_mib']:.2f} "
        f"import_rss_mib_{small}={results[small]['import']['rss_mib']:.0f} "
        f"import_rss_mib_{big}={results[big]['import']['rss_mib']:.0f} "
        f"run_rss_mib_{small}={results[small]['run']['rss_mib']:.0f} "
        f"run_rss_mib_{big}={results[big]['run']['rss_mib']:.0f} "
        f"import_vs_run_rss_{big}="
        f"{results[big]['import']['rss_mib'] / results[big]['run']['rss_mib']:.2f}" + tail
    )


if __name__ == "__main__":
    main()
