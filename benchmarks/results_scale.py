"""Rebuilding a stored run's results: every row a Score (old) vs stored rows reduced in chunks (new).

Builds, directly through the store API (as `benchmarks/report.py` does), a store holding one
finished single-choice run of one model over N rows (about 1% failed requests, 3% unparsed,
1% truncated, some abstention offered; usage on every response; ``--by subtask``; 1,000
bootstrap resamples; the samples recorded as the runner records them, each with a few
metadata keys; ``--repeats R`` asks each sample R times, N / R samples), then rebuilds its
results in fresh processes, one per way and size. With ``--shape mmbench`` the run is
MMBench-shaped: every row carries MMBench's tag (4 published copies per question, grouped by
``circular_index``), so its official ``mmbench_circular`` is computed, and with ``--repeats``
above 1 ``instability`` too: the metrics that read rows as Scores, not only columns. With
``--shape captions`` every row is a caption (no verdict, five reference captions, as a
ReForm-Eval caption task's rows): the corpus metrics BLEU-1..4, ROUGE-L and CIDEr, which
pycocoevalcap computes over the whole corpus at once (its BLEU scorer collects every image's
n-gram counts, its CIDEr scorer the references' document frequencies, before scoring), so the
rows' texts, not their Scores, are what the new way holds.

- old: every stored row read as a `Score` (`Store.iter_score_rows` + `score_from_row`, as the
  judge step's and the report's readers do), then `build_results` over those Scores held in
  memory (`ScoreRows`);
- new: `rebuild_results(store, run)`: the store's `RowSource`, one pass in chunks.

Each prints its wall time and peak RSS (``ru_maxrss``); the results must be identical (the
models' figures, dumped, compared in the parent). With ``--old-src DIR`` (an older checkout's
``src``, e.g. main's) the same run is also stored by that code, in a process of its own, and
rebuilt there with its `rebuild_results`: the store's file size and the rebuild's time and
peak RSS, before (that code's layout) and after (this one's). Tests never assert on time:
this script is where the figures come from.

Usage: python benchmarks/results_scale.py [--sizes 20000 200000] [--repeats 1]
       [--shape plain|mmbench] [--old-src DIR]
"""

from __future__ import annotations

import argparse
import json
import os
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
from lmmprobe.schema import ErrorInfo, Response, RunSpec, Sample, Score, ScoreRows, Usage
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row

RUN = "bench-results"
MODEL = "model-a"
SUBTASKS = ("color", "shape", "count", "position", "style", "text", "age", "emotion")
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")


def _spec(db: Path) -> RunSpec:
    return RunSpec(models=[MODEL], data="demo", db=str(db), bootstrap=1000, seed=0, by=["subtask"])


def build_store(db: Path, n: int, seed: int = 0, repeats: int = 1, shape: str = "plain") -> None:
    """One finished run of `n` rows (one model, `repeats` per sample), through the store API."""
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
            requests, responses, scores, samples = [], [], [], []
            for i in range(start, min(n, start + 20_000)):
                sid, repeat, key = f"s-{i // repeats:07d}", i % repeats, f"k-{i:07d}"
                if repeat == 0:
                    choices = rng.sample(COLORS, 4)
                    gold = rng.randrange(4)
                    # A few keys, as a benchmark's rows carry (MMBench: category, l2-category,
                    # index, source...); every row of the sample carries them.
                    meta = {
                        "subtask": SUBTASKS[(i // repeats) % len(SUBTASKS)], "source": "bench",
                        "category": f"category-{(i // repeats) % 20}", "index": i // repeats,
                        "split": "dev",
                    }  # fmt: skip
                    if shape == "mmbench":
                        # One question's 4 published copies (its options rotated) in a row.
                        meta |= {
                            "benchmark": "mmbench", "metric": "mmbench_circular",
                            "circular_index": i // repeats // 4, "n_options": 4,
                        }  # fmt: skip
                    if shape == "captions":
                        refs = [_caption(rng) for _ in range(5)]
                    samples.append(Sample(id=sid, question="What color?", choices=choices, answer=gold, metadata=meta))  # fmt: skip
                requests.append(template.model_copy(update={"key": key, "sample_id": sid, "repeat": repeat}))  # fmt: skip
                common: dict[str, Any] = dict(
                    model=MODEL, sample_id=sid, repeat=repeat, key=key, gold=gold,
                    gold_text=choices[gold], metadata=meta, abstain_offered=i % 10 == 0,
                )  # fmt: skip
                if shape == "captions":
                    text = _caption(rng)
                    common |= {"gold": refs, "gold_text": refs[0]}
                    responses.append(Response(key=key, text=text, latency_s=0.1))
                    scores.append(Score(stage="text", prediction_text=text, **common))
                    continue
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
            store.put_samples(RUN, samples)  # as the runner does: written with the answers
            store.put_responses(MODEL, requests, responses)
            store.put_scores(RUN, scores)
        outcome = _outcome(db, spec, manifest, [])
        results = build_results(outcome.record(), rows={MODEL: store.rows(RUN, MODEL)})
        store.update_run(RUN, status="complete", results=results.model_dump(mode="json"))


# fmt: off
_WORDS = (
    "a", "man", "woman", "dog", "cat", "red", "blue", "small", "large", "standing", "sitting",
    "on", "the", "in", "of", "with", "near", "street", "table", "grass", "water", "field",
    "park", "car", "bus", "tree", "sky", "two", "three", "people", "holding", "looking",
    "white",
)
# fmt: on


def _caption(rng: random.Random) -> str:
    """A caption-like sentence of 8 to 14 words."""
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(8, 15)))


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
        return build_results(outcome.record(), rows={MODEL: ScoreRows(scores)})


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


