"""Ray executor throughput: a 50 ms-per-batch model, local executor vs 1, 2 and 4 replicas.

The model (`lmmprobe.testing.sleepy`) sleeps 50 ms per batch of 8 whatever it holds: its time is
waiting, not computing, as a GPU's or a remote server's is, so replicas can overlap it even on
a 2-core machine. Each configuration answers the same `--requests` demo requests into an empty
store, side by side in one run (one local Ray instance for all of them). Two windows are timed,
each the same for every executor: *answering* is the executor's own call, from the first batch
sent to the last stored (`stats["run_s"]` of `LocalExecutor` and `RayExecutor`; for Ray it
starts once every replica has built its model), and *end to end* is the whole `run_model`
(planning, store look-ups, scoring, and for Ray starting the replicas: `replica_start_s`, new
worker processes importing lmmprobe, a fixed cost of a few seconds here). `speedup_K` compares
the answering rates; the targets are >= 1.8x at 2 replicas and >= 3.2x at 4.

The driver's ceiling: `driver_commits_per_s` is how many responses per second the store commits
when they arrive as batches of 8 (one transaction each, as the runner stores them), measured on
the driver alone (median of five rounds, with their range); `instant_4_rps` is a whole Ray run of an instant
model (no sleep) on 4 replicas, where the driver (sending, receiving, storing) is the bottleneck
(on a 2-core machine the 4 replica processes share the driver's cores, so this is a floor).

Usage: python benchmarks/distributed.py [--requests 2000] [--delay 0.05] [--batch 8]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import ray

import lmmprobe.testing.sleepy  # noqa: F401  (registers the sleepy model)
from lmmprobe.data import load_source
from lmmprobe.models import load_model
from lmmprobe.run import LocalExecutor, plan_requests, run_model
from lmmprobe.run.ray_executor import RayExecutor
from lmmprobe.schema import Response, RunSpec
from lmmprobe.store import Store

TARGET_2, TARGET_4 = 1.8, 3.2


def _run(
    spec_str: str, n: int, db: Path, executor: LocalExecutor | RayExecutor
) -> tuple[float, float]:
    """(end-to-end seconds, answering seconds) of one model's requests into an empty store."""
    spec = RunSpec(models=[spec_str], data=f"demo,n={n}", db=str(db), bootstrap=0)
    samples = load_source(spec.data).samples
    model = load_model(spec_str)
    with Store(db) as store:
        t0 = time.perf_counter()
        out = run_model(spec_str, model, samples, spec, store, executor=executor)
        total = time.perf_counter() - t0
    # (demo rows can repeat a question: `called` counts the distinct requests actually sent)
    assert out.called == out.requests and out.errors == 0, (out.called, out.errors)
    return total, float(executor.stats["run_s"])


def _commit_rate(n: int, batch: int, db: Path) -> tuple[float, float, float]:
    """Responses/s the store commits, one transaction per batch of `batch`, as they arrive.

    (lowest, median, highest) of five rounds into fresh stores: the machine is shared, and
    one round varies by several times.
    """
    rounds = [_commit_round(n, batch, db.with_suffix(f".{i}.db")) for i in range(5)]
    return min(rounds), statistics.median(rounds), max(rounds)


