"""What checking an ``hf:`` folder's zip archive costs, beside `datasets` reading it: two sizes.

`datasets` unpacks a zip it finds among a dataset's files and converts what it holds. Before it
does, lmmprobe's check (`lmmprobe.data.hf_dataset.check_data_files`) unpacks the archive into a
temporary folder under a size budget (`lmmprobe.data.files.unpack_zips`: the stated sizes
first, then each member stopped at its stated size) and checks what came out as the folder's
own files (here a JSON Lines table: `check_json`'s record and nesting bounds); then `datasets`
unpacks it again into its cache. So the archive is decompressed twice. This prints, for a zip
holding one JSON Lines file of N MiB (a question, an answer, an image name a row, as a dataset
holds them) at two sizes, each step in a fresh process with its libraries imported first:

- ``unpack``: the check's unpacking alone (decompress and write to the temporary folder);
- ``check``: the whole check (unpack, then the JSON scan of what came out);
- ``stream``: the alternative weighed against it (not what lmmprobe does): the member checked
  straight from the archive, decompressed as it is read, nothing written (`check_json` on
  ``ZipFile.open``);
- ``datasets``: `datasets.load_dataset` of the folder into an empty cache (what the run does
  after the check: its own unpacking and the Arrow conversion).

Wall and CPU time, and peak RSS (``ru_maxrss``, the libraries included; ``base`` is the peak
after the imports alone). Tests never assert on these.

Usage: python benchmarks/zip_check.py [--sizes 10,50]
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
import zipfile
from pathlib import Path


def _write(folder: Path, mib: int) -> None:
    rng = random.Random(0)
    lines, size, i = [], 0, 0
    while size < mib << 20:
        pad = "x" * rng.randrange(50, 150)
        row = {"id": f"q{i}", "question": f"What is item {rng.randrange(10**9)} about? {pad}",
               "answer": rng.choice("abcd"), "image": "x.png"}  # fmt: skip
        line = json.dumps(row) + "\n"
        lines.append(line)
        size += len(line)
        i += 1
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "test.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("test.jsonl", "".join(lines))


def _child(mode: str, folder: Path) -> None:
    import datasets

    from lmmprobe.data.files import check_json, unpack_zips
    from lmmprobe.data.hf_dataset import _data_files, check_data_files

    datasets.disable_progress_bars()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "unpack":
            unpack_zips([folder / "test.zip"], Path(tmp), what="a dataset")
        elif mode == "check":
            check_data_files(_data_files(folder))
        elif mode == "stream":
            with zipfile.ZipFile(folder / "test.zip") as archive, archive.open("test.jsonl") as fh:
                check_json(folder / "test.zip" / "test.jsonl", fh)
        else:
            datasets.load_dataset(str(folder), cache_dir=tmp)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "rss": rss, "base": base}))


def main() -> None:
    """Print the figures; the last line is ``name=value`` pairs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50", help="MiB of JSON Lines in the zip")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], Path(args.child[1]))
        return
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        for mib in (int(s) for s in args.sizes.split(",")):
            folder = Path(tmp) / f"z{mib}"
            _write(folder, mib)
            packed = (folder / "test.zip").stat().st_size
            print(f"{mib} MiB of JSON Lines in a {packed / 2**20:.1f} MiB zip:")
            for mode in ("unpack", "check", "stream", "datasets"):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", mode, str(folder)],
                    capture_output=True, text=True, check=True,
                ).stdout  # fmt: skip
                got = json.loads(out.strip().splitlines()[-1])
                print(f"  {mode:9} wall {got['wall']:6.2f} s  cpu {got['cpu']:6.2f} s  "
                      f"peak RSS {got['rss']:5.0f} MiB (after imports {got['base']:.0f})")  # fmt: skip
                pairs += [f"{mode}_cpu_{mib}mib={got['cpu']:.2f}",
                          f"{mode}_rss_{mib}mib={got['rss']:.0f}"]  # fmt: skip
    print(" ".join(pairs))


if __name__ == "__main__":
    main()
