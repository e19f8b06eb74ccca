"""The report's video strips: frames decoded one by one (old) vs one pass per video on threads (new).

Generates a synthetic video set (``synth generate --video``: clean clips of 32 frames, FFV1
with a keyframe every 12 frames, as `lmmprobe.synth.video` writes them), runs the ``first``
model over it with ``--frames F`` through the console script, then builds the report's sample
browser data (`lmmprobe.report._browser.browser_payload`) from the stored run three ways, side
by side in one process (``--h264-gop N`` re-encodes the clips as H.264 with a keyframe every
N frames first, as downloaded videos are, where reaching a frame alone decodes more):

- ``alone``: ``frame_workers=0``, each frame opened, sought and decoded by itself where the page
  shows it (what every report did before);
- ``pass_1``: one thread decoding ahead, each video opened once and its frames decoded in one
  pass in time order;
- ``pass_N``: ``FRAME_WORKERS`` threads (``--workers`` to change).

Wall and CPU seconds (this process: the threads included) of building the data, and whether
the three pages are byte for byte the same (the figures line ends with ``identical=``; the
script exits 1 when they are not). With the defaults (130 clips of 16 frames: 2,080 frames,
over the report's 2,000-frame budget) generating and running take a few minutes here.

Usage: python benchmarks/report_frames.py [--clips 130] [--frames 16] [--size 256] [--workers N]
    [--h264-gop N]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmmprobe.report import load_report_data
from lmmprobe.report._browser import FRAME_WORKERS, browser_payload
from lmmprobe.synth.video import VideoSynthConfig, write_video_dataset


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _to_h264(clip: Path, gop: int) -> None:
    """Re-encode `clip` in place as H.264 with a keyframe every `gop` frames (same frames)."""
    import av

    out_path = clip.with_suffix(".h264.mkv")
    with av.open(str(clip)) as src, av.open(str(out_path), "w") as out:
        decoded = src.streams.video[0]
        stream = out.add_stream("libx264", rate=decoded.average_rate)
        stream.width, stream.height, stream.pix_fmt = (
            decoded.codec_context.width,
            decoded.codec_context.height,
            "yuv420p",
        )
        stream.gop_size = gop
        for frame in src.decode(decoded):
            rgb = frame.to_ndarray(format="rgb24")
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    out_path.replace(clip)


def _make_run(root: Path, clips: int, frames: int, size: int, gop: int) -> tuple[Path, str]:
    data = root / "set"
    write_video_dataset(VideoSynthConfig(n=clips, size=size), data, workers=1)
    if gop:
        for clip in sorted(data.rglob("*.mkv")):
            _to_h264(clip, gop)
    db = root / "runs.db"
    script = Path(sys.executable).with_name("lmmprobe")
    command = [str(script), "run", "--data", f"synth:{data}", "-m", "first", "--frames",
               str(frames), "--db", str(db), "--out", str(root / "out"), "-q"]  # fmt: skip
    ran = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"run id: (\S+)", ran.stdout)
    if found is None:
        raise SystemExit(f"no run id in: {ran.stdout}")
    return db, found.group(1)


def _build(db: Path, run_id: str, workers: int) -> tuple[float, float, str, int]:
    data = load_report_data([run_id], db=db)
    cpu, wall = _cpu(), time.perf_counter()
    blob = browser_payload(data, frame_workers=workers)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    page = json.dumps([blob, data.warnings], sort_keys=True)
    return wall, cpu, page, len(blob["thumbs"])


def main() -> None:
    """Build the browser data the three ways and print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=130)
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=FRAME_WORKERS)
    parser.add_argument(
        "--h264-gop",
        type=int,
        default=0,
        help="re-encode the clips as H.264 with a keyframe every N frames (0: keep FFV1)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        db, run_id = _make_run(Path(tmp), args.clips, args.frames, args.size, args.h264_gop)
        codec = f"H.264, keyframe every {args.h264_gop}" if args.h264_gop else "FFV1"
        print(f"{args.clips} clips at {args.size} px ({codec}), --frames {args.frames}: "
              f"generated and run in {time.perf_counter() - t0:.1f} s")  # fmt: skip
        ways = {"alone": 0, "pass_1": 1, f"pass_{args.workers}": args.workers}
        got = {name: _build(db, run_id, workers) for name, workers in ways.items()}
    alone_wall = got["alone"][0]
    print(f"{'way':<10} {'frames':>7} {'wall s':>8} {'cpu s':>8} {'vs alone':>9}")
    for name, (wall, cpu, _, thumbs) in got.items():
        print(f"{name:<10} {thumbs:>7} {wall:>8.2f} {cpu:>8.2f} {alone_wall / wall:>8.2f}x")
    identical = len({page for _, _, page, _ in got.values()}) == 1
    figures = {f"{name}_s": f"{wall:.2f}" for name, (wall, _, _, _) in got.items()}
    figures |= {f"{name}_cpu_s": f"{cpu:.2f}" for name, (_, cpu, _, _) in got.items()}
    last = f"pass_{args.workers}"
    figures |= {
        "frames": str(got["alone"][3]),
        "speedup_1": f"{alone_wall / got['pass_1'][0]:.2f}",
        f"speedup_{args.workers}": f"{alone_wall / got[last][0]:.2f}",
        "identical": str(identical),
    }
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    if not identical:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
