"""What drawing HEMM's VCR boxes and outlines costs per row: rows sharing an image, a hostile row.

``hemm-vcr`` draws each row's boxes, object names and segment outlines on its image with
OpenCV and encodes it as PNG, as HEMM's loader draws them. VCR asks several questions about
one image, in consecutive rows naming the same image, metadata and objects; re-test 7 (#11)
found each row drawing afresh. This prints, for N rows of one 1920×1080 photo-like image with
20 boxed objects and their outlines (200 points each, as VCR's metadata holds them), at two
sizes, each in a fresh process: the drawing done once per row (``old``: `_vcr_image` and the
PNG encoding for every row, what each row did before) beside the drawing shared by
consecutive rows (``new``: `_drawn_image`); then the cost of refusing re-test 7's hostile row
(99,999 random outline points on a 6000×6000 image, 44 s and 600 MB a row before the drawing
bound; run it with PYTHONPATH at the older tree for the older figure). Wall and CPU time
(libraries imported first) and peak RSS (``ru_maxrss``, the libraries included). Tests never
assert on these.

Usage: python benchmarks/vcr_drawing.py [--sizes 5,20]
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

_OBJECTS = 20
_POINTS = 200


def _write_real(folder: Path) -> tuple[Path, Path, list[str]]:
    """A 1920×1080 noisy image and metadata of 20 boxes and 200-point outlines."""
    import numpy as np
    from PIL import Image

    rng = random.Random(0)
    width, height = 1920, 1080
    pixels = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    image = folder / "frame.jpg"
    Image.fromarray(pixels).save(image, "JPEG")
    boxes, segms = [], []
    for _ in range(_OBJECTS):
        x1, y1 = rng.uniform(0, width - 300), rng.uniform(0, height - 300)
        x2, y2 = x1 + rng.uniform(50, 300), y1 + rng.uniform(50, 300)
        boxes.append([x1, y1, x2, y2, 0.9])
        segms.append([[[rng.uniform(x1, x2), rng.uniform(y1, y2)] for _ in range(_POINTS)]])
    meta = folder / "frame.json"
    meta.write_text(json.dumps({"boxes": boxes, "segms": segms}))
    return image, meta, ["person"] * _OBJECTS


def _write_hostile(folder: Path) -> tuple[Path, Path, list[str]]:
    """Re-test 7's row: 99,999 random outline points on a blank 6000×6000 image."""
    from PIL import Image

    rng = random.Random(1)
    side = 6000
    image = folder / "big.png"
    Image.new("RGB", (side, side), "white").save(image)
    points = [[rng.randrange(side), rng.randrange(side)] for _ in range(99_999)]
    meta = folder / "big.json"
    meta.write_text(json.dumps({"boxes": [], "segms": [[points]]}))
    return image, meta, ["person"]


def _child(mode: str, rows: int) -> None:
    import cv2  # noqa: F401  (imported before timing, as the loader has it)
    import numpy as np  # noqa: F401

    from lmmprobe.data.benchmarks.base import RowError
    from lmmprobe.data.benchmarks.hemm.vcr import _drawn_image, _vcr_image
    from lmmprobe.data.benchmarks.hemm_common import png_image

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        image, meta, objects = (_write_hostile if mode == "hostile" else _write_real)(folder)
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = "ok"
        for _ in range(rows):
            try:
                if mode == "old":
                    png_image(_vcr_image(image, meta, objects))
                else:
                    _drawn_image(image, meta, objects)
            except RowError:
                outcome = "refused"
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "outcome": outcome}))


def _run(mode: str, rows: int) -> dict[str, float | str]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(rows)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float | str] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5,20", help="rows of one image, comma-separated")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'rows':>5}  {'old s':>7} {'old cpu':>8} {'old MB':>7}  "
          f"{'new s':>7} {'new cpu':>8} {'new MB':>7}")  # fmt: skip
    figures: dict[str, str] = {}
    for rows in sizes:
        old, new = _run("old", rows), _run("new", rows)
        print(f"{rows:>5}  {old['wall']:>7.2f} {old['cpu']:>8.2f} {old['rss']:>7.0f}  "
              f"{new['wall']:>7.2f} {new['cpu']:>8.2f} {new['rss']:>7.0f}")  # fmt: skip
        figures[f"old_s_{rows}"] = f"{old['wall']:.2f}"
        figures[f"new_s_{rows}"] = f"{new['wall']:.2f}"
        figures[f"old_mb_{rows}"] = f"{old['rss']:.0f}"
        figures[f"new_mb_{rows}"] = f"{new['rss']:.0f}"
    hostile = _run("hostile", 1)
    print(f"hostile row (re-test 7 #11): {hostile['outcome']} in {hostile['wall']:.2f} s, "
          f"{hostile['rss']:.0f} MB")  # fmt: skip
    figures["hostile_s"] = f"{hostile['wall']:.2f}"
    figures["hostile_mb"] = f"{hostile['rss']:.0f}"
    figures["hostile"] = str(hostile["outcome"])
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
