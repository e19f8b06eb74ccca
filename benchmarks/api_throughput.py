"""Throughput of the openai: backend against a loopback server with fixed latency.

The fake server (lmmprobe.testing) runs in a subprocess so the CPU time measured here is
lmmprobe's own client side: formulating, encoding the image, the openai client, the store.
Each concurrency level runs the same requests into a fresh store.

Usage: python benchmarks/api_throughput.py [--requests 1000] [--latency 0.1] [--levels 1,16,64]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmmprobe import RunSpec
from lmmprobe.data import load_source
from lmmprobe.models import load_model
from lmmprobe.run import run_model
from lmmprobe.store import Store

SERVER = """
import sys
from lmmprobe.testing import FakeOpenAIServer
with FakeOpenAIServer(latency=float(sys.argv[1])) as s:
    print(s.base_url, flush=True)
    sys.stdin.read()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--levels", default="1,16,64")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    samples = load_source(f"demo,n={args.requests}").samples
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for level in levels:
                spec = f"openai:fake-vlm@{base_url},max_concurrency={level}"
                model = load_model(spec)
                with Store(Path(tmp) / f"c{level}.db") as store:
                    wall0, cpu0 = time.perf_counter(), time.process_time()
                    out = run_model(spec, model, samples, RunSpec(models=[spec]), store)
                    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
                assert out.errors == 0, f"{out.errors} errors at concurrency {level}"
                rows.append((level, out.called / wall, 1000 * cpu / out.called, wall))
    finally:
        server.communicate("", timeout=30)
    base = rows[0][1]
    print(f"{args.requests} requests, server latency {args.latency * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'req/s':>8} {'speedup':>8} {'cpu ms/req':>10} {'seconds':>8}")
    for level, rps, cpu_ms, wall in rows:
        print(f"{level:>11} {rps:>8.1f} {rps / base:>8.1f} {cpu_ms:>10.2f} {wall:>8.1f}")
    speed = {level: rps / base for level, rps, _, _ in rows}
    cpu_all = sum(r[2] for r in rows) / len(rows)
    print(
        " ".join(f"speedup_at_{lv}={speed[lv]:.1f}" for lv in levels if lv != levels[0])
        + f" cpu_ms_per_request={cpu_all:.2f}"
    )


if __name__ == "__main__":
    main()
