"""Throughput of the openai: backend against a loopback server with fixed latency.

The fake server (lmmprobe.testing) runs in a subprocess so the CPU time measured here is
lmmprobe's own client side: formulating, encoding the image, the openai client, the store.
Each concurrency level runs the same requests into a fresh store, once per HTTP transport of the
openai client (``transport=httpx``, and ``transport=aiohttp`` when aiohttp is installed:
``pip install 'openai[aiohttp]'``), the two interleaved level by level so that both see the same
machine. The speedup is a transport's requests per second over its own at the first level. The
server's CPU per request is shown where /proc tells it (Linux): on a 2-core machine the client
and the server share the cores, so it bounds the speedup too. The figures in the last line are
those of the transport lmmprobe uses by default (aiohttp when installed, else httpx), then, when
both ran, httpx's with an ``httpx_`` prefix; ``cpu_ms_per_request`` is the mean over the levels,
``cpu_ms_at_N`` the figure at the last level.

Usage: python benchmarks/api_throughput.py [--requests 1000] [--latency 0.1] [--levels 1,16,64]
[--transports httpx,aiohttp]

On a quiet machine (load average under 1 at the start, 2026-12-01; the same versions, from the
lock), ``PYTHONPATH=src python benchmarks/api_throughput.py``:

    transport concurrency    req/s  speedup cpu ms/req server ms  seconds
        httpx           1      9.6      1.0       3.07      1.41    104.2
        httpx          16    149.5     15.6       1.91      0.73      6.7
        httpx          64    446.7     46.6       1.79      0.60      2.2
      aiohttp           1      9.6      1.0       2.58      1.32    103.7
      aiohttp          16    148.7     15.4       1.39      0.63      6.7
      aiohttp          64    517.3     53.7       1.32      0.59      1.9
    transport=aiohttp speedup_at_16=15.4 speedup_at_64=53.7 cpu_ms_per_request=1.76
    cpu_ms_at_64=1.32 httpx_speedup_at_16=15.6 httpx_speedup_at_64=46.6
    httpx_cpu_ms_per_request=2.26 httpx_cpu_ms_at_64=1.79

Figures (2-core machine shared with other work, load average 9-10, 2026-11-30; openai 3.57.0,
aiohttp 3.14.5 in a scratch venv), ``python benchmarks/api_throughput.py``:

    transport concurrency    req/s  speedup cpu ms/req server ms  seconds
        httpx           1      9.0      1.0       3.23      1.28    110.4
        httpx          16    120.6     13.3       1.86      0.76      8.3
        httpx          64    219.8     24.3       1.68      0.66      4.5
      aiohttp           1      9.1      1.0       2.73      1.31    109.9
      aiohttp          16    122.6     13.5       1.67      0.65      8.1
      aiohttp          64    266.3     29.3       1.20      0.55      3.8
    transport=aiohttp speedup_at_16=13.5 speedup_at_64=29.3 cpu_ms_per_request=1.87
    cpu_ms_at_64=1.20 httpx_speedup_at_16=13.3 httpx_speedup_at_64=24.3
    httpx_cpu_ms_per_request=2.26 httpx_cpu_ms_at_64=1.68

Before (the same machine, load 6, httpx, every young collection at the default threshold):
3.26 / 2.45 / 2.26 ms a request at 1 / 16 / 64, 16.5x at 64. At 64 in flight, 3,000 requests,
four interleaved rounds (medians): httpx 2.15 ms, aiohttp 1.57, aiohttp with the collector off
1.30, with uvloop 1.67 (no gain: not used). Under this load the speedup is bounded by the
machine's share, not the client: at 1.2 ms a request one core serves ~830 requests a second,
more than the 640 that 64 in flight at 100 ms ask for.

Where the client's CPU goes at 64 in flight (py-spy, aiohttp transport, 3,000 requests): the
openai client's ``post`` 44% (building the request, its options model, headers and URL as httpx
objects, 16%; httpx's send and aiohttp 15%; the options model's defaults deep-copied 6%), the
demo's picture drawn and encoded as PNG 20% (a PNG or JPEG file within the pixel budget is sent
as it is), the runner and the store 11%, the kernel's loopback send 7%, the rest of the backend
(reading and checking the reply, the images' bounds) 6%. On the httpx transport, httpcore's pool
and h11 cost 35% alone (the pool scanned on each request, the headers and the body sent in two
writes); with the default GC threshold, collections over the run's objects cost another ~20%.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmmprobe import RunSpec
from lmmprobe.data import load_source
from lmmprobe.models import load_model
from lmmprobe.models.openai_api import aiohttp_installed
from lmmprobe.run import run_model
from lmmprobe.store import Store

SERVER = """
import sys
from lmmprobe.testing import FakeOpenAIServer
with FakeOpenAIServer(latency=float(sys.argv[1])) as s:
    print(s.base_url, flush=True)
    sys.stdin.read()
