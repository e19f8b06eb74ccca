"""Whether a store file is, byte for byte, the one lmmprobe last checked and closed cleanly.

`Store.check_integrity` (SQLite's ``PRAGMA quick_check``) reads every page of the file, so
before the first write of each command it cost a read of the whole store: seconds on a store
of millions of rows, for every ``run``, ``import`` or ``judge`` that adds a few. The check
guards against a file damaged outside SQLite (a bad copy, an edit, a truncation); SQLite's
own writes, in WAL mode, do not damage a file even when the process is killed.

So a writing `Store` that checked the file (or found it sealed) and closed it cleanly, the
write-ahead log emptied into the file and removed, records beside it a seal: the file's
device, inode, size, and modification and change times in nanoseconds. A later open whose
file still has exactly that identity, with no log or journal beside it, skips the check.
Anything that writes the file outside that store changes its times (the change time cannot be
set back by a user), and a copy is another inode, so such a file is checked again; so is a
store that was not closed cleanly (its log is still there) or that another connection still
has open. A seal that cannot be written or read is only a check not skipped.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from lmmprobe._file_kind import open_regular_file

log = logging.getLogger(__name__)

SEAL_SUFFIX = "-checked"
"""The seal's file beside the store (as SQLite's ``-wal`` and ``-shm``)."""

_SEAL_MAX_BYTES = 200
"""A seal is one short line; anything longer is not one (and is not read further)."""

_UNCLEAN = ("-wal", "-journal")
"""Files beside a store that mean a writer is at work or did not close cleanly."""


def _identity(file: Path) -> str:
    """The file's identity as a seal holds it: what any write or copy of it changes."""
    st = os.stat(file)
    return f"1 {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}"


def _companion(file: Path, suffix: str) -> Path:
    return file.with_name(file.name + suffix)


def _closed_cleanly(file: Path) -> bool:
    """No write-ahead log or rollback journal beside `file` (SQLite removes both on close)."""
    return not any(_companion(file, s).exists() for s in _UNCLEAN)


def is_sealed(file: Path) -> bool:
    """Whether `file` is the file a seal was made of and nothing is at work on it now.

    Asked before the store's connection opens (opening it in WAL mode makes its log).
    """
    try:
        if not _closed_cleanly(file):
            return False
        # Opened non-blocking and checked: a FIFO put where the seal goes must not hang
        # every write command (it raises NotRegularFile, an OSError: no seal).
        with open_regular_file(_companion(file, SEAL_SUFFIX), "a store's seal") as fh:
            seal = fh.read(_SEAL_MAX_BYTES + 1)
        return len(seal) <= _SEAL_MAX_BYTES and seal.decode("ascii", "replace") == _identity(file)
    except OSError:
        return False


def seal(file: Path) -> None:
    """Record `file`'s identity beside it, once its last connection has closed cleanly.

    Called by a writing store that checked the file (or found it sealed) on close. Nothing is
    recorded while a log or journal is beside the file (another connection has it open, or
    the close left the log), and a stale seal is then removed so that it cannot match later.
    """
    target = _companion(file, SEAL_SUFFIX)
    try:
        if not _closed_cleanly(file):
            target.unlink(missing_ok=True)
            return
        part = _companion(file, f"{SEAL_SUFFIX}.{os.getpid()}.{threading.get_ident()}")
        part.write_text(_identity(file), encoding="ascii")
        os.replace(part, target)
    except OSError as exc:
        log.debug("no seal beside %s (its next write checks it): %s", file, exc)
