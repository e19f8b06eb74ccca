"""How a user starts lmmprobe from the shell they are in: the program name the hints print.

At the bottom of the package (it imports nothing of lmmprobe's) because two places print hints
with a command in them: the CLI (`lmmprobe.cli._common.runnable`) and the fake OpenAI server's
``python -m`` command (`lmmprobe.testing`, which the CLI may not import). Right after ``make``
the console script is ``.venv/bin/lmmprobe``, not on ``$PATH`` until the virtual environment is
activated: a hint that says a bare ``lmmprobe`` would not run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

NAME = "lmmprobe"


def command_name(started: str) -> str:
    """``lmmprobe`` when that name on ``$PATH`` is the program at `started`; else `started`.

    Args:
        started: The path of the console script, as the user typed it or relative to the
            working directory (``.venv/bin/lmmprobe``).

    Returns:
        ``lmmprobe``, or `started` quoted for a POSIX shell.

    """
    if Path(started).name != NAME or "[" in started:  # "[": read as markup by rich
        return NAME
    found = shutil.which(NAME)
    try:
        if found is not None and os.path.samefile(found, started):
            return NAME
    except OSError:
        pass
    return shlex.quote(started)


def beside_python() -> str:
    """How to start the console script installed beside this Python (`command_name`).

    For a program that is not the console script itself (``python -m ...``): the script in
    the folder of ``sys.executable`` (not resolved: a virtual environment's ``bin`` holds a
    link to the real interpreter), written relative to the working directory when it is below
    it. ``lmmprobe`` when no script is there (a source checkout on ``PYTHONPATH``).
    """
    script = Path(sys.executable).parent / NAME
    if not script.is_file():
        return NAME
    path = str(script)
    with_dot = Path(os.path.relpath(script))
    if not with_dot.parts or with_dot.parts[0] != "..":
        path = str(with_dot)
    return command_name(path)
