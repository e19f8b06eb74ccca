"""Where the test suite's CPU goes, test by test, and which tests `make test` leaves out as slow.

Most of the suite's time is lmmprobe console scripts, servers and tiny models that tests start
as child processes, so a test's own duration says little about what it costs the machine. With
``LMMPROBE_TEST_CPU_LOG`` set, `tests/conftest.py` appends one line per test: its id, wall
seconds, the CPU seconds of the test process and of the children it waited for, and whether the
code marks it slow. This script runs the suite that way (every test but the GPU ones, slow ones
included, so the list can be re-measured), or reads such a log (``--from-log``), and prints:

- the costliest files and tests by CPU;
- one line of ``name=value`` figures: the tests, their CPU, and the share of it that the fast
  suite (``-m 'not slow'``) keeps.

``--write-slow`` rewrites ``tests/slow_tests.txt``: the costliest tests by CPU, taken in turn
until what is left of the suite costs at most ``--fast-share`` (0.36) of the CPU, never taking
the last fast test of a file (every test file keeps at least one test in `make test`, so each
area of the code is still exercised there). Tests the code itself marks slow are not listed.
0.36 because `make test` also type-checks (about a minute from a fresh clone): with 0.42 a fresh
clone's suite took 9.7 minutes and `make test` 10.7 on the quiet machine (2026-12-01).

``--extend`` reads a log of the fast suite alone (``make test``'s own run, with
``LMMPROBE_TEST_CPU_LOG`` set) and adds to the list, keeping what it holds: the costliest fast
tests, until the fast suite costs at most ``--fast-share`` of what it cost in that log. The
suite grows every week; this keeps `make test` within its time without measuring the slow
tests again.

Usage:
    python benchmarks/suite_cpu.py [--write-slow] [--fast-share 0.36] [--log FILE]
    python benchmarks/suite_cpu.py --from-log FILE [--write-slow]
    python benchmarks/suite_cpu.py --from-log FAST_LOG --extend --fast-share 0.6

Measured 2026-12-01 (issue 34, item 17) on the shared 2-core machine while four other
engineers worked beside it (load average about 5), so the CPU seconds are higher than a quiet
machine's; the shares are what the list is cut by. See the list's own header for its figures.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW_LIST = ROOT / "tests" / "slow_tests.txt"


@dataclass(frozen=True)
class TestCost:
    """One test's line of the log."""

    nodeid: str
    wall: float
    cpu: float
    """Its own process's CPU and its finished children's, in seconds."""
    slow_in_code: bool

    @property
    def file(self) -> str:
        """The test file the id names."""
        return self.nodeid.split("::", 1)[0]


def read_log(path: Path) -> list[TestCost]:
    """The log's tests (a test run twice, as a rerun: its last line)."""
    costs: dict[str, TestCost] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) < 4:
            continue
        slow = len(fields) > 4 and fields[4] == "1"
        costs[fields[0]] = TestCost(
            fields[0], float(fields[1]), float(fields[2]) + float(fields[3]), slow
        )
    return list(costs.values())


def run_suite(log: Path, extra: list[str]) -> None:
    """Run every test but the GPU ones, recording each test's CPU into `log`."""
    log.unlink(missing_ok=True)
    env = {**os.environ, "LMMPROBE_TEST_CPU_LOG": str(log)}
    argv = [sys.executable, "-m", "pytest", "-m", "not gpu", "-p", "no:randomly", *extra]
    subprocess.run(argv, cwd=ROOT, env=env, check=False)


def choose_slow(costs: list[TestCost], fast_share: float) -> list[TestCost]:
    """The costliest tests, until the rest costs at most `fast_share` of all (see the module)."""
    candidates = [c for c in costs if not c.slow_in_code]
    total = sum(c.cpu for c in candidates)
    left = defaultdict(int)
    for c in candidates:
        left[c.file] += 1
    fast = total
    chosen: list[TestCost] = []
    for c in sorted(candidates, key=lambda c: c.cpu, reverse=True):
        if fast <= fast_share * total:
            break
        if left[c.file] == 1:
            continue  # the file's last fast test stays fast
        left[c.file] -= 1
        chosen.append(c)
        fast -= c.cpu
    return chosen


