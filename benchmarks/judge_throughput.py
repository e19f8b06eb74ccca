"""Judge throughput through the API client, and the judge calls rule-first saves.

1. Throughput: a run's answers (all unreadable by rules, so each one goes to the judge) are
   judged by a fake judge (the loopback OpenAI server, in a subprocess, answering every judge
   prompt after 100 ms) at concurrency 1 and 64, through the judging step
   (`lmmprobe.judge.step.judge_run`: the runner's `answer_requests`, the local executor, the
   store). Each level uses a judge of another name, so nothing comes from the store.
2. Rule first vs always: on a MathVista-shaped set (multiple-choice questions where most
   answers name their option and the rules read them, the rest answer in words), the judge
   calls of ``--judge-when miss`` and ``--judge-when always``.

Usage: python benchmarks/judge_throughput.py [--requests 640] [--sequential 50]
       [--latency 0.1] [--concurrency 64] [--readable 0.7]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmmprobe import RunSpec
from lmmprobe.api import evaluate
from lmmprobe.judge.step import judge_run
from lmmprobe.schema import JudgeConfig
from lmmprobe.store import Store

CHOICE_ASK = "Say which option the answer chose"

SERVER = """
import json, sys
from lmmprobe.testing import FakeOpenAIServer
table = [tuple(p) for p in json.loads(sys.argv[1])]
with FakeOpenAIServer(reply_table=table) as s:
    print(s.base_url, flush=True)
    sys.stdin.read()
"""


def _rows(path: Path, n: int, readable: float, tag: str) -> list[tuple[str, str]]:
    """n choice rows; the first `readable` share answered with a mark, the rest in words."""
    lines, replies = [], []
    cut = round(n * readable)
    for i in range(n):
        q = f"{tag}: which shape is item {i}?"
        lines.append({"id": f"q{i}", "images": [], "question": q,
                      "choices": ["circle", "square", "star", "heart"], "answer": i % 4})  # fmt: skip
        replies.append((q, f"({'ABCD'[i % 3]})" if i < cut else f"I cannot say for item {i}"))
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return replies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=640, help="judge calls at --concurrency")
    ap.add_argument("--sequential", type=int, default=50, help="judge calls at concurrency 1")
    ap.add_argument("--latency", type=float, default=0.1, help="judge reply latency (s)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--readable", type=float, default=0.7, help="share rules read (part 2)")
    ap.add_argument("--set-size", type=int, default=200, help="rows of the MathVista-shaped set")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # Every model reply is written down before the server starts (the table is fixed).
        unread = _rows(tmp / "unread.jsonl", args.requests, 0.0, "unread")
        shaped = _rows(tmp / "shaped.jsonl", args.set_size, args.readable, "shaped")
        table = [(CHOICE_ASK, f"!slow={args.latency}:A"), *unread, *shaped]
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, json.dumps(table)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        try:
            rows, saved = _measure(tmp, url, args)
        finally:
            server.communicate("", timeout=30)
    print(f"judge latency {args.latency * 1000:.0f} ms")
    print(f"{'concurrency':>11} {'calls':>6} {'calls/s':>8} {'speedup':>8} {'seconds':>8}")
    base = rows[0][2]
    for level, calls, rate, wall in rows:
        print(f"{level:>11} {calls:>6} {rate:>8.1f} {rate / base:>8.1f} {wall:>8.1f}")
    always, miss = saved
    print(f"MathVista-shaped set, {args.set_size} answers, {args.readable:.0%} read by rules:")
    print(f"{'judge-when':>11} {'calls':>6}")
    print(f"{'always':>11} {always:>6}\n{'miss':>11} {miss:>6}")
    print(
        f"judge_speedup_at_{args.concurrency}={rows[-1][2] / base:.1f} "
        f"judge_calls_always={always} judge_calls_miss={miss} "
        f"judge_calls_saved={always - miss} judge_calls_saved_share={(always - miss) / always:.2f}"
    )


def _measure(
    tmp: Path, url: str, args: argparse.Namespace
) -> tuple[list[tuple[int, int, float, float]], tuple[int, int]]:
    model = f"openai:fake-vlm@{url},max_concurrency=64"
    db = tmp / "store.db"
    rows = []
    base = evaluate(RunSpec(models=[model], data=str(tmp / "unread.jsonl"), db=str(db),
                            out=str(tmp / "o1"), bootstrap=0))  # fmt: skip
    for level, n in ((1, args.sequential), (args.concurrency, args.requests)):
        outcome = base.outcome
        mo = outcome.models[0]
        kept = mo.scores[:n]
        outcome.models[0] = type(mo)(spec=mo.spec, identity=mo.identity, scores=kept)
        judge = f"openai:judge-c{level}@{url},max_concurrency={level}"
        with Store(db) as store:
            wall0 = time.perf_counter()
            got = judge_run(outcome, JudgeConfig(judges=[judge]), store)
            wall = time.perf_counter() - wall0
        calls = got.models[mo.spec].calls[judge]
        assert calls.errors == 0 and calls.called == n, (calls.errors, calls.called)
        rows.append((level, n, n / wall, wall))
        outcome.models[0] = mo
    shaped = evaluate(RunSpec(models=[model], data=str(tmp / "shaped.jsonl"), db=str(db),
                              out=str(tmp / "o2"), bootstrap=0))  # fmt: skip
    counts = []
    for when in ("always", "miss"):
        judge = f"openai:judge-{when}@{url},max_concurrency={args.concurrency}"
        with Store(db) as store:
            got = judge_run(shaped.outcome, JudgeConfig(judges=[judge], when=when), store)
        counts.append(got.models[shaped.outcome.models[0].spec].calls[judge].called)
    return rows, (counts[0], counts[1])


if __name__ == "__main__":
    main()