"""


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user and system) process `pid` has used, or None where /proc is not."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--levels", default="1,16,64")
    ap.add_argument("--transports", default="httpx,aiohttp" if aiohttp_installed() else "httpx")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    transports = args.transports.split(",")
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    samples = load_source(f"demo,n={args.requests}").samples
    # (transport, level) -> (requests per second, client CPU ms, server CPU ms, seconds)
    rows: dict[tuple[str, int], tuple[float, float, float | None, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for level in levels:
                for transport in transports:
                    spec = (
                        f"openai:fake-vlm@{base_url},max_concurrency={level},transport={transport}"
                    )
                    model = load_model(spec)
                    with Store(Path(tmp) / f"c{level}-{transport}.db") as store:
                        server0 = process_cpu_s(server.pid)
                        wall0, cpu0 = time.perf_counter(), time.process_time()
                        out = run_model(spec, model, samples, RunSpec(models=[spec]), store)
                        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
                        server1 = process_cpu_s(server.pid)
                    assert out.errors == 0, f"{out.errors} errors at {level} on {transport}"
                    server_ms = (
                        None
                        if server0 is None or server1 is None
                        else 1000 * (server1 - server0) / out.called
                    )
                    rows[transport, level] = (
                        out.called / wall, 1000 * cpu / out.called, server_ms, wall,
                    )  # fmt: skip
    finally:
        server.communicate("", timeout=30)
    print(f"{args.requests} requests, server latency {args.latency * 1000:.0f} ms")
    print(
        f"{'transport':>9} {'concurrency':>11} {'req/s':>8} {'speedup':>8} {'cpu ms/req':>10} "
        f"{'server ms':>9} {'seconds':>8}"
    )
    for transport in transports:
        base = rows[transport, levels[0]][0]
        for level in levels:
            rps, cpu_ms, server_ms, wall = rows[transport, level]
            shown = "-" if server_ms is None else f"{server_ms:.2f}"
            print(
                f"{transport:>9} {level:>11} {rps:>8.1f} {rps / base:>8.1f} {cpu_ms:>10.2f} "
                f"{shown:>9} {wall:>8.1f}"
            )
    default = "aiohttp" if "aiohttp" in transports and aiohttp_installed() else transports[0]
    figures = [f"transport={default}"]
    for transport, prefix in [(default, "")] + [(t, f"{t}_") for t in transports if t != default]:
        base = rows[transport, levels[0]][0]
        figures += [
            f"{prefix}speedup_at_{lv}={rows[transport, lv][0] / base:.1f}" for lv in levels[1:]
        ]
        cpu_all = sum(rows[transport, lv][1] for lv in levels) / len(levels)
        figures += [
            f"{prefix}cpu_ms_per_request={cpu_all:.2f}",
            f"{prefix}cpu_ms_at_{levels[-1]}={rows[transport, levels[-1]][1]:.2f}",
        ]
    print(" ".join(figures))


if __name__ == "__main__":
    main()
