"""Synthetic video generation speed (``synth generate --video``): clips per second.

Generates clean-scenario clips (32 frames of 256x256 each, drawn by the procedural renderer
and encoded losslessly with FFV1) into a temporary folder, with 1 and 2 worker processes side
by side in one run, and prints clips and frames per second and the bytes written per clip.
The 2-worker figure includes starting the spawned workers, as a user's run does.

Usage: python benchmarks/synth_video.py [--n 48] [--size 256] [--scenarios clean]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from lmmprobe.synth.video import FRAMES, VideoSynthConfig, write_video_dataset


def _run(config: VideoSynthConfig, workers: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set"
        t0 = time.perf_counter()
        manifest = write_video_dataset(config, out, workers=workers)
        elapsed = time.perf_counter() - t0
        clips = manifest["counts"]["samples"]
        written = sum(p.stat().st_size for p in out.rglob("*.mkv"))
    return {
        "clips": clips,
        "seconds": elapsed,
        "clips_per_s": clips / elapsed,
        "frames_per_s": clips * FRAMES / elapsed,
        "mb_per_clip": written / clips / 1e6,
    }


def main() -> None:
    """Measure 1 and 2 workers on the same settings and print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="Clips per scenario.")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--scenarios", default="clean")
    args = parser.parse_args()
    config = VideoSynthConfig(
        n=args.n, seed=0, size=args.size, scenarios=tuple(args.scenarios.split(","))
    )
    results = {w: _run(config, w) for w in (1, 2)}
    print(
        f"{'workers':>7} {'clips':>6} {'seconds':>8} {'clips/s':>8} {'frames/s':>9} {'MB/clip':>8}"
    )
    for w, r in results.items():
        print(
            f"{w:>7} {r['clips']:>6.0f} {r['seconds']:>8.1f} {r['clips_per_s']:>8.2f} "
            f"{r['frames_per_s']:>9.1f} {r['mb_per_clip']:>8.2f}"
        )
    print(
        f"synth_video_clips_per_s_1w={results[1]['clips_per_s']:.2f} "
        f"synth_video_clips_per_s_2w={results[2]['clips_per_s']:.2f} "
        f"synth_video_mb_per_clip={results[2]['mb_per_clip']:.2f} size={args.size} "
        f"frames_per_clip={FRAMES}"
    )


if __name__ == "__main__":
    main()
