"""Arena load: concurrent raters drawing battles and voting against a real server on loopback.

A demo run of four baselines (``--samples`` samples, six pairs each) is stored in a fresh
store; ``lmmprobe.serve``'s app runs under uvicorn in its own process on 127.0.0.1; each rater
is an ``httpx.AsyncClient`` with its own cookie jar (its own session and CSRF token) that sets
a name, then draws a battle and votes on it, again and again, until the time is up. A vote
counts as acknowledged when the server answered 200 (the reveal). After the server stops, the
store is opened again and its votes counted: every acknowledged vote must be there.

Before the raters start, one rater's first draw is timed on its own (the arena reads the runs'
models then). ``--store PATH`` loads a copy of an existing store instead of a demo one (the file
and its search sidecar are copied; PATH itself is never written), e.g. the 1,000,000-response
store ``benchmarks/serve_pages.py`` builds, to time draws where a store offers millions of
battles.

Usage: python benchmarks/arena_load.py [--raters 50] [--seconds 30] [--samples 200] [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from lmmprobe.api import evaluate
from lmmprobe.store import Store
from lmmprobe.store.battles import count_votes
from lmmprobe.store.search import sidecar_path

MODELS = ["random", "first", "random,seed=3", "random,seed=7"]
VOTES = ("a", "b", "tie", "both_bad")

_SERVER = """
import sys, uvicorn
from lmmprobe.serve.app import create_app
uvicorn.run(create_app(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]),
            log_level="warning", access_log=False)
