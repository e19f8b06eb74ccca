"""Scoring ReForm-Eval and Dysca files at two sizes: peak RSS and time, old readers beside new.

Writes a ReForm-Eval single-choice file (a JSON list; 500 samples, every third prediction a
``--pad``-character text naming no option) and a Dysca ground truth with its model output (a
JSON list each, multiple-choice questions only: captions would time the embedder) of N
entries, then scores each with ReForm-Eval's hook (`reform_published`, or the older
`score_prediction_file`) / `score_dysca_files` in a fresh process: wall time, CPU time and peak RSS (``ru_maxrss``), and a
digest of the figures. ``--old-src`` scores the same files with the code at that ``src`` (the
whole-file readers of 8b1e5ec: ``git archive 8b1e5ec src | tar -x -C OLD``) in the same run: at
each size the digests must be equal, and the new readers' RSS should not grow with the file.
Tests never assert on these figures.

Its first run (2-core shared machine, ``--sizes 20000,200000 --old-src`` 8b1e5ec's ``src``):
peak RSS of the new readers 66 and 70 MiB for ReForm-Eval files of 15 and 148 MiB, 70 and 71
MiB for Dysca pairs of 23 and 225 MiB; the whole-file readers 115 and 455, 111 and 595 MiB.
CPU time about twice the old (4.95 s against 2.65 s for 200,000 ReForm-Eval entries, 9.9 s
against 4.2 s for Dysca): the chunked decoding and per-entry checks. Every digest equal.

Usage: python benchmarks/streamed_files_scale.py [--sizes 20000,200000] [--pad 2000]
    [--old-src OLD/src]
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
from pathlib import Path
from typing import Any

OPTIONS = ["red", "blue", "green", "yellow"]
INSTRUCTION = "Which colour?\nChoices:\n(A) red\n(B) blue\nYour answer is:"


def _write(folder: Path, n: int, pad: int) -> dict[str, Path]:
    reform, truth, output = (folder / f"{k}_{n}.json" for k in ("reform", "gt", "out"))
    with reform.open("w") as r, truth.open("w") as g, output.open("w") as o:
        for fh in (r, g, o):
            fh.write("[")
        for i in range(n):
            sep = "," if i else ""
            pred = f"({'ABCD'[i % 4]})" if i % 3 else f"no idea {i} " + "x" * pad
            r.write(sep + json.dumps({"sample_id": i % 500, "answer": 1,
                                      "answer_options": OPTIONS, "prediction": pred}))  # fmt: skip
            g.write(sep + json.dumps({"instruction": INSTRUCTION, "question_type": "multi choice",
                                      "question_majority": "color", "answer": "blue"}))  # fmt: skip
            o.write(sep + json.dumps({"answer": "(B)" if i % 2 else "I think " + "z" * pad}))
        for fh in (r, g, o):
            fh.write("]")
    return {"reform": reform, "gt": truth, "out": output}


def _child(kind: str, files: dict[str, str]) -> None:
    from lmmprobe.predictions.dysca import score_dysca_files

    try:  # ReForm-Eval's figures: its reader's --as-published hook (one engine, issue 36)
        from lmmprobe.predictions.as_published.reform import reform_published

        def reform_metrics(path: str) -> Any:
            return reform_published(Path(path)).extra["metrics"]
    except ImportError:  # --old-src before it: the plain dispatcher of that code
        from lmmprobe.predictions import score_prediction_file

        def reform_metrics(path: str) -> Any:
            return score_prediction_file(path)["metrics"]

    start, cpu = time.perf_counter(), time.process_time()
    if kind == "reform":
        got: Any = reform_metrics(files["reform"])
    else:
        got = score_dysca_files(files["out"], files["gt"])
        got = {k: got[k] for k in ("overall", "by_question_majority", "averages")}
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    digest = hashlib.sha256(json.dumps(got, sort_keys=True).encode()).hexdigest()[:12]
    print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_mib": peak, "digest": digest}))


def _run(kind: str, files: dict[str, Path], src: str) -> dict[str, Any]:
    env = os.environ | {"PYTHONPATH": src}
    arg = json.dumps({k: str(v) for k, v in files.items()})
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, arg],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Write the files, score them by each code in fresh processes, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="20000,200000")
    parser.add_argument("--pad", type=int, default=2000)
    parser.add_argument("--old-src", default=None)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], json.loads(args.child[1]))
        return
    new_src = str(Path(__file__).resolve().parents[1] / "src")
    codes = [("new", new_src)] + ([("old", args.old_src)] if args.old_src else [])
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: list[tuple[str, int, str, float, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            files = _write(Path(tmp), n, args.pad)
            mib = sum(f.stat().st_size for f in files.values()) / 2**20
            for kind in ("reform", "dysca"):
                size = files["reform"].stat().st_size if kind == "reform" else (
                    files["gt"].stat().st_size + files["out"].stat().st_size
                )  # fmt: skip
                for name, src in codes:
                    rows.append((kind, n, name, size / 2**20, _run(kind, files, src)))
            for f in files.values():
                f.unlink()
            print(f"# {n} entries written ({mib:.0f} MiB in all)", flush=True)
    print(f"{'file':>6} {'entries':>8} {'code':>4} {'file MiB':>8} {'wall s':>7} {'CPU s':>6} "
          f"{'peak RSS MiB':>12} {'digest':>12}")  # fmt: skip
    for kind, n, name, size, got in rows:
        print(f"{kind:>6} {n:>8} {name:>4} {size:>8.1f} {got['seconds']:>7.2f} {got['cpu']:>6.2f} "
              f"{got['rss_mib']:>12.0f} {got['digest']:>12}")  # fmt: skip
    pairs = []
    for kind, n, name, _, got in rows:
        pairs.append(f"{kind}_{name}_{n}_rss_mib={got['rss_mib']:.0f}")
    for kind in ("reform", "dysca"):
        for n in sizes:
            digests = {got["digest"] for k, m, _, _, got in rows if k == kind and m == n}
            pairs.append(f"{kind}_{n}_digests_equal={len(digests) == 1}")
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
