"""The tool registry lists and resolves every built-in tool on first use, with no helper call."""

from __future__ import annotations

import os
import subprocess
import sys

from lmmprobe.tools import TOOLS, tool_names


def run_fresh(script: str) -> list[str]:
    """Run `script` in a new interpreter (nothing imported or registered yet); its stdout lines."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_fresh_registry_lists_every_builtin_tool() -> None:
    # Only the registry module: the modules defining tools are imported by its first listing,
    # so it lists what it lists once every tool module (and the package) is imported.
    first, after = run_fresh(
        "from lmmprobe.tools.registry import TOOLS\n"
        "print(' '.join(TOOLS.names()))\n"
        "import lmmprobe.tools, lmmprobe.tools.generated, lmmprobe.tools.select\n"
        "import lmmprobe.tools.transforms\n"
        "print(' '.join(TOOLS.names()))\n"
    )
    assert first == after
    assert len(first.split()) > 2


def test_fresh_registry_resolves_a_tool_by_name() -> None:
    name = next(n for n in tool_names("transform"))
    lines = run_fresh(
        f"from lmmprobe.tools.registry import TOOLS\nprint(TOOLS.get({name!r}).kind)\n"
    )
    assert lines == ["transform"]


def test_registry_and_helpers_agree() -> None:
    assert TOOLS.names() == tool_names()
    assert set(tool_names("select")) | set(tool_names("transform")) == set(tool_names())
