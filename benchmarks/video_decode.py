"""Sampling 32 frames from a long 720p video: PyAV (what lmmprobe uses) against torchcodec.

Generates, with PyAV, a 720p H.264 clip at 25 fps with a keyframe every 250 frames (x264's
default) whose every frame shows its own index as a code of black and white blocks, one of
1 minute and one of 10 minutes. Each decoder then samples 32 frames (``frames=32``: the
middle of 32 equal parts) in a process of its own, which reports the time taken, its peak
memory, and the frame indices it read from the pictures: seek accuracy is how many of the 32
are the frame a player shows at the sampled time (index ``floor(t * 25)``). PyAV goes through
lmmprobe's own sampler (`lmmprobe.schema._video_decode`); torchcodec through
``VideoDecoder(seek_mode="exact").get_frames_played_at``. Install size is the package's files
on disk (torchcodec also needs torch and the system's FFmpeg libraries, not counted).

Run from the repository root, each library importable (``pip install av torchcodec``, or
``--target`` folders on PYTHONPATH)::

    PYTHONPATH=src python benchmarks/video_decode.py [--minutes 1,10] [--workdir DIR]

A library that does not import or load is reported with the reason, not measured.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

FPS = 25
WIDTH, HEIGHT = 1280, 720
GOP = 250
FRAMES = 32
BITS = 16  # frame index code: 16 blocks in a row, white = 1
BLOCK = WIDTH // BITS


def generate(path: Path, minutes: float) -> None:
    """Write a `minutes`-long 720p clip whose frames show their index as block codes."""
    import av
    import numpy as np

    total = int(minutes * 60 * FPS)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=FPS, options={"preset": "ultrafast"})
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.gop_size = GOP
        planes = np.full((HEIGHT * 3 // 2, WIDTH), 128, np.uint8)
        for i in range(total):
            y = planes[:HEIGHT]
            y[: HEIGHT // 2] = 16
            for b in range(BITS):
                if i >> b & 1:
                    y[: HEIGHT // 2, b * BLOCK : (b + 1) * BLOCK] = 235
            y[HEIGHT // 2 :] = (np.arange(WIDTH) + 7 * i) % 200 + 20
            frame = av.VideoFrame.from_ndarray(planes, format="yuv420p")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def read_index(rgb: object) -> int:
    """The frame index coded in a decoded picture's top half (an HxWx3 uint8 array)."""
    import numpy as np

    arr = np.asarray(rgb)
    row = arr[HEIGHT // 4, :, 0].astype(int)
    return sum(1 << b for b in range(BITS) if row[b * BLOCK + BLOCK // 2] > 128)


def child(library: str, path: str) -> dict[str, object]:
    """Sample `FRAMES` frames of `path` with `library`; the figures as a dict."""
    import numpy as np

    t0 = time.perf_counter()
    if library == "pyav":
        from lmmprobe.schema._video_decode import open_video
        from lmmprobe.schema.image import max_image_pixels
        from lmmprobe.schema.video import FramePolicy

        policy = FramePolicy(kind="frames", frames=FRAMES)
        with open_video(path, max_image_pixels()) as video:
            wanted = policy.times(0.0, video.duration)
            got = [read_index(np.asarray(video.frame_at(t)[1])) for t in wanted]
    else:
        from torchcodec.decoders import VideoDecoder

        decoder = VideoDecoder(path, seek_mode="exact")
        duration = decoder.metadata.duration_seconds
        wanted = [(i + 0.5) * duration / FRAMES for i in range(FRAMES)]
        batch = decoder.get_frames_played_at(wanted)
        got = [read_index(frame.permute(1, 2, 0).numpy()) for frame in batch.data]
    seconds = time.perf_counter() - t0
    exact = sum(g == math.floor(t * FPS + 1e-9) for g, t in zip(got, wanted, strict=True))
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "peak_mib": peak_kib / 1024, "exact": exact}


def measure(library: str, path: Path) -> dict[str, object]:
    """`child` run in a fresh process (so its peak memory is its own), or why it failed."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", library, str(path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        # The exception lines of the traceback (a chained cause first): the first says why.
        lines = [line for line in proc.stderr.splitlines() if line and not line[0].isspace()]
        errors = [line for line in lines if "Error" in line.partition(":")[0]]
        return {"error": " <- ".join(errors[:2]) or f"exit {proc.returncode}"}
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def install_mib(distribution: str) -> float | None:
    """Size on disk of an installed distribution's files (its bundled libraries included)."""
    try:
        files = metadata.files(distribution) or []
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return None
    paths = {Path(str(dist.locate_file(f))).resolve() for f in files}
    # Wheels repaired by auditwheel keep their shared libraries in <name>.libs (listed or not).
    root = Path(str(dist.locate_file("")))
    for libs in root.glob(f"{distribution}.libs"):
        paths.update(p.resolve() for p in libs.rglob("*"))
    return sum(p.stat().st_size for p in paths if p.is_file()) / 2**20


def main() -> None:
    """Generate the clips, measure each library on each, print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", default="1,10", help="clip lengths, comma-separated")
    parser.add_argument("--workdir", default=None, help="where clips are kept (reused)")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    work = Path(args.workdir or tempfile.mkdtemp(prefix="lmmprobe-video-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    lengths = [float(m) for m in args.minutes.split(",")]
    rows = []
    figures: dict[str, str] = {}
    for minutes in lengths:
        clip = work / f"clip_{minutes:g}min_720p.mp4"
        if not clip.exists():
            t0 = time.perf_counter()
            generate(clip, minutes)
            print(f"generated {clip} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        for library in ("pyav", "torchcodec"):
            r = measure(library, clip)
            rows.append((library, minutes, r))
            tag = f"{library}_{minutes:g}min"
            if "error" in r:
                figures[f"{tag}_ok"] = "0"
                continue
            figures[f"{tag}_frames_per_s"] = f"{FRAMES / float(str(r['seconds'])):.1f}"
            figures[f"{tag}_peak_mib"] = f"{float(str(r['peak_mib'])):.0f}"
            figures[f"{tag}_exact"] = f"{r['exact']}/{FRAMES}"
    print(f"{'library':<11} {'clip':>6} {'s/32 frames':>12} {'frames/s':>9} {'peak MiB':>9} "
          f"{'exact':>6}")  # fmt: skip
    for library, minutes, r in rows:
        if "error" in r:
            print(f"{library:<11} {minutes:>4g}m  unavailable: {r['error']}")
            continue
        s = float(str(r["seconds"]))
        print(
            f"{library:<11} {minutes:>4g}m {s:>12.2f} {FRAMES / s:>9.1f} "
            f"{float(str(r['peak_mib'])):>9.0f} {str(r['exact']) + '/' + str(FRAMES):>6}"
        )
    for dist, name in (("av", "pyav"), ("torchcodec", "torchcodec")):
        size = install_mib(dist)
        shown = "not installed" if size is None else f"{size:.0f} MiB"
        print(f"install size {name}: {shown}")
        if size is not None:
            figures[f"{name}_install_mib"] = f"{size:.0f}"
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
