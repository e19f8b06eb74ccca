"""Store faults: the `StoreError` family and the mapping of SQLite's errors onto it.

A fault of the file itself (damaged, locked by another writer, disk full, read-only) becomes a
`StoreError` subclass whose message is one line: what happened, to which file, and what to do
(`fault`); `as_store_error` does it for code outside the store. `timeout_from_env` reads how long
to wait for another process's write lock.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = [
    "DB_TIMEOUT_ENV",
    "DEFAULT_TIMEOUT_S",
    "StoreAccessError",
    "StoreDamagedError",
    "StoreError",
    "StoreVersionError",
    "as_store_error",
    "fault",
    "is_fault",
    "primary_code",
    "timeout_from_env",
    "timeout_from_env_or_default",
]

DB_TIMEOUT_ENV = "LMMPROBE_DB_TIMEOUT"
"""Environment variable: seconds to wait for another process's write lock (default 30)."""
DEFAULT_TIMEOUT_S = 30.0


class StoreError(ValueError):
    """A store fault; its message is one line: what happened, to which file, what to do."""


class StoreVersionError(StoreError):
    """The database cannot be opened by this lmmprobe: newer, too old, or not a store."""


# The two faults below derive from StoreVersionError (not only StoreError) so that callers which
# already turn a store that cannot be opened into a clean exit (the CLI's ``open_store``, the
# report) do the same for them; catch StoreError to handle every store fault.


class StoreDamagedError(StoreVersionError):
    """The file is not a readable SQLite database, or fails SQLite's integrity check."""


class StoreAccessError(StoreVersionError):
    """The store cannot be written now: locked by another process, disk full, read-only, I/O.

    Attributes:
        reason: ``locked``, ``full``, ``read_only``, ``cannot_open``, ``io``, ``out_dir`` or
            ``setting`` (``$LMMPROBE_DB_TIMEOUT`` is not a number).

    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


# SQLite's primary result codes (the low byte of an extended code) that name a fault of the file.
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_INTERRUPT, SQLITE_IOERR = 5, 6, 8, 9, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 13, 14, 26
# "Could not decode to UTF-8": a text column holding bytes that are not UTF-8. lmmprobe writes
# text only from Python strings, so such bytes are damage (or another program's writing).
DAMAGED_WORDS = ("malformed", "not a database", "file is encrypted", "could not decode")


def is_fault(exc: sqlite3.Error) -> bool:
    """Whether an SQLite error is a fault of the file or its disk, not a misuse by the caller.

    A broken constraint or bad SQL is a bug of the caller and stays the error it is; so does
    a query the caller interrupted on purpose (a viewer's time limit).
    """
    if primary_code(exc) == SQLITE_INTERRUPT:
        return False
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


def as_store_error(
    exc: sqlite3.Error, path: str | Path, doing: str = "reading it"
) -> StoreError | None:
    """The one-line `StoreError` for an SQLite error met on the store at `path`, if a fault.

    For code that reads a store through its own connection (`Store.conn`, the viewer's
    `lmmprobe.store.queries.Readers`) and reports what `Store`'s own methods raise.

    Args:
        exc: The error SQLite raised.
        path: The store file.
        doing: What was being done, for the message ("reading it").

    Returns:
        A `StoreDamagedError`, `StoreAccessError` or `StoreError`; None when the error is not
        a fault of the file (a bug of the caller, a query stopped on purpose), which the
        caller should let through as it is.

    """
    if not is_fault(exc):
        return None
    return fault(exc, Path(path), doing, timeout_from_env_or_default())


def fault(exc: sqlite3.Error, path: Path, doing: str, timeout: float) -> StoreError:
    """A one-line `StoreError` for an SQLite error met while `doing` something with `path`."""
    primary = primary_code(exc)
    text = str(exc)
    lower = text.lower()
    if primary in (SQLITE_CORRUPT, SQLITE_NOTADB) or any(w in lower for w in DAMAGED_WORDS):
        # SQLite's decoding error quotes the damaged bytes: never echo them to a terminal.
        what = "a text value is not valid UTF-8" if "could not decode" in lower else text
        return StoreDamagedError(
            f"{path} is damaged or is not an lmmprobe store ({what}, while {doing}). lmmprobe "
            f"has left it as it is: move it aside (`sqlite3 {path} .recover` may save its "
            "rows) and pass another --db file."
        )
    if primary in (SQLITE_BUSY, SQLITE_LOCKED) or "locked" in lower:
        return StoreAccessError(
            f"{path} is locked: another process held its write lock for {timeout:g} s (while "
            f"{doing}). Wait for that run to finish (or stop it) and re-run, or pass another "
            f"--db file; {DB_TIMEOUT_ENV}=SECONDS waits longer. Nothing stored was lost.",
            "locked",
        )
    if primary == SQLITE_FULL or "disk is full" in lower:
        return StoreAccessError(
            f"the disk holding {path} is full (while {doing}). Free some space and re-run: "
            "everything stored so far is kept and the run resumes where it stopped.",
            "full",
        )
    if primary == SQLITE_READONLY or "readonly" in lower:
        return StoreAccessError(
            f"{path} cannot be written: the file or its folder is read-only (while {doing}). "
            "Make them writable, or pass --db with a file in a writable folder.",
            "read_only",
        )
    if primary == SQLITE_CANTOPEN:
        return StoreAccessError(
            f"cannot open the store {path} ({text}, while {doing}): check that its folder "
            "exists and is writable, or pass another --db file.",
            "cannot_open",
        )
    if primary == SQLITE_IOERR:
        return StoreAccessError(
            f"could not write {path} ({text}, while {doing}): the disk may be full, removed or "
            "read-only. Free space or fix the disk and re-run: everything stored so far is kept "
            "and the run resumes where it stopped.",
            "io",
        )
    return StoreError(f"{path}: {text} (while {doing})")


def primary_code(exc: sqlite3.Error) -> int | None:
    """The primary SQLite result code of an error (None where Python gives none)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def timeout_from_env_or_default() -> float:
    """The write-lock wait for messages: `timeout_from_env`, or the default when unset."""
    try:
        return timeout_from_env()
    except StoreAccessError:
        return DEFAULT_TIMEOUT_S


def timeout_from_env() -> float:
    """The write-lock wait: ``$LMMPROBE_DB_TIMEOUT`` seconds when set and valid, else 30."""
    raw = os.environ.get(DB_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses NaN
        raise StoreAccessError(
            f"{DB_TIMEOUT_ENV}={raw!r} is not a number of seconds: set it to e.g. 30, or unset it.",
            "setting",
        )
    return value
