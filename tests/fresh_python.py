"""Running a snippet in a new interpreter, where nothing of lmmprobe is imported or registered yet."""

from __future__ import annotations

import os
import subprocess
import sys


def run_fresh(script: str) -> list[str]:
    """Run `script` in a new interpreter (nothing imported or registered yet); its stdout lines."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()
