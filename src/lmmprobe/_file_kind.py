"""What a path a user gave is, when it is not a regular file: the one wording every reader uses.

A FIFO or a device such as ``/dev/zero`` would hang a read or never end it, so every reader of
a file a user points at takes regular files only; a path that is something else is named as
what it is (``ff/zero.yaml: a character device, not a regular file; ...``), never called
missing. `lmmprobe.data.files.open_regular` refuses so when it opens a file; the readers that
check a path before opening it (`lmmprobe._mapping_file`, the JSONL and ReForm-Eval sources, a
row's image, ``lmmprobe elo``, APEx's replay) ask `not_regular_file` first.

Kept below every package (it needs nothing of lmmprobe's), as `lmmprobe._mapping_file`, which
asks it, is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["file_kind", "not_regular_file", "not_regular_message"]


def file_kind(mode: int) -> str:
    """What a file of `mode` (``os.stat``'s ``st_mode``) is, in words: ``"a FIFO"``..."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def not_regular_message(path: Path | str, kind: str, what: str) -> str:
    """The one line refusing `path`, which is `kind` (`file_kind`), as a file of `what`."""
    return (
        f"{path}: {kind}, not a regular file; lmmprobe reads {what} from regular files only "
        "(copy the data into one)"
    )


def not_regular_file(path: Path | str, what: str, *, shown: str | None = None) -> str | None:
    """`not_regular_message` for `path` when it exists (links followed) and is no regular file.

    Args:
        path: The path a user gave.
        what: What the file should hold (``"settings"``, ``"data rows"``).
        shown: How the message names the file (a row's image as the row wrote it), if not as
            `path`.

    Returns:
        The message; None when `path` is a regular file or does not exist (or cannot be
        looked at), which the caller says in its own words.

    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a broken link, no permission, a NUL in the name
        return None
    if stat.S_ISREG(mode):
        return None
    return not_regular_message(path if shown is None else shown, file_kind(mode), what)
