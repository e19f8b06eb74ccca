"""A command imports what it uses: the console's start-up stays cheap (issue 34, item 17).

Every ``lmmprobe`` call starts a fresh interpreter, and the test suite starts thousands. A
command's help, and the commands that neither run nor score, used to import the runner, the
report, the metrics, numpy and every sub-command's module first (about half a second of CPU
a call). Checked by the modules the real console script has imported when it exits (the
names in ``sys.modules``), never by wall time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Libraries no command's help or listing needs; each costs a tenth of a second or more.
HEAVY_LIBRARIES = ("torch", "transformers", "scipy", "plotly", "openai", "httpx", "pandas")

# What `lmmprobe run --help` (and any command but the one it names) must not load: the runner,
# the report's models, the metrics with numpy, the data loaders and the other commands' modules.
NOT_FOR_ONE_COMMANDS_HELP = (
    *HEAVY_LIBRARIES,
    "numpy",
    "lmmprobe.api",
    "lmmprobe.run",
    "lmmprobe.report.model",
    "lmmprobe.metrics",
    "lmmprobe.data.benchmarks",
    "lmmprobe.cli._view",
    "lmmprobe.cli.score",
    "lmmprobe.cli.serve",
    "lmmprobe.cli.synth",
)


# Runs the console script as the shell does (its file as ``__main__``), then writes the names
# in `sys.modules` at exit. `-X importtime` would miss what `importlib.import_module` loads.
_REPORT_MODULES = """
import atexit, runpy, sys
out, script = sys.argv[1], sys.argv[2]
atexit.register(lambda: open(out, "w").write("\\n".join(sorted(sys.modules))))
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""


def _imported(tmp_path: Path, *args: str) -> set[str]:
    """The modules `lmmprobe ARGS` has imported when it exits; it must succeed."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "the lmmprobe console script is not installed beside this Python"
    out = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", _REPORT_MODULES, str(out), exe, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "80"},
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(out.read_text(encoding="utf-8").split())


@pytest.mark.parametrize("command", ["run", "show", "export", "judge"])
def test_one_commands_help_loads_neither_the_runner_nor_the_other_commands(
    command: str, tmp_path: Path
) -> None:
    imported = _imported(tmp_path, command, "--help")
    assert "lmmprobe.cli.main" in imported  # the check reads what it should
    assert not imported & set(NOT_FOR_ONE_COMMANDS_HELP), sorted(
        imported & set(NOT_FOR_ONE_COMMANDS_HELP)
    )


def test_the_list_of_commands_loads_no_heavy_library(tmp_path: Path) -> None:
    imported = _imported(tmp_path, "--help")
    # The list shows every command's summary, so every command module is loaded here.
    assert {"lmmprobe.cli.score", "lmmprobe.cli.synth", "lmmprobe.cli.serve"} <= imported
    assert not imported & set(HEAVY_LIBRARIES), sorted(imported & set(HEAVY_LIBRARIES))


def test_a_run_loads_no_other_commands_module(tmp_path: Path) -> None:
    # A run needs the runner, the report and the metrics; not score's, serve's or synth's CLI.
    imported = _imported(tmp_path, "run", "--data", "demo,n=4", "--model", "first", "--dry-run")
    assert "lmmprobe.run" in imported
    assert not imported & {"lmmprobe.cli.score", "lmmprobe.cli.serve", "lmmprobe.cli.synth"}