def _fresh(way: str, db: Path, out: Path, src: Path | None = None) -> dict[str, Any]:
    """`_measure` in a fresh process; with `src`, under the code there (PYTHONPATH)."""
    cmd = [sys.executable, __file__, "--measure", way, "--db", str(db), "--out", str(out)]
    subprocess.run(cmd, check=True, env=_env(src))
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _env(src: Path | None) -> dict[str, str] | None:
    return None if src is None else {**os.environ, "PYTHONPATH": str(src)}


def _build(db: Path, n: int, repeats: int, shape: str, src: Path | None = None) -> float:
    """Store the run in a fresh process (under the code at `src`); the seconds it took."""
    db.parent.mkdir(parents=True)
    t0 = time.perf_counter()
    cmd = [sys.executable, __file__, "--build", str(n), "--repeats", str(repeats), "--db", str(db),
           "--shape", shape]  # fmt: skip
    subprocess.run(cmd, check=True, env=_env(src))
    # The file as a reader finds it: the write-ahead log moved in when the store closed.
    return time.perf_counter() - t0


def _mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--repeats", type=int, default=1, help="rows per sample")
    ap.add_argument(
        "--shape",
        choices=["plain", "mmbench", "captions"],
        default="plain",
        help="the rows' benchmark",
    )
    ap.add_argument("--old-src", type=Path, help="an older checkout's src (before)")
    ap.add_argument("--measure", choices=["old", "new"], help=argparse.SUPPRESS)
    ap.add_argument("--build", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        _measure(args.measure, args.db, args.out)
        return
    if args.build:
        build_store(args.db, args.build, repeats=args.repeats, shape=args.shape)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            db = Path(tmp) / f"n{n}" / "lmmprobe.db"
            setup = _build(db, n, args.repeats, args.shape)
            old = _fresh("old", db, db.parent / "old.json")
            new = _fresh("new", db, db.parent / "new.json")
            same = old["figures"] == new["figures"]
            before = None
            if args.old_src:
                bdb = Path(tmp) / f"n{n}-before" / "lmmprobe.db"
                _build(bdb, n, args.repeats, args.shape, args.old_src)
                before = _fresh("new", bdb, bdb.parent / "new.json", args.old_src)
                before["store_mib"] = _mib(bdb)
                same = same and before["figures"] == new["figures"]
            rows.append((n, setup, old, new, _mib(db), before, same))
    print(
        f"rebuilding a stored run's results ({args.shape} rows, 1 model, --by subtask, 1000 "
        f"resamples, {args.repeats} row(s) per sample), fresh processes"
    )
    print(f"{'rows':>8} {'setup s':>8} {'old s':>8} {'new s':>8} {'speedup':>8} {'old MiB':>8} {'new MiB':>8} {'store MiB':>9} identical")  # fmt: skip
    for n, setup, old, new, store_mib, _, same in rows:
        print(
            f"{n:>8} {setup:>8.1f} {old['seconds']:>8.2f} {new['seconds']:>8.2f} "
            f"{old['seconds'] / new['seconds']:>8.1f} {old['peak_mib']:>8.0f} "
            f"{new['peak_mib']:>8.0f} {store_mib:>9.1f} {same}"
        )
    if args.old_src:
        print(f"\nbefore = the code at {args.old_src}, after = this code: rebuild_results on each one's store")  # fmt: skip
        print(f"{'rows':>8} {'store MiB':>9} {'after':>8} {'rebuild s':>9} {'after':>8} {'peak MiB':>8} {'after':>8}")  # fmt: skip
        for n, _, _, new, store_mib, before, _ in rows:
            print(
                f"{n:>8} {before['store_mib']:>9.1f} {store_mib:>8.1f} {before['seconds']:>9.2f} "
                f"{new['seconds']:>8.2f} {before['peak_mib']:>8.0f} {new['peak_mib']:>8.0f}"
            )
    pairs = []
    for n, _, old, new, store_mib, before, same in rows:
        k = f"{n // 1000}k"
        pairs += [
            f"old_s_{k}={old['seconds']:.2f}", f"new_s_{k}={new['seconds']:.2f}",
            f"speedup_{k}={old['seconds'] / new['seconds']:.1f}",
            f"old_mib_{k}={old['peak_mib']:.0f}", f"new_mib_{k}={new['peak_mib']:.0f}",
            f"store_mib_{k}={store_mib:.1f}",
        ]  # fmt: skip
        if before is not None:
            pairs += [
                f"before_store_mib_{k}={before['store_mib']:.1f}",
                f"before_rebuild_s_{k}={before['seconds']:.2f}",
                f"before_rebuild_mib_{k}={before['peak_mib']:.0f}",
            ]
        pairs.append(f"identical_{k}={same}")
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