def _commit_round(n: int, batch: int, db: Path) -> float:
    spec = RunSpec(models=["first"], data=f"demo,n={n}", db=str(db))
    model = load_model("first")
    requests = [
        a.to_request()
        for _, a in plan_requests(load_source(spec.data).samples, spec, model.identity)
    ]
    responses = [Response(key=r.key, text="(A)", latency_s=0.05) for r in requests]
    with Store(db) as store:
        t0 = time.perf_counter()
        for i in range(0, len(requests), batch):
            store.put_responses("first", requests[i : i + batch], responses[i : i + batch])
        return len(requests) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--delay", type=float, default=0.05, help="seconds per batch")
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    n = args.requests
    model = f"sleepy,delay={args.delay},batch={args.batch}"
    # Logical CPUs: the replicas sleep, so more of them than cores can run side by side.
    ray.init(num_cpus=8, include_dashboard=False, log_to_driver=False)
    rows: list[tuple[str, float, float]] = []
    starts: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(("local", *_run(model, n, Path(tmp) / "local.db", LocalExecutor())))
            for k in (1, 2, 4):
                ex = RayExecutor(replicas=k)
                rows.append((f"ray x{k}", *_run(model, n, Path(tmp) / f"ray{k}.db", ex)))
                starts.append(float(ex.stats["ready_s"]))
            # The driver's own ceiling: an instant model, so replicas answer as fast as the
            # driver can send, receive and store (4x the requests, for a longer measure).
            instant = {}
            for b in (args.batch, 64):
                ex = RayExecutor(replicas=4)
                _run(f"sleepy,delay=0,batch={b}", 4 * n, Path(tmp) / f"i{b}.db", ex)
                instant[b] = 4 * n / ex.stats["run_s"]
            commits = _commit_rate(n, args.batch, Path(tmp) / "commit8.db")
            commits64 = _commit_rate(n, 64, Path(tmp) / "commit64.db")
    finally:
        ray.shutdown()
    local_rps = n / rows[0][2]
    local_e2e_rps = n / rows[0][1]
    print(f"{n} requests, {model} ({n // args.batch} batches)")
    print(
        f"{'executor':<9} {'end-to-end s':>12} {'req/s':>7} {'speedup':>7} "
        f"{'answering s':>11} {'req/s':>7} {'speedup':>7}"
    )
    speed: dict[str, float] = {}
    for label, total, answering in rows:
        speed[label] = (n / answering) / local_rps
        whole = (n / total) / local_e2e_rps
        print(
            f"{label:<9} {total:>12.2f} {n / total:>7.0f} {whole:>6.2f}x "
            f"{answering:>11.2f} {n / answering:>7.0f} {speed[label]:>6.2f}x"
        )
    print(
        "replica start (until every replica built its model), s: x1, x2, x4 = "
        + ", ".join(f"{t:.2f}" for t in starts)
    )
    for size, (lo, mid, hi) in ((args.batch, commits), (64, commits64)):
        print(
            f"store commits, batches of {size}: {mid:,.0f} responses/s median of 5 rounds "
            f"(range {lo:,.0f}-{hi:,.0f})"
        )
    print(
        f"instant model on 4 replicas (driver-bound), {4 * n} requests: "
        f"{instant[args.batch]:,.0f} responses/s in batches of {args.batch}, "
        f"{instant[64]:,.0f} in batches of 64"
    )
    s2, s4 = speed["ray x2"], speed["ray x4"]
    e2e = {k: (n / rows[i][1]) / local_e2e_rps for i, k in ((2, 2), (3, 4))}
    print(
        f"speedup_2={s2:.2f} speedup_4={s4:.2f} driver_commits_per_s={commits[1]:.0f} "
        f"driver_commits_per_s_min={commits[0]:.0f} driver_commits_per_s_max={commits[2]:.0f} "
        f"driver_commits_per_s_batch64={commits64[1]:.0f} instant_4_rps={instant[args.batch]:.0f} "
        f"instant_4_rps_batch64={instant[64]:.0f} "
        f"local_rps={local_rps:.0f} speedup_2_end_to_end={e2e[2]:.2f} "
        f"speedup_4_end_to_end={e2e[4]:.2f} replica_start_s={max(starts):.2f}"
    )
    missed = [
        f"speedup at {k} replicas {s:.2f} < {t}"
        for k, s, t in ((2, s2, TARGET_2), (4, s4, TARGET_4))
        if s < t
    ]
    if missed:
        raise SystemExit("below target: " + "; ".join(missed))


if __name__ == "__main__":
    main()
