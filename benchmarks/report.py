"""HTML report generation: time and file size for 10 models × 5,000 samples.

Builds a store as `lmmprobe run` leaves it (one run, 10 models, every response and score,
results.json with bootstrap CIs) directly through the store API, over a JSONL dataset of
5,000 distinct 256 px JPEG pictures (smooth random fields with shapes, closer to photographs
than flat colors), then times `lmmprobe report` end to end: reading the rows, reloading the
data, thumbnails, every table and chart, and writing the page.

Targets on a 2-core machine: under 20 s and under 25 MB.

Usage: python benchmarks/report.py [--models 10] [--samples 5000]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from lmmprobe.data import data_fingerprint, load_source
from lmmprobe.formulate import formulate
from lmmprobe.models.base import ModelIdentity
from lmmprobe.report import build_results, write_report, write_results
from lmmprobe.run.manifest import build_manifest
from lmmprobe.run.runner import ModelOutcome, RunOutcome
from lmmprobe.schema import ErrorInfo, Response, RunSpec, Score, ScoreRows
from lmmprobe.store import Store

SUBTASKS = ("color", "shape", "count", "position", "style", "text", "age", "emotion")
SCENARIOS = ("clean", "corruption", "print_attack")
COLORS = ("red", "green", "blue", "yellow", "purple", "orange", "white", "black")


def _picture(rng: np.random.Generator, size: int = 256) -> Image.Image:
    """A smooth random color field with a few shapes: compresses like a simple photograph."""
    field = rng.random((8, 8, 3)) * 255
    im = Image.fromarray(field.astype(np.uint8), "RGB").resize(
        (size, size), Image.Resampling.BICUBIC
    )
    draw = ImageDraw.Draw(im)
    for _ in range(3):
        x, y = rng.integers(0, size - 40, 2)
        r = int(rng.integers(15, 60))
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        draw.ellipse((int(x), int(y), int(x) + r, int(y) + r), fill=fill)
    return im


def write_dataset(folder: Path, n: int, seed: int = 0) -> Path:
    """JSONL + n distinct JPEG pictures."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    (folder / "img").mkdir(parents=True)
    rows = []
    for i in range(n):
        name = f"img/{i:05d}.jpg"
        _picture(rng).save(folder / name, quality=85)
        tf = i % 3 == 2
        choices = ["yes", "no"] if tf else pick.sample(COLORS, 4)
        rows.append(
            {
                "id": f"b-{i:05d}",
                "images": [name],
                "question": (
                    f"Is the largest shape {choices[0]}?"
                    if tf
                    else "What color is the largest shape?"
                ),
                "choices": choices,
                "answer": pick.randrange(len(choices)),
                "formulation": "true_false" if tf else "single_choice",
                "metadata": {
                    "subtask": SUBTASKS[i % len(SUBTASKS)],
                    "scenario": SCENARIOS[(i // len(SUBTASKS)) % len(SCENARIOS)],
                    "question_type": "true_false" if tf else "multiple_choice",
                },
            }
        )
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def build_store(db: Path, data: Path, models: int, seed: int = 0) -> str:
    """One finished run of `models` fake models, written through the store API."""
    rng = random.Random(seed)
    names = [f"model-{k:02d}" for k in range(models)]
    spec = RunSpec(models=names, data=str(data), db=str(db), bootstrap=1000, seed=seed)
    load = load_source(spec.data)
    samples = load.samples
    requests = [formulate(s, config=spec.formulate, gen=spec.gen, seed=seed) for s in samples]
    idents = {m: ModelIdentity(backend="bench", name=m) for m in names}
    manifest = build_manifest(spec, idents, data_fingerprint(samples), len(samples))
    run_id = "bench-report"
    out_dir = db.parent / run_id
    with Store(db) as store:
        store.create_run(run_id, spec.model_dump(mode="json"), str(out_dir))
        store.update_run(run_id, manifest=manifest)
        outcome = RunOutcome(run_id, spec, db, out_dir, load, manifest, status="complete")
        for k, model in enumerate(names):
            skill = 0.3 + 0.6 * k / max(1, models - 1)
            keyed, responses, scores = [], [], []
            for sample, req in zip(samples, requests, strict=True):
                key = f"{model}:{req.sample_id}"
                keyed.append(req.model_copy(update={"key": key}))
                assert sample.choices is not None and isinstance(sample.answer, int)
                roll = rng.random()
                if roll < 0.01:
                    responses.append(Response(key=key, error=ErrorInfo(type="timeout", message="read timed out after 60 s", retryable=True)))  # fmt: skip
                    scores.append(Score(model=model, sample_id=sample.id, repeat=0, key=key, stage="error", gold=sample.answer, gold_text=sample.gold_text, error_type="timeout", metadata=sample.metadata))  # fmt: skip
                    continue
                if roll < 0.04:
                    text, stage, pred = "I am not sure what the picture shows.", "unparsed", None
                else:
                    right = rng.random() < skill
                    pred = sample.answer if right else rng.randrange(len(sample.choices))
                    text, stage = f"The answer is ({'ABCD'[pred]}) {sample.choices[pred]}.", "mark"
                responses.append(Response(key=key, text=text, latency_s=0.2))
                scores.append(
                    Score(
                        model=model, sample_id=sample.id, repeat=0, key=key, stage=stage,
                        prediction=pred, prediction_text=None if pred is None else sample.choices[pred],
                        correct=pred == sample.answer, format_hit=stage == "mark",
                        gold=sample.answer, gold_text=sample.gold_text, metadata=sample.metadata,
                    )
                )  # fmt: skip
            store.put_responses(model, keyed, responses)
            store.put_scores(run_id, scores)
            outcome.models.append(
                ModelOutcome(model, idents[model], scores, requests=len(scores), called=len(scores))
            )
        results = build_results(
            outcome.record(), rows={m.spec: ScoreRows(m.scores) for m in outcome.models}
        )
        store.update_run(run_id, status="complete", results=results.model_dump(mode="json"))
    write_results(results, out_dir)
    return run_id


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--samples", type=int, default=5000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        data = write_dataset(root / "data", args.samples)
        db = root / "runs" / "lmmprobe.db"
        run_id = build_store(db, data, args.models)
        setup = time.perf_counter() - t0
        rows = []
        for fmt in ("html", "md", "csv", "json"):
            out = root / f"report.{fmt}"
            t0 = time.perf_counter()
            write_report([run_id], out, fmt=fmt, db=db)  # type: ignore[arg-type]
            rows.append((fmt, time.perf_counter() - t0, out.stat().st_size / 1e6))
    print(f"setup (dataset + store, not timed): {setup:.1f} s; {args.models} models × {args.samples} samples")  # fmt: skip
    print(f"{'format':<7} {'seconds':>8} {'MB':>8}")
    for fmt, dt, mb in rows:
        print(f"{fmt:<7} {dt:>8.2f} {mb:>8.2f}")
    html = rows[0]
    print(f"report_seconds={html[1]:.1f} report_mb={html[2]:.1f}")


if __name__ == "__main__":
    main()