def write_list(chosen: list[TestCost], costs: list[TestCost], command: str) -> None:
    """Write `tests/slow_tests.txt`: a header saying how it was made, then the ids by file."""
    total = sum(c.cpu for c in costs if not c.slow_in_code)
    slow = sum(c.cpu for c in chosen)
    today = datetime.date.today().isoformat()
    head = [
        "# Tests `make test` leaves out as slow (run them: .venv/bin/python -m pytest -m slow).",
        f"# Written by `{command}` on {today}:",
        "# the costliest tests by CPU (their own and that of the console scripts, servers and",
        "# models they start), until the rest of the suite costs at most the chosen share;",
        "# every test file keeps at least one test in the fast suite.",
        f"# {len(chosen)} of {len(costs)} tests, {slow:,.0f} of {total:,.0f} CPU seconds"
        f" ({100 * slow / total:.0f}%) measured.",
        "# A line is one test id (an id without [...] names every case of a parametrized test);",
        "# a line starting with # is a comment.",
        "",
    ]
    lines = sorted(c.nodeid for c in chosen)
    SLOW_LIST.write_text("\n".join(head + lines) + "\n", encoding="utf-8")


def extend_list(chosen: list[TestCost], costs: list[TestCost], command: str) -> None:
    """Add `chosen` (fast tests of the log `costs`) to `tests/slow_tests.txt`, keeping its lines."""
    total = sum(c.cpu for c in costs if not c.slow_in_code)
    slow = sum(c.cpu for c in chosen)
    today = datetime.date.today().isoformat()
    lines = SLOW_LIST.read_text("utf-8").splitlines() if SLOW_LIST.exists() else []
    lines += [
        "",
        f"# Added by `{command}` on {today}, from a log of the fast suite alone:",
        f"# {len(chosen)} of its {len(costs)} tests, {slow:,.0f} of its {total:,.0f} CPU seconds"
        f" ({100 * slow / total:.0f}%).",
        *sorted(c.nodeid for c in chosen),
    ]
    SLOW_LIST.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    """Run or read the measurement, print it, and write the list when asked."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from-log", type=Path, help="read this log instead of running the suite")
    ap.add_argument("--log", type=Path, help="where the run's log goes (default: a temp file)")
    ap.add_argument("--write-slow", action="store_true", help="rewrite tests/slow_tests.txt")
    ap.add_argument(
        "--extend",
        action="store_true",
        help="add the log's costliest fast tests to tests/slow_tests.txt, keeping its lines",
    )
    ap.add_argument("--fast-share", type=float, default=0.36, help="CPU share the fast suite keeps")
    ap.add_argument("--top", type=int, default=25, help="files and tests shown")
    args, extra = ap.parse_known_args()
    if args.from_log:
        log = args.from_log
    else:
        log = args.log or Path(tempfile.mkdtemp(prefix="suite-cpu-")) / "cpu.tsv"
        run_suite(log, extra)
    costs = read_log(log)
    if not costs:
        raise SystemExit(f"{log}: no test was recorded")
    lines = SLOW_LIST.read_text("utf-8").splitlines() if SLOW_LIST.exists() else []
    listed = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    total = sum(c.cpu for c in costs)
    by_file: dict[str, float] = defaultdict(float)
    for c in costs:
        by_file[c.file] += c.cpu
    print(f"{len(costs)} tests, {total:,.1f} CPU seconds, {sum(c.wall for c in costs):,.1f} s wall")
    print("\ncostliest files (CPU s, share):")
    for name, cpu in sorted(by_file.items(), key=lambda kv: kv[1], reverse=True)[: args.top]:
        print(f"  {cpu:8.1f}  {100 * cpu / total:4.1f}%  {name}")
    print("\ncostliest tests (CPU s, wall s):")
    for c in sorted(costs, key=lambda c: c.cpu, reverse=True)[: args.top]:
        print(f"  {c.cpu:7.2f} {c.wall:7.2f}  {c.nodeid}")
    if args.extend:
        fast_costs = [c for c in costs if not c.slow_in_code and c.nodeid not in listed]
        chosen = choose_slow(fast_costs, args.fast_share)
        command = f"python benchmarks/suite_cpu.py --extend --fast-share {args.fast_share:g}"
        extend_list(chosen, fast_costs, command)
        listed |= {c.nodeid for c in chosen}
        print(f"\nadded {len(chosen)} tests to {SLOW_LIST.relative_to(ROOT)}")
    elif args.write_slow:
        chosen = choose_slow(costs, args.fast_share)
        command = "python benchmarks/suite_cpu.py --write-slow" + (
            f" --fast-share {args.fast_share:g}" if args.fast_share != 0.36 else ""
        )
        write_list(chosen, costs, command)
        listed = {c.nodeid for c in chosen}
        print(f"\nwrote {SLOW_LIST.relative_to(ROOT)}: {len(chosen)} tests")
    slow = sum(
        c.cpu
        for c in costs
        if c.slow_in_code or c.nodeid in listed or c.nodeid.split("[")[0] in listed
    )
    fast = total - slow
    print(
        f"tests={len(costs)} cpu_s={total:.1f} fast_cpu_s={fast:.1f} slow_cpu_s={slow:.1f} "
        f"fast_share={fast / total:.3f} listed_slow={len(listed)}"
    )


if __name__ == "__main__":
    main()
