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

A file changed outside SQLite while a store has it open (an edit, a truncation, a copy over it)
keeps its new times, but the store's own writes move them too, so the close alone cannot tell.
The store therefore watches its file (`Watch`): it notes the file's identity once the file is
checked or found sealed, and again after each of its own writes (a commit may move the log
into the file); a file whose identity changed between two of them was written by someone
else, and it is not sealed on close, so the next write command checks it (re-test 15 #2).
Another connection's writes count as someone else's too: a store written by two processes at
once is checked again, never sealed wrongly.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
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


def identity_of(file: Path) -> str | None:
    """`file`'s identity as a seal holds it; None when it cannot be looked at."""
    try:
        return _identity(file)
    except OSError:
        return None


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


def seal(file: Path, vouched: str | None) -> None:
    """Record `file`'s identity beside it, once its last connection has closed cleanly.

    Called by a writing store that checked the file (or found it sealed) on close, with the
    identity its `Watch` saw after its own last write (None: someone else changed the file, so
    it is not sealed). Nothing is recorded while a log or journal is beside the file (another
    connection has it open, or the close left the log), nor when the file is no longer that
    identity; a stale seal is then removed so that it cannot match later.

    The seal is written to a new file of a random name (``O_EXCL``: never through a link or a
    FIFO someone put there) and renamed into place; that file is removed when the rename fails
    (a folder where the seal goes), so a seal that cannot be written leaves nothing behind.
    """
    target = _companion(file, SEAL_SUFFIX)
    try:
        if vouched is None or not _closed_cleanly(file) or identity_of(file) != vouched:
            target.unlink(missing_ok=True)
            return
        fd, name = tempfile.mkstemp(prefix=f"{file.name}{SEAL_SUFFIX}.", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(vouched)
            os.replace(name, target)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.debug("no seal beside %s (its next write checks it): %s", file, exc)


class Watch:
    """Whether a writing store's file has been changed by nothing but the store's own writes.

    `vouch` once the file is checked (or found sealed); wrap each of the store's own writes in
    `own` (a transaction, the close) or `own_in_background` (a checkpoint made by a thread of
    its own, while the store's other writes go on). `vouched` is then the identity the file
    had after the last of them, or None once the file changed between two of them, which only
    someone else's write does. (A change made while a background checkpoint runs cannot be
    told from the checkpoint's.)
    """

    def __init__(self, file: Path) -> None:
        self.file = file
        self._seen: str | None = None
        self._background = 0  # own writes under way in other threads
        self._lock = threading.Lock()

    @property
    def vouched(self) -> str | None:
        """The file's identity after the store's last own write; None: not vouched for."""
        return self._seen

    def vouch(self) -> None:
        """The file, as it is now, was checked or found sealed: watch it from here."""
        with self._lock:
            self._seen = identity_of(self.file)

    def _before(self) -> None:
        with self._lock:
            if self._background or self._seen is None:
                return
            if identity_of(self.file) != self._seen:
                log.debug("%s changed outside this store: not sealed on close", self.file)
                self._seen = None

    def _after(self) -> None:
        with self._lock:
            if self._seen is not None:
                self._seen = identity_of(self.file)

    @contextmanager
    def own(self) -> Iterator[None]:
        """Around one of the store's own writes (the file may change inside, by SQLite)."""
        self._before()
        try:
            yield
        finally:
            self._after()

    @contextmanager
    def own_in_background(self) -> Iterator[None]:
        """Around a write a thread of the store's makes while the store's other writes go on."""
        self._before()
        with self._lock:
            self._background += 1
        try:
            yield
        finally:
            with self._lock:
                self._background -= 1
            self._after()
