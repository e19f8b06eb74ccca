"""Exporting a judged run: every verdict of the run in one dict (old) vs read chunk by chunk (new).

Builds, directly through the store API (as `benchmarks/results_scale.py` does), a store
holding one judged single-choice run: 3 models, N rows in all (N / 6 samples asked twice by
each model), every row with two judges' verdicts (a third of them a rule's too, as
``--judge-when miss`` leaves), then exports it as JSON lines (`lmmprobe.store.export`, which
reads `Store.iter_score_rows`, as ``model_scores``, the judge step and the results path do)
in fresh processes, one per way and size:

- old: `Store.iter_score_rows` as it was: `Store.get_judgements` builds a dict of every
  verdict of the run (every model's) as `Judgement`s before the first row is read;
- new: `Store.iter_score_rows` as it is: each chunk of rows reads its own verdicts.

Each prints its wall time and peak RSS (``ru_maxrss``); the two exports must be identical
(their SHA-256, compared in the parent). Tests never assert on time: this script is where the
figures come from.

Usage: python benchmarks/judged_rows.py [--sizes 30000 300000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.formulate import formulate
from lmmprobe.schema import Judgement, Response, RunSpec, Sample, Score, Usage
from lmmprobe.store import Store
from lmmprobe.store.export import export_run

RUN = "bench-judged"
MODELS = ("model-a", "model-b", "model-c")
JUDGES = ("openai:judge-a@http://127.0.0.1:1/v1", "openai:judge-b@http://127.0.0.1:1/v1")
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")
REPEATS = 2


def build_store(db: Path, n: int, seed: int = 0) -> None:
    """One judged run of `n` rows (3 models, 2 repeats per sample), through the store API."""
    rng = random.Random(seed)
    spec = RunSpec(models=list(MODELS), data="demo", db=str(db), seed=0)
    template = formulate(Sample(id="t", question="What color?", choices=list(COLORS[:4]), answer=0))
    per_model = n // len(MODELS)
    with Store(db) as store:
        store.create_run(RUN, spec.model_dump(mode="json"), str(db.parent / RUN))
        for model in MODELS:
            for start in range(0, per_model, 20_000):
                requests, responses, scores, verdicts = [], [], [], []
                for i in range(start, min(per_model, start + 20_000)):
                    # Integer-like and text ids, as benchmarks give them.
                    sid = str(i // REPEATS) if i % 4 < 2 else f"q-{i // REPEATS:07d}"
                    repeat, key = i % REPEATS, f"{model}-{i:07d}"
                    gold = rng.randrange(4)
                    requests.append(template.model_copy(update={"key": key, "sample_id": sid, "repeat": repeat}))  # fmt: skip
                    usage = Usage(prompt_tokens=rng.randrange(40, 90), completion_tokens=rng.randrange(1, 30))  # fmt: skip
                    responses.append(Response(key=key, text="the second one", latency_s=0.1, usage=usage))  # fmt: skip
                    scores.append(Score(
                        model=model, sample_id=sid, repeat=repeat, key=key, gold=gold,
                        gold_text=COLORS[gold], stage="unparsed", correct=False,
                        metadata={"subtask": f"s{i % 8}", "index": i // REPEATS},
                    ))  # fmt: skip
                    base = {"protocol": "lmmprobe-choice", "version": "2"}
                    if i % 3 == 0:
                        verdicts.append((sid, repeat, Judgement(**base, judge=None, decided_by="rule", value=0.0, reading="B")))  # fmt: skip
                    for judge in JUDGES:
                        pick = rng.randrange(4)
                        verdicts.append((sid, repeat, Judgement(
                            **base, judge=judge, decided_by="judge", key=f"j-{judge[-20:]}-{key}",
                            value=float(pick == gold), reading="ABCD"[pick],
                            detail={"reply": "ABCD"[pick]},
                        )))  # fmt: skip
                store.put_responses(model, requests, responses)
                store.put_scores(RUN, scores)
                store.put_judgements(RUN, model, verdicts)
        store.update_run(RUN, status="complete")


def _old_iter_score_rows(
    self: Store, run_id: str, *, model: str | None = None
) -> Iterator[dict[str, Any]]:
    """`Store.iter_score_rows` before: every verdict of the run in one dict first."""
    judged = self.get_judgements(run_id)
    for rec in self._score_rows(run_id, model):
        found = judged.get((rec["model"], rec["sample_id"], rec["repeat"]))
        if found:
            rec["judgements"] = [j.model_dump() for j in found]
        yield rec


class _Digest:
    """A text sink that keeps only the SHA-256 of what is written (the export is not held)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def write(self, text: str) -> int:
        self.h.update(text.encode())
        return len(text)


def _measure(way: str, db: Path, out: Path) -> None:
    if way == "old":
        Store.iter_score_rows = _old_iter_score_rows  # type: ignore[method-assign]
    sink = _Digest()
    t0 = time.perf_counter()
    with Store(db, read_only=True) as store:
        rows = export_run(store, RUN, "jsonl", sink)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    doc = {"seconds": seconds, "peak_mib": peak_mib, "rows": rows, "sha": sink.h.hexdigest()}
    out.write_text(json.dumps(doc))


def _fresh(*args: str) -> None:
    subprocess.run([sys.executable, __file__, *args], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[30_000, 300_000])
    ap.add_argument("--measure", choices=["old", "new"], help=argparse.SUPPRESS)
    ap.add_argument("--build", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        _measure(args.measure, args.db, args.out)
        return
    if args.build:
        build_store(args.db, args.build)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            db = Path(tmp) / f"n{n}" / "lmmprobe.db"
            db.parent.mkdir(parents=True)
            _fresh("--build", str(n), "--db", str(db))
            figures = {}
            for way in ("old", "new"):
                out = db.parent / f"{way}.json"
                _fresh("--measure", way, "--db", str(db), "--out", str(out))
                figures[way] = json.loads(out.read_text())
            rows.append((n, figures["old"], figures["new"]))
    print("exporting a judged run (3 models, 2 judges' verdicts on every row), fresh processes")
    print(f"{'rows':>8} {'old s':>8} {'new s':>8} {'old MiB':>8} {'new MiB':>8} identical")
    pairs = []
    for n, old, new in rows:
        same = old["sha"] == new["sha"] and old["rows"] == new["rows"]
        print(
            f"{old['rows']:>8} {old['seconds']:>8.2f} {new['seconds']:>8.2f} "
            f"{old['peak_mib']:>8.0f} {new['peak_mib']:>8.0f} {same}"
        )
        k = f"{n // 1000}k"
        pairs += [
            f"old_s_{k}={old['seconds']:.2f}", f"new_s_{k}={new['seconds']:.2f}",
            f"old_mib_{k}={old['peak_mib']:.0f}", f"new_mib_{k}={new['peak_mib']:.0f}",
            f"identical_{k}={same}",
        ]  # fmt: skip
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
