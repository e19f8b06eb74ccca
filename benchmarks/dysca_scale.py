"""Dysca's released set at its real size: ``--data dysca`` end to end at two sizes, peak RSS.

Dysca's release (Zhang et al., ICLR 2025) is 617,000 questions in one JSON list,
``Dysca.json`` (about 830 bytes an entry: 510 MB), beside one image folder per scenario. This
writes a copy in that layout: the 136 entries of the test fixture (real output of Dysca's
own generator, every subtask and question type) repeated with fresh ids, four questions to an
image, each image an 8x8 PNG of its own colour in ``Dysca/`` (the clean scenario). Then it runs
``lmmprobe run --model first --data dysca,path=COPY,split=clean --by subtask`` at each size,
each in a fresh process (`run_scale.run_once`), for this checkout and, at ``--old-sizes``, the
checkout under ``--old-src``: wall time, CPU time per question, peak RSS, and whether the two
checkouts' figures are identical.

Before, the question list was decoded whole (``read_json_file``: every entry a dict, kept
for the whole load, and read once per scenario); it is now read an entry at a time
(`lmmprobe.data.json_stream.iter_json`), so the load holds one chunk of samples as every other
source does. The issue's bound: peak RSS at 617k within 1.3x of 100k, and under 500 MiB.

Usage: python benchmarks/dysca_scale.py [--sizes 100000 617000] [--old-sizes 100000]
       [--old-src OLD/src]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_scale import NEW_SRC, run_once

FIXTURE = Path(__file__).resolve().parents[1] / "tests/data/benchmarks/fixtures/dysca/Dysca.json"
PER_IMAGE = 4


def write_copy(root: Path, n: int) -> None:
    """A Dysca-shaped copy of `n` questions: ``Dysca.json`` streamed out, ``Dysca/`` images."""
    base: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    # Entries with an empty question are the generator's own (rejected rows): leave them out
    # so that every question of the copy is asked.
    base = [e for e in base if e["question"].strip() and e["answer"].strip()]
    images = root / "Dysca"
    images.mkdir(parents=True)
    with (root / "Dysca.json").open("w", encoding="utf-8") as f:
        f.write("[")
        for i in range(n):
            entry = {**base[i % len(base)], "id": i, "images": [f"images/{i // PER_IMAGE}.png"]}
            f.write(("," if i else "") + json.dumps(entry))
        f.write("]")
    for k in range((n + PER_IMAGE - 1) // PER_IMAGE):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8), (k % 251, (k // 251) % 251, (k // 63001) % 251)).save(buf, "PNG")
        (images / f"{k}.png").write_bytes(buf.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 617_000])
    parser.add_argument("--old-sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--old-src", type=Path, default=None)
    args = parser.parse_args()
    print(f"new: {NEW_SRC}  old: {args.old_src or '-'}  (peak RSS of the `lmmprobe run` process)")
    print(f"{'questions':>9} {'side':>4} {'s':>8} {'cpu ms/q':>9} {'MiB':>6} identical")
    pairs: list[str] = []
    new: dict[int, tuple[float, float]] = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "dysca"
            write_copy(root, n)
            spec = f"dysca,path={root},split=clean"
            sides = [("new", NEW_SRC)]
            if args.old_src is not None and n in args.old_sizes:
                sides.append(("old", args.old_src))
            figures: dict[str, Any] = {}
            for name, src in sides:
                work = Path(tmp) / name
                work.mkdir()
                seconds, cpu, mib, models = run_once(src, spec, work)
                figures[name] = models
                same = "-" if name == "new" else str(models == figures["new"])
                ms = 1000 * cpu / n
                print(f"{n:>9} {name:>4} {seconds:>8.1f} {ms:>9.3f} {mib:>6.0f} {same}")
                k = f"{n // 1000}k"
                pairs += [f"{name}_mib_{k}={mib:.0f}", f"{name}_cpu_ms_per_q_{k}={ms:.3f}"]
                if name == "new":
                    new[n] = (ms, mib)
                else:
                    pairs.append(f"identical_{k}={same}")
    if len(new) > 1:
        (t0, m0), (t1, m1) = new[min(new)], new[max(new)]
        pairs += [f"new_mib_ratio={m1 / m0:.2f}", f"new_cpu_ms_per_q_ratio={t1 / t0:.2f}"]
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
