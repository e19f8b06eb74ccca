"""Synthetic benchmark generation speed and memory (procedural renderer, PNG written).

Generates clean-scenario items at 512x512 into a temporary folder, with 1 and 2 worker
processes, and prints items (images) per second and questions per second. One item is one
rendered, styled, PNG-encoded image plus its three questions (multiple choice, true/false,
free form) written to samples.jsonl and dysca.json; the target is stated on images, the
stricter unit. Memory: the resident set of the main process is sampled after every chunk
(flat means its last value is close to its value early in the run), and the largest peak of
any worker process is read from the kernel's accounting for children.

Targets on a 2-core machine: >= 100 images/s with 2 workers; memory flat.

Usage: python benchmarks/synth.py [--n-1w 2000] [--n-2w 20000] [--size 512]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from lmmprobe.synth.generate import SynthConfig, write_dataset


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _run(n: int, workers: int, size: int) -> dict[str, float]:
    samples: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        manifest = write_dataset(
            SynthConfig(n=n, seed=0, size=size),
            Path(tmp) / "set",
            workers=workers,
            chunk_size=32,
            on_progress=lambda done, _total: samples.append((done, _rss_mb())),
        )
        elapsed = time.perf_counter() - t0
    early = next((mb for done, mb in samples if done >= n // 10), samples[0][1])
    return {
        "items": n,
        "seconds": elapsed,
        "images_per_s": n / elapsed,
        "questions_per_s": manifest["counts"]["samples"] / elapsed,
        "main_rss_early_mb": early,
        "main_rss_end_mb": samples[-1][1],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-1w", type=int, default=2_000)
    ap.add_argument("--n-2w", type=int, default=20_000)
    ap.add_argument("--size", type=int, default=512)
    args = ap.parse_args()
    one = _run(args.n_1w, 1, args.size)
    two = _run(args.n_2w, 2, args.size)
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    self_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'workers':>7} {'items':>7} {'seconds':>8} {'images/s':>9} {'questions/s':>12} "
          f"{'main RSS early':>15} {'main RSS end':>13}")  # fmt: skip
    for label, r in (("1", one), ("2", two)):
        print(
            f"{label:>7} {r['items']:>7.0f} {r['seconds']:>8.1f} {r['images_per_s']:>9.1f} "
            f"{r['questions_per_s']:>12.1f} {r['main_rss_early_mb']:>12.0f} MB "
            f"{r['main_rss_end_mb']:>10.0f} MB"
        )
    print(f"peak RSS: main {self_peak:.0f} MB, largest worker {children_peak:.0f} MB")
    peak = max(self_peak, children_peak)
    print(
        f"samples_per_s_1w={one['images_per_s']:.1f} samples_per_s_2w={two['images_per_s']:.1f} "
        f"peak_mb={peak:.0f}"
    )


if __name__ == "__main__":
    main()
