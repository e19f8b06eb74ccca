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
The import of 8612271 joined through a SQLite index of the benchmark's samples and stored each
10,000-row chunk, but loaded the benchmark copy whole first (`load_source`: every `Sample`,
~2-3 KiB each); this one streams the copy into the index as its source yields it
(`iter_source`: duplicate ids found in a SQLite set past 100,000), so no list of the
benchmark is ever held. Each child reports wall time and CPU time (user + system): on a
shared, loaded machine the wall time is mostly waiting, the CPU time per row is what the code
costs. Tests never assert on these times.

``--parallel`` runs the children at once (their peak RSS is each process's own; their wall
times then include each other's load, their CPU times do not). ``--profile`` adds, at the
smallest size, the new import under tracemalloc: the Python heap's peak and the allocation
sites still held at the end, biggest first (where the memory goes), and the RSS of a 1,000-row
import (the floor: interpreter, libraries, caches).

``--extra`` adds, at the smallest size: the mapped reader alone (tracemalloc peak: what
streaming holds), a run of the same benchmark by the instant ``first`` model, and an import of
answers with ``--long`` characters of reasoning prose before each (the file grows tenfold and
more, the memory should not).

Usage: python benchmarks/import_scale.py [--sizes 100000,1000000] [--old-sizes 100000,300000]
    [--old-src OLD/src] [--bootstrap 200] [--extra] [--long 10000] [--parallel] [--profile]
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
from concurrent.futures import ThreadPoolExecutor
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

    phases: list[dict[str, Any]] = []
    if mode in ("profile", "trace"):
        _profile_phases(phases)
    if mode == "trace":
        tracemalloc.start(1)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    t0 = time.perf_counter()
    run = import_file(preds, f"jsonl:{data}", model="imported-scale", db=str(db),
                      field_map=fields, bootstrap=bootstrap)  # fmt: skip
    seconds = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu0
    model = run.results.models["imported-scale"]
    acc = model.metrics["accuracy"]
    rss = usage.ru_maxrss / 1024  # KiB on Linux
    # Every figure (values, intervals, counts) hashed: old and new must give the same digest.
    figures = model.model_dump(mode="json", exclude={"stats"})
    digest = hashlib.sha256(json.dumps(figures, sort_keys=True).encode()).hexdigest()[:16]
    got: dict[str, Any] = {"rows": run.plan.joined, "seconds": seconds, "cpu_s": cpu,
                           "rss_mib": rss, "accuracy": acc.value if acc else None,
                           "digest": digest}  # fmt: skip
    if phases:
        got["phases"] = phases
        tracemalloc.stop()
    print(json.dumps(got))


def _vm() -> tuple[float, float]:
    """This process's resident memory now and its peak so far (VmRSS, VmHWM), MiB."""
    found = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return (int(found["VmRSS"].split()[0]) / 1024, int(found["VmHWM"].split()[0]) / 2**10)


def _profile_phases(phases: list[dict[str, Any]]) -> None:
    """Record, as each step of the import ends, the peak RSS so far and the Python heap's peak
    in that step, with the allocation sites the heap holds then (biggest first)."""
    from lmmprobe.predictions import _join, importing

    def step(name: str, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            rss, hwm = _vm()
            phase: dict[str, Any] = {"step": name, "rss_now": round(rss),
                                     "rss_peak_so_far": round(hwm)}  # fmt: skip
            if tracemalloc.is_tracing():
                phase["heap_peak_in_step"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
                top = tracemalloc.take_snapshot().statistics("lineno")[:4]
                phase["held"] = [f"{st.size / 2**20:.1f} MiB {st.traceback[0]}" for st in top]
                tracemalloc.reset_peak()
            phases.append(phase)
            return out

        return wrapped

    _join.SampleIndex.add_benchmark = step(  # type: ignore[method-assign]
        "benchmark indexed", _join.SampleIndex.add_benchmark
    )
    importing.plan_import = step("joined, scored, stored", importing.plan_import)
    importing.imported_results = step("results computed", importing.imported_results)
    importing.write_results = step("results written", importing.write_results)


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
    ap.add_argument("--parallel", action="store_true",
                    help="run the children at once (compare CPU times, not wall times)")  # fmt: skip
    ap.add_argument("--profile", action="store_true",
                    help="at the smallest size: the import under tracemalloc, and a 1,000-row "
                    "import's RSS (the floor)")  # fmt: skip
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
        jobs: list[tuple[dict[Any, dict[str, Any]], Any, tuple[Any, ...]]] = []
        for n in sorted({*sizes, *old_sizes}):
            data, preds = _write(Path(tmp), n)
            if n in sizes:
                jobs.append((new, n, ("import", data, preds, Path(tmp) / f"new_{n}.db",
                                      args.bootstrap, None)))  # fmt: skip
            if n in old_sizes:
                jobs.append((old, n, ("import", data, preds, Path(tmp) / f"old_{n}.db",
                                      args.bootstrap, args.old_src)))  # fmt: skip
            if args.extra and n == min(sizes):
                for mode in ("read", "run"):
                    jobs.append((extra, mode, (mode, data, preds, Path(tmp) / f"{mode}.db",
                                               args.bootstrap, None)))  # fmt: skip
                if args.long:
                    data, preds = _write(Path(tmp), n, pad=args.long)
                    jobs.append((extra, "long", ("import", data, preds, Path(tmp) / "long.db",
                                                 args.bootstrap, None)))  # fmt: skip
            if args.profile and n == min(sizes):
                jobs.append((extra, "profile", ("profile", data, preds,
                                                Path(tmp) / "profile.db", args.bootstrap, None)))  # fmt: skip
                floor_data, floor_preds = _write(Path(tmp), 1000)
                jobs.append((extra, "floor", ("import", floor_data, floor_preds,
                                              Path(tmp) / "floor.db", args.bootstrap, None)))  # fmt: skip

        def one(job: tuple[dict[Any, dict[str, Any]], Any, tuple[Any, ...]]) -> None:
            into, key, call = job
            into[key] = _run_child(*call)
            name = "new" if into is new else "old" if into is old else "extra"
            print(f"# {name} {key}: {json.dumps(into[key])}", flush=True)

        with ThreadPoolExecutor(max_workers=len(jobs) if args.parallel else 1) as pool:
            list(pool.map(one, jobs))
        if "long" in extra:
            extra["long"]["file_mib"] = (Path(tmp) / f"preds_{min(sizes)}_{args.long}.jsonl"
                                         ).stat().st_size / 2**20  # fmt: skip
    print(f"{'rows':>9} {'code':>4} {'import s':>9} {'ms/row':>7} {'CPU s':>8} {'CPU ms/row':>10} "
          f"{'peak RSS MiB':>13} {'accuracy':>9} {'figures':>17}")  # fmt: skip
    for n in sorted({*sizes, *old_sizes}):
        for name, got in (("old", old.get(n)), ("new", new.get(n))):
            if got is None:
                continue
            cpu = got.get("cpu_s", float("nan"))
            print(f"{n:>9} {name:>4} {got['seconds']:>9.1f} {1000 * got['seconds'] / n:>7.3f} "
                  f"{cpu:>8.1f} {1000 * cpu / n:>10.3f} "
                  f"{got['rss_mib']:>13.0f} {got['accuracy']:>9.4f} {got['digest']:>17}")  # fmt: skip
    if "profile" in extra:
        prof = extra["profile"]
        print(f"profile at {min(sizes)} (tracemalloc on): peak RSS {prof['rss_mib']:.0f} MiB; "
              f"a 1,000-row import's peak RSS (the floor) {extra['floor']['rss_mib']:.0f} MiB")  # fmt: skip
        for ph in prof["phases"]:
            print(f"  after {ph['step']}: RSS {ph['rss_now']} MiB, peak so far "
                  f"{ph['rss_peak_so_far']} MiB, heap peak in the step "
                  f"{ph['heap_peak_in_step']} MiB; held: {'; '.join(ph['held'])}")  # fmt: skip
    if "read" in extra:
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
        f"new_cpu_ms_per_row_{_label(n)}={1000 * new[n]['cpu_s'] / n:.3f} "
        f"new_rss_mib_{_label(n)}={new[n]['rss_mib']:.0f}"
        for n in sorted(new)
    ] + [
        f"old_ms_per_row_{_label(n)}={1000 * old[n]['seconds'] / n:.3f} "
        f"old_cpu_ms_per_row_{_label(n)}={1000 * old[n].get('cpu_s', float('nan')) / n:.3f} "
        f"old_rss_mib_{_label(n)}={old[n]['rss_mib']:.0f}"
        for n in sorted(old)
    ]
    same = [n for n in sorted(old) if n in new]
    pairs += [f"identical_{_label(n)}={old[n]['digest'] == new[n]['digest']}" for n in same]
    if small != big:
        rss = new[big]["rss_mib"] / new[small]["rss_mib"]
        per_row = (new[big]["seconds"] / big) / (new[small]["seconds"] / small)
        cpu_row = (new[big]["cpu_s"] / big) / (new[small]["cpu_s"] / small)
        pairs += [f"rss_ratio_{_label(big)}_{_label(small)}={rss:.2f}",
                  f"time_per_row_ratio_{_label(big)}_{_label(small)}={per_row:.2f}",
                  f"cpu_per_row_ratio_{_label(big)}_{_label(small)}={cpu_row:.2f}"]  # fmt: skip
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
