"""Wall time and orchestrator calls of a 5-experiment APEx campaign with the rules orchestrator.

Two tiny random-weight models (built locally, CPU) are evaluated by likelihood ranking on every
experiment; ``--run-all`` semantics (no early stop) make the campaign run all 5 experiments.
Images are composed into a fresh cache, responses go to a fresh store. A second, warm run
(``replay:`` of the saved report into the same store and cache) shows what a rerun costs when
images and responses are reused.

Usage: python benchmarks/apex.py [--models hf:tiny-llava,hf:tiny-idefics3]
       [--images-per-answer 20] [--query "Can models identify rotated images?"]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from lmmprobe.apex import Settings, run_campaign


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="hf:tiny-llava,hf:tiny-idefics3")
    ap.add_argument("--images-per-answer", type=int, default=20)
    ap.add_argument("--experiments", type=int, default=5)
    ap.add_argument("--image-size", type=int, default=256)
    ap.add_argument("--query", default="Can models identify rotated images?")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    settings = Settings(
        images_per_answer=args.images_per_answer,
        max_experiments=args.experiments,
        image_size=args.image_size,
        stop_when_sufficient=False,
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        stamps: list[float] = []

        def say(line: str) -> None:
            if line.startswith("experiment "):
                stamps.append(time.perf_counter())

        start = time.perf_counter()
        cold = run_campaign(
            args.query, models, "rules", out=root / "cold", settings=settings,
            db=root / "store.db", cache_dir=root / "cache", say=say,
        )  # fmt: skip
        cold_s = time.perf_counter() - start
        start = time.perf_counter()
        warm = run_campaign(
            args.query, models, f"replay:{cold.report_json}", out=root / "warm",
            db=root / "store.db", cache_dir=root / "cache",
        )  # fmt: skip
        warm_s = time.perf_counter() - start

    report = cold.report
    print(f"query: {report.query!r}; models: {', '.join(models)}; status: {report.status}")
    header = f"{'exp':>3} {'difficulty':<10} {'answers':>7} {'images':>6}  " + "  ".join(
        f"{m:>22}" for m in models
    )
    print(header)
    print("-" * len(header))
    for rec in report.experiments:
        cells = []
        for r in rec.results.models:
            acc = r.accuracy
            cells.append(f"{acc.value:.2f} [{acc.low:.2f},{acc.high:.2f}]".rjust(22))
        print(
            f"{rec.index:>3} {rec.experiment.difficulty:<10} {len(rec.experiment.answers):>7} "
            f"{rec.results.n_images:>6}  " + "  ".join(cells)
        )
    images = sum(rec.results.n_images for rec in report.experiments)
    composed = sum(rec.dataset.made for rec in report.experiments)
    requests = images * len(models)
    per_exp = [b - a for a, b in itertools.pairwise(stamps)]
    print(
        f"cold: {cold_s:.1f} s for {len(report.experiments)} experiments ({images} images, "
        f"{composed} composed, {requests} model requests); warm replay: {warm_s:.1f} s"
    )
    if per_exp:
        print("seconds between experiment starts: " + ", ".join(f"{x:.1f}" for x in per_exp))
    print(
        f"wall_s={cold_s:.2f} orchestrator_calls={report.orchestrator_calls} "
        f"experiments={len(report.experiments)} images={images} requests={requests} "
        f"images_per_s={images / cold_s:.1f} warm_replay_s={warm_s:.2f} "
        f"replay_calls={warm.report.orchestrator_calls}"
    )


if __name__ == "__main__":
    main()
