"""CPU seconds of one ``lmmprobe`` call, old code beside new, for a few commands (issue 34, item 17).

Every console call of the test suite is a fresh interpreter, so what a command imports before
it does anything is paid thousands of times. This runs the real console script, in turn for
each code, round after round (so a machine whose speed drifts affects both alike), and reads
each call's CPU time (user + system, `resource.getrusage` of the finished child):

- ``old, compiled``: ``--old-src`` as a fresh clone runs it where ``PYTHONDONTWRITEBYTECODE`` is
  set (this workplace's image sets it): no ``.pyc`` files, so each call compiles every lmmprobe
  module it imports (what the suite paid before its conftest wrote the bytecode);
- ``old``: the same code with its bytecode written first;
- ``new``: this tree's code with its bytecode written first (as the suite's conftest now does).

The commands: ``--help`` (lists every command), ``run --help``, ``data list``, ``show`` of a
small stored run, and a small ``run`` (``demo,n=20``, the ``first`` baseline, a new store each
call). Each code is copied to a temporary folder, so neither tree is written to. The median of
``--rounds`` calls is printed per command and code, then one line of ``name=value`` figures.

Usage: python benchmarks/cli_startup.py --old-src OLD/src [--rounds 5]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS: dict[str, tuple[str, ...]] = {
    "help": ("--help",),
    "run_help": ("run", "--help"),
    "data_list": ("data", "list"),
    "show": ("show", "--db", "{store}"),
    "run": ("run", "--data", "demo,n=20", "--model", "first", "-q", "--db", "{fresh}"),
}
CODES = ("old_compiled", "old", "new")


def _cpu_of(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds (user + system) the finished command used; it must exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-1000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _copy(src: Path, dest: Path, *, compiled: bool) -> Path:
    """`src` copied to `dest` without its bytecode; compiled there when `compiled`."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    if compiled:
        compileall.compile_dir(dest, quiet=2)
    return dest


def main() -> None:
    """Print the table and one ``name=value`` line."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old-src", required=True, type=Path, help="src/ of the previous code")
    ap.add_argument("--rounds", type=int, default=5, help="calls per command and code")
    args = ap.parse_args()
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "the lmmprobe console script is not installed beside this Python"
    new_src = Path(__file__).resolve().parents[1] / "src"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = {
            "old_compiled": _copy(args.old_src, root / "old_compiled", compiled=False),
            "old": _copy(args.old_src, root / "old", compiled=True),
            "new": _copy(new_src, root / "new", compiled=True),
        }
        envs = {
            code: {
                **os.environ,
                "PYTHONPATH": str(tree),
                "PYTHONDONTWRITEBYTECODE": "1",
                "COLUMNS": "120",
            }
            for code, tree in trees.items()
        }
        store = root / "shown.db"
        subprocess.run(
            [exe, *COMMANDS["run"][:-1], str(store)], env=envs["new"], cwd=root, check=True,
            capture_output=True,
        )  # fmt: skip
        cpu: dict[tuple[str, str], list[float]] = {}
        for i in range(args.rounds):
            for name, command in COMMANDS.items():
                for code in CODES:
                    fresh = root / f"{code}-{name}-{i}.db"
                    argv = [exe, *(a.format(store=store, fresh=fresh) for a in command)]
                    cpu.setdefault((name, code), []).append(_cpu_of(argv, envs[code], root))
    print(f"CPU seconds per call, median of {args.rounds} (user + system)")
    print(f"{'command':<10} {'old, compiled':>14} {'old':>8} {'new':>8} {'new/old':>8}")
    figures: list[str] = []
    for name in COMMANDS:
        med = {code: statistics.median(cpu[name, code]) for code in CODES}
        print(
            f"{name:<10} {med['old_compiled']:>14.3f} {med['old']:>8.3f} {med['new']:>8.3f} "
            f"{med['new'] / med['old']:>8.2f}"
        )
        figures += [f"{code}_{name}_s={med[code]:.3f}" for code in CODES]
        figures.append(f"{name}_new_over_old_compiled={med['new'] / med['old_compiled']:.2f}")
    print(" ".join(figures))


if __name__ == "__main__":
    main()