"""


@dataclass
class Rater:
    name: str
    acked: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    vote_ms: list[float] = field(default_factory=list)
    draw_ms: list[float] = field(default_factory=list)
    exhausted: bool = False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _ServerExited(Exception):
    pass


def _wait_up(base: str, proc: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise _ServerExited(proc.returncode)
        try:
            if httpx.get(base + "/arena/api/session", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"the server did not answer on {base} within {seconds:g} s")


async def _rate(base: str, rater: Rater, deadline: float, seed: int) -> None:
    votes = itertools.cycle(VOTES[seed % 4 :] + VOTES[: seed % 4])
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        token = (await client.get("/arena/api/session")).json()["csrf_token"]
        headers = {"X-CSRF-Token": token}
        (
            await client.post("/arena/api/rater", json={"name": rater.name}, headers=headers)
        ).raise_for_status()
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            r = await client.get("/arena/api/battle")
            rater.draw_ms.append((time.perf_counter() - t0) * 1000)
            if r.status_code == 204:
                rater.exhausted = True
                return
            r.raise_for_status()
            battle = r.json()["battle"]
            t0 = time.perf_counter()
            v = await client.post(
                "/arena/api/vote", json={"battle": battle, "vote": next(votes)}, headers=headers
            )
            rater.vote_ms.append((time.perf_counter() - t0) * 1000)
            if v.status_code == 200:
                rater.acked += 1
            else:
                rater.refused[v.status_code] = rater.refused.get(v.status_code, 0) + 1


async def _load(base: str, raters: list[Rater], seconds: float) -> float:
    start = time.monotonic()
    await asyncio.gather(*(_rate(base, r, start + seconds, i) for i, r in enumerate(raters)))
    return time.monotonic() - start


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


SOLO_DRAWS = 40
"""Draws (each followed by its vote) of one rater alone on the server, before the crowd."""


def _solo_draws_ms(base: str) -> tuple[list[float], int]:
    """One rater alone on the server: the times of its draws (the first is the server's first)
    and its votes acknowledged."""
    times: list[float] = []
    acked = 0
    with httpx.Client(base_url=base, timeout=120) as client:
        token = client.get("/arena/api/session").json()["csrf_token"]
        headers = {"X-CSRF-Token": token}
        client.post("/arena/api/rater", json={"name": "solo"}, headers=headers).raise_for_status()
        for _ in range(SOLO_DRAWS):
            t0 = time.perf_counter()
            r = client.get("/arena/api/battle")
            times.append((time.perf_counter() - t0) * 1000)
            if r.status_code == 204:
                break
            r.raise_for_status()
            client.post(
                "/arena/api/vote",
                json={"battle": r.json()["battle"], "vote": "tie"},
                headers=headers,
            ).raise_for_status()
            acked += 1
    return times, acked


def _copy_store(source: Path, folder: Path) -> Path:
    """A private copy of `source` (and its search sidecar): the benchmark votes into it."""
    db = folder / "arena.db"
    shutil.copyfile(source, db)
    wal = source.with_name(source.name + "-wal")
    if wal.is_file() and wal.stat().st_size:  # commits not yet in the file itself
        shutil.copyfile(wal, db.with_name(db.name + "-wal"))
    if sidecar_path(source).is_file():
        shutil.copyfile(sidecar_path(source), sidecar_path(db))
    return db


def run(
    raters: int, seconds: float, samples: int, folder: Path, store: Path | None = None
) -> dict[str, float]:
    """Fill a store (or copy `store`), serve it, load it; return the figures."""
    if store is None:
        db = folder / "arena.db"
        evaluate(models=MODELS, limit=samples, db=str(db), out=str(folder / "out"))
    else:
        db = _copy_store(store, folder)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for attempt in range(3):
        # A free port can be taken by another process before the server binds it: try again.
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen([sys.executable, "-c", _SERVER, str(db), str(port)], env=env)
        try:
            _wait_up(base, proc)
            break
        except _ServerExited:
            if attempt == 2:
                raise SystemExit("the server exited three times before answering") from None
    try:
        solo, solo_acked = _solo_draws_ms(base)
        people = [Rater(f"rater-{i:02d}") for i in range(raters)]
        elapsed = asyncio.run(_load(base, people, seconds))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with Store(db) as store:
        stored = count_votes(store)
    vote_ms = [x for r in people for x in r.vote_ms]
    draw_ms = [x for r in people for x in r.draw_ms]
    refused: dict[int, int] = {}
    for r in people:
        for code, n in r.refused.items():
            refused[code] = refused.get(code, 0) + n
    acked = sum(r.acked for r in people) + solo_acked
    return {
        "raters": raters,
        "seconds": seconds,
        "elapsed": elapsed,
        "acked": acked,
        "stored": stored,
        "refused": sum(refused.values()),
        "exhausted": sum(r.exhausted for r in people),
        "p50_vote": _pct(vote_ms, 50),
        "p95_vote": _pct(vote_ms, 95),
        "p50_draw": _pct(draw_ms, 50),
        "p95_draw": _pct(draw_ms, 95),
        "first_draw": solo[0],
        "p95_solo_draw": _pct(solo[1:], 95),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raters", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--samples", type=int, default=200, help="demo samples (x 6 pairs = battles)")
    ap.add_argument("--store", type=Path, help="load a copy of this store instead of a demo")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-load-") as tmp:
        f = run(args.raters, args.seconds, args.samples, Path(tmp), args.store)
    rows = [
        ("raters", f"{f['raters']}"),
        ("seconds (asked / ran)", f"{f['seconds']:g} / {f['elapsed']:.1f}"),
        ("store", str(args.store) + " (a copy)" if args.store else f"demo, {args.samples} samples"),
        ("votes acknowledged (200)", f"{f['acked']}"),
        ("votes stored", f"{f['stored']}"),
        ("votes refused (non-200)", f"{f['refused']}"),
        ("raters who saw every battle", f"{f['exhausted']}"),
        ("votes per second", f"{f['acked'] / f['elapsed']:.1f}"),
        ("vote latency p50 / p95 (ms)", f"{f['p50_vote']:.1f} / {f['p95_vote']:.1f}"),
        ("one rater alone: first draw (ms)", f"{f['first_draw']:.1f}"),
        (f"one rater alone: p95 of {SOLO_DRAWS - 1} more draws (ms)", f"{f['p95_solo_draw']:.1f}"),
        ("all raters at once: draw p50 / p95 (ms)", f"{f['p50_draw']:.1f} / {f['p95_draw']:.1f}"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print(
        f"raters={f['raters']} seconds={f['seconds']:g} votes_acked={f['acked']} "
        f"votes_stored={f['stored']} p50_vote_ms={f['p50_vote']:.1f} p95_vote_ms={f['p95_vote']:.1f} "
        f"first_draw_ms={f['first_draw']:.1f} p95_solo_draw_ms={f['p95_solo_draw']:.1f} "
        f"p95_draw_ms={f['p95_draw']:.1f}"
    )
    if f["stored"] != f["acked"]:
        raise SystemExit(f"votes stored ({f['stored']}) != votes acknowledged ({f['acked']})")


if __name__ == "__main__":
    main()
