"""Importing 100k and 1M predictions: time per row and peak RSS, old code beside new.

Generates an lmmprobe JSONL benchmark copy of N single-choice items (text only: images would
time the image hashing, not the import) and a mapped JSONL of N predictions (letters, option
texts, prose and unreadable answers in turn), then imports it with
``lmmprobe.predictions.importing.import_file`` end to end (benchmark loaded, rows joined,
every answer scored by the run's scorer, responses/samples/scores stored, results built with
bootstrap intervals), each size in a fresh process: wall time, time per row and peak RSS
(``ru_maxrss``), and a digest of every figure of the results (values, intervals, counts).

``--sizes`` are imported by this code, ``--old-sizes`` by the code under ``--old-src`` (the
imports' ``PYTHONPATH``), in the same run: at a size both import, the digests must be equal.
The old import kept every row's Score until the end (~5.6 KiB a row at 100k); this one joins
through a SQLite index of the benchmark's samples, stores each 10,000-row chunk and drops it,
and computes the results from the stored rows. What still grows with N is the benchmark copy
the data source loads whole (`load_source` returns every `Sample`; the join indexes them and
drops them, but the peak is reached while they are loaded) and the per-sample sums of the
answer rates. Tests never assert on these times.

``--extra`` adds, at the smallest size: the mapped reader alone (tracemalloc peak: what
streaming holds), a run of the same benchmark by the instant ``first`` model, and an import of
answers with ``--long`` characters of reasoning prose before each (the file grows tenfold and
more, the memory should not).

Usage: python benchmarks/import_scale.py [--sizes 100000,1000000] [--old-sizes 100000,300000]
    [--old-src OLD/src] [--bootstrap 200] [--extra] [--long 10000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

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
    model = run.results.models["imported-scale"]
    acc = model.metrics["accuracy"]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    # Every figure (values, intervals, counts) hashed: old and new must give the same digest.
    figures = model.model_dump(mode="json", exclude={"stats"})
    digest = hashlib.sha256(json.dumps(figures, sort_keys=True).encode()).hexdigest()[:16]
    print(json.dumps({"rows": run.plan.joined, "seconds": seconds, "rss_mib": rss,
                      "accuracy": acc.value if acc else None, "digest": digest}))  # fmt: skip


def _run_child(mode: str, data: Path, preds: Path, db: Path, boot: int, src: str | None) -> Any:
    cmd = [sys.executable, __file__, "--child", mode, str(data), str(preds), str(db), str(boot)]
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _label(n: int) -> str:
    return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100000,1000000", help="rows imported by the new code")
    ap.add_argument("--old-sizes", default="100000,300000",
                    help="rows imported by the old code (--old-src); empty: none")  # fmt: skip
    ap.add_argument("--old-src", default=None,
                    help="the old code's src folder (PYTHONPATH of its imports)")  # fmt: skip
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--extra", action="store_true",
                    help="also the reader alone, a run of the benchmark and long answers, at "
                    "the smallest size")  # fmt: skip
    ap.add_argument("--long", type=int, default=10_000,
                    help="characters of reasoning before each answer in the long-answer import "
                    "(with --extra)")  # fmt: skip
    ap.add_argument("--child", nargs=5, metavar=("MODE", "DATA", "PREDS", "DB", "BOOT"))
    args = ap.parse_args()
    if args.child:
        mode, data, preds, db, boot = args.child
        _child(mode, Path(data), Path(preds), Path(db), int(boot))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    old_sizes = [int(s) for s in args.old_sizes.split(",") if s] if args.old_src else []
    new: dict[int, dict[str, Any]] = {}
    old: dict[int, dict[str, Any]] = {}
    extra: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sorted({*sizes, *old_sizes}):
            data, preds = _write(Path(tmp), n)
            if n in sizes:
                new[n] = _run_child("import", data, preds, Path(tmp) / f"new_{n}.db",
                                    args.bootstrap, None)  # fmt: skip
            if n in old_sizes:
                old[n] = _run_child("import", data, preds, Path(tmp) / f"old_{n}.db",
                                    args.bootstrap, args.old_src)  # fmt: skip
            if args.extra and n == min(sizes):
                for mode in ("read", "run"):
                    extra[mode] = _run_child(mode, data, preds, Path(tmp) / f"{mode}.db",
                                             args.bootstrap, None)  # fmt: skip
                if args.long:
                    data, preds = _write(Path(tmp), n, pad=args.long)
                    extra["long"] = _run_child("import", data, preds, Path(tmp) / "long.db",
                                               args.bootstrap, None)  # fmt: skip
                    extra["long"]["file_mib"] = preds.stat().st_size / 2**20
            for n_ in (n,):
                for name, got in (("new", new.get(n_)), ("old", old.get(n_))):
                    if got is not None:
                        print(f"# {name} {n_}: {json.dumps(got)}", flush=True)
    print(f"{'rows':>9} {'code':>4} {'import s':>9} {'ms/row':>7} {'peak RSS MiB':>13} "
          f"{'accuracy':>9} {'figures':>17}")  # fmt: skip
    for n in sorted({*sizes, *old_sizes}):
        for name, got in (("old", old.get(n)), ("new", new.get(n))):
            if got is None:
                continue
            print(f"{n:>9} {name:>4} {got['seconds']:>9.1f} {1000 * got['seconds'] / n:>7.3f} "
                  f"{got['rss_mib']:>13.0f} {got['accuracy']:>9.4f} {got['digest']:>17}")  # fmt: skip
    if extra:
        small = min(sizes)
        print(f"reader alone at {small}: {extra['read']['seconds']:.2f} s, tracemalloc peak "
              f"{extra['read']['peak_mib']:.2f} MiB; a run of the benchmark: "
              f"{extra['run']['seconds']:.1f} s, RSS {extra['run']['rss_mib']:.0f} MiB")  # fmt: skip
        if "long" in extra:
            print(f"{small} rows with {args.long:,}-character answers: file "
                  f"{extra['long']['file_mib']:.0f} MiB, import {extra['long']['seconds']:.1f} s, "
                  f"RSS {extra['long']['rss_mib']:.0f} MiB")  # fmt: skip
    small, big = min(sizes), max(sizes)
    pairs = [
        f"new_ms_per_row_{_label(n)}={1000 * new[n]['seconds'] / n:.3f} "
        f"new_rss_mib_{_label(n)}={new[n]['rss_mib']:.0f}"
        for n in sorted(new)
    ] + [
        f"old_ms_per_row_{_label(n)}={1000 * old[n]['seconds'] / n:.3f} "
        f"old_rss_mib_{_label(n)}={old[n]['rss_mib']:.0f}"
        for n in sorted(old)
    ]
    same = [n for n in sorted(old) if n in new]
    pairs += [f"identical_{_label(n)}={old[n]['digest'] == new[n]['digest']}" for n in same]
    if small != big:
        rss = new[big]["rss_mib"] / new[small]["rss_mib"]
        per_row = (new[big]["seconds"] / big) / (new[small]["seconds"] / small)
        pairs += [f"rss_ratio_{_label(big)}_{_label(small)}={rss:.2f}",
                  f"time_per_row_ratio_{_label(big)}_{_label(small)}={per_row:.2f}"]  # fmt: skip
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
