"""Rebuilding a stored run's results: every row a Score (old) vs stored rows reduced in chunks (new).

Builds, directly through the store API (as `benchmarks/report.py` does), a store holding one
finished single-choice run of one model over N samples (about 1% failed requests, 3% unparsed,
1% truncated, some abstention offered; usage on every response; ``--by subtask``; 1,000
bootstrap resamples), then rebuilds its results in fresh processes, one per way and size:

- old: every stored row read as a `Score` (`Store.iter_score_rows` + `score_from_row`, as the
  judge step's and the report's readers do), then `build_results` over those Scores;
- new: `rebuild_results(store, run)`: the store's `RowSource`, one pass in chunks.

Each prints its wall time and peak RSS (``ru_maxrss``); the two results must be identical (the
models' figures, dumped, compared in the parent). Tests never assert on time: this script is
where the figures come from.

Usage: python benchmarks/results_scale.py [--sizes 20000 200000]
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
from typing import Any

from lmmprobe.data.base import LoadResult
from lmmprobe.formulate import formulate
from lmmprobe.metrics import run_metrics
from lmmprobe.models.base import ModelIdentity
from lmmprobe.report import Results, build_results, rebuild_results
from lmmprobe.run.manifest import build_manifest
from lmmprobe.run.runner import ModelOutcome, RunOutcome
from lmmprobe.schema import ErrorInfo, Response, RunSpec, Sample, Score, Usage
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row

RUN = "bench-results"
MODEL = "model-a"
SUBTASKS = ("color", "shape", "count", "position", "style", "text", "age", "emotion")
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")


def _spec(db: Path) -> RunSpec:
    return RunSpec(models=[MODEL], data="demo", db=str(db), bootstrap=1000, seed=0, by=["subtask"])


def build_store(db: Path, n: int, seed: int = 0) -> None:
    """One finished run of `n` rows (one model, one repeat), written through the store API."""
    rng = random.Random(seed)
    spec = _spec(db)
    idents = {MODEL: ModelIdentity(backend="bench", name=MODEL)}
    manifest = build_manifest(spec, idents, "bench", n)
    template = formulate(Sample(id="t", question="What color?", choices=list(COLORS[:4]), answer=0))
    store = Store(db)
    with store:
        store.create_run(RUN, spec.model_dump(mode="json"), str(db.parent / RUN))
        store.update_run(RUN, manifest=manifest)
        for start in range(0, n, 20_000):
            requests, responses, scores = [], [], []
            for i in range(start, min(n, start + 20_000)):
                sid, key = f"s-{i:07d}", f"k-{i:07d}"
                choices = rng.sample(COLORS, 4)
                gold = rng.randrange(4)
                requests.append(template.model_copy(update={"key": key, "sample_id": sid}))
                meta = {"subtask": SUBTASKS[i % len(SUBTASKS)], "source": "bench"}
                common: dict[str, Any] = dict(
                    model=MODEL, sample_id=sid, repeat=0, key=key, gold=gold,
                    gold_text=choices[gold], metadata=meta, abstain_offered=i % 10 == 0,
                )  # fmt: skip
                roll = rng.random()
                if roll < 0.01:
                    responses.append(Response(key=key, error=ErrorInfo(type="timeout", message="timed out", retryable=True)))  # fmt: skip
                    scores.append(Score(stage="error", error_type="timeout", **common))
                    continue
                usage = Usage(prompt_tokens=rng.randrange(40, 90), completion_tokens=rng.randrange(1, 30))  # fmt: skip
                responses.append(Response(key=key, text="(A)", latency_s=0.1, usage=usage))
                if roll < 0.04:
                    scores.append(Score(stage="unparsed", correct=False, **common))
                elif roll < 0.05:
                    scores.append(Score(stage="truncated", correct=False, **common))
                else:
                    pred = gold if rng.random() < 0.7 else rng.randrange(4)
                    scores.append(Score(
                        stage="mark", prediction=pred, prediction_text=choices[pred],
                        correct=pred == gold, format_hit=True, options=choices,
                        marks=list("ABCD"), order=[0, 1, 2, 3], **common,
                    ))  # fmt: skip
            store.put_responses(MODEL, requests, responses)
            store.put_scores(RUN, scores)
        outcome = _outcome(db, spec, manifest, [])
        results = build_results(outcome, rows={MODEL: store.rows(RUN, MODEL)})
        store.update_run(RUN, status="complete", results=results.model_dump(mode="json"))


def _outcome(db: Path, spec: RunSpec, manifest: dict[str, Any], scores: list[Score]) -> RunOutcome:
    ident = ModelIdentity(backend="bench", name=MODEL)
    outcome = RunOutcome(
        RUN, spec, db, db.parent / RUN, LoadResult(samples=[], source="demo"), manifest,
        status="complete",
    )  # fmt: skip
    outcome.models.append(ModelOutcome(MODEL, ident, scores, requests=len(scores)))
    return outcome


def rebuild_old(db: Path) -> Results:
    """The old way: every row a Score, then `build_results` over them."""
    with Store(db, read_only=True) as store:
        run = store.get_run(RUN)
        scores = [score_from_row(rec) for rec in store.iter_score_rows(RUN)]
        outcome = _outcome(db, _spec(db), run["manifest"], scores)
        return build_results(outcome)


def rebuild_new(db: Path) -> Results:
    """The new way: `rebuild_results` reduces the stored rows in chunks."""
    with Store(db, read_only=True) as store:
        return rebuild_results(store, RUN)


def _measure(way: str, db: Path, out: Path) -> None:
    run_metrics()  # the registry's discovery imports are start-up, the same for both ways
    t0 = time.perf_counter()
    results = rebuild_old(db) if way == "old" else rebuild_new(db)
    seconds = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {
        m: r.model_dump(mode="json", exclude={"stats", "judge"}) for m, r in results.models.items()
    }
    out.write_text(json.dumps({"seconds": seconds, "peak_mib": peak_mib, "figures": figures}))


def _fresh(way: str, db: Path, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--measure", way, "--db", str(db), "--out", str(out)]
    subprocess.run(cmd, check=True)
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--measure", choices=["old", "new"], help=argparse.SUPPRESS)
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
            t0 = time.perf_counter()
            build_store(db, n)
            setup = time.perf_counter() - t0
            old = _fresh("old", db, db.parent / "old.json")
            new = _fresh("new", db, db.parent / "new.json")
            rows.append((n, setup, old, new, old["figures"] == new["figures"]))
    print(
        "rebuilding a stored run's results (1 model, --by subtask, 1000 resamples), fresh processes"
    )
    print(f"{'rows':>8} {'setup s':>8} {'old s':>8} {'new s':>8} {'speedup':>8} {'old MiB':>8} {'new MiB':>8} identical")  # fmt: skip
    for n, setup, old, new, same in rows:
        print(
            f"{n:>8} {setup:>8.1f} {old['seconds']:>8.2f} {new['seconds']:>8.2f} "
            f"{old['seconds'] / new['seconds']:>8.1f} {old['peak_mib']:>8.0f} "
            f"{new['peak_mib']:>8.0f} {same}"
        )
    pairs = []
    for n, _, old, new, same in rows:
        k = f"{n // 1000}k"
        pairs += [
            f"old_s_{k}={old['seconds']:.2f}", f"new_s_{k}={new['seconds']:.2f}",
            f"speedup_{k}={old['seconds'] / new['seconds']:.1f}",
            f"old_mib_{k}={old['peak_mib']:.0f}", f"new_mib_{k}={new['peak_mib']:.0f}",
            f"identical_{k}={same}",
        ]  # fmt: skip
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
