"""Running the real ``lmmprobe`` console script from a test: the one helper the CLI tests share."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer


def as_from_a_shell() -> None:
    """A ``preexec_fn`` giving the child Ctrl-C as a shell gives it: not blocked, not ignored.

    A child inherits a blocked or ignored SIGINT (a library may leave either set in a test
    worker), and then a Python child never sees the Ctrl-C a test sends it.
    """
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def lmmprobe(
    *args: str | Path,
    columns: int = 160,
    timeout: float = 300,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Run this interpreter's ``lmmprobe`` with `args`; never raises on a non-zero exit.

    Args:
        args: The command line after ``lmmprobe``.
        columns: The terminal width the tables are laid out for.
        timeout: Seconds before the test fails instead of hanging.
        env: Environment variables set on top of this process's (``HF_HUB_OFFLINE="1"``).

    """
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None, "the lmmprobe console script is not installed beside this Python"
    return subprocess.run(
        [exe, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": str(columns), **env},
        check=False,
    )


def lmmprobe_with_key(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`lmmprobe` with an OpenAI API key set, as a run against the fake OpenAI server needs.

    The fake server takes any key; this one is long enough to be scrubbed from answers.
    """
    return lmmprobe(*args, OPENAI_API_KEY="test-key", **env)


def subcommands(command: Any) -> dict[str, Any]:
    """The commands of a click group by name, those `lmmprobe` builds on first use included.

    `lmmprobe.cli.main`'s group builds the commands of their own modules when asked for them
    (``get_command``), so a group's ``commands`` holds only those built so far. A command
    that is no group has none.
    """
    if not hasattr(command, "list_commands"):
        return {}
    ctx = typer.Context(command)
    return {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}
