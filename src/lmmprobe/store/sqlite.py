"""The SQLite store: runs, the samples each run asked, every response as it arrives, and scores.

Responses are keyed by their request's cache key (one row per key, ever), so a crashed or
repeated run can never store a response twice; a later success replaces a stored error. The
database runs in WAL mode so a reader (``lmmprobe show``) never blocks a running evaluation,
and each batch is committed on its own so a killed process loses at most its in-flight batch.
The database records the version of its layout (`SCHEMA_VERSION`): opening an older store
migrates it, and a newer one is refused with what to do.

Faults of the file itself (damaged, locked by another writer, disk full, read-only) are raised
as `StoreError` subclasses whose message is one line: what happened, to which file, and what to
do; the file is never changed or deleted to get past them. Each run records the process that
owns it; a store opened after that process died marks the run for what it is (``interrupted``
while it was running, ``incomplete`` when it finished without its results).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import io
import json
import logging
import math
import os
import shlex
import socket
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import wraps
from itertools import islice
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import quote

from lmmprobe._file_kind import file_kind, kernel_file
from lmmprobe._secrets import redact_record, redact_spec
from lmmprobe.schema import (
    ErrorInfo,
    ImageRef,
    Judgement,
    Request,
    Response,
    Sample,
    Score,
    Usage,
    VideoRef,
    safe_text,
)
from lmmprobe.schema.rows import RowChunk
from lmmprobe.schema.text import stored_json
from lmmprobe.store.errors import (
    SQLITE_CANTOPEN,
    SQLITE_READONLY,
    StoreAccessError,
    StoreDamagedError,
    StoreError,
    StoreVersionError,
    fault,
    is_fault,
    primary_code,
    timeout_from_env,
)
from lmmprobe.store.layout import (
    DDL,
    DDL_5,
    DDL_7,
    DDL_9,
    DDL_10,
    DDL_12,
    DDL_13,
    DDL_14,
    MAX_STORED_TEXT,
    MIGRATIONS,
    OUR_TABLES,
    SCHEMA_VERSION,
    WHOLE_METADATA,
    capped,
    foreign_objects,
    metadata_part,
    over_cap,
    past_cap,
    within_cap,
)
from lmmprobe.store.reuse import (
    ROWS_SCORED_AT,
    Reused,
    copy_run_rows,
    find_identical_run,
    recorded_form,
)
from lmmprobe.store.rows import StoredRows, read_chunks
from lmmprobe.store.runs import read_run, read_runs
from lmmprobe.store.seal import Watch, is_sealed, seal

log = logging.getLogger(__name__)

DEFAULT_DB = Path("lmmprobe-runs") / "lmmprobe.db"


def command_for(command: str, db: str | Path) -> str:
    """The quoted hint `` `lmmprobe COMMAND` `` for the store at `db`: with ``--db`` unless default.

    A hint about a store the user named (``--db x.db``) must name it too, or the command it
    suggests looks in the default store and finds nothing.
    """
    if Path(db).resolve() == DEFAULT_DB.resolve():
        return f"`lmmprobe {command}`"
    return f"`lmmprobe {command} --db {shlex.quote(str(db))}`"


# Keys per IN (...) query, under SQLite's oldest limit on bound variables (999).
_CHUNK = 500

# Specs whose recorded form a store keeps (`Store.recorded_spec`): far more than a run names.
_RECORDED_SPECS_KEPT = 256

# The scores table: the run id, then a column per `Score` field (gold, metadata and the shown
# options as JSON; `order` is the column option_order, ORDER being an SQL keyword), in the order
# `_score_values` writes them.
_SCORE_COLUMNS = (
    "run_id", "model", "sample_id", "repeat", "key", "stage", "prediction", "prediction_text",
    "correct", "format_hit", "gold", "gold_text", "abstain_offered", "abstained", "error_type",
    "metadata", "formulation", "options", "marks", "option_order",
)  # fmt: skip
_SCORE_JSON = ("gold", "metadata")
_METADATA_AT = _SCORE_COLUMNS.index("metadata")
_SCORE_NULLABLE_JSON = ("options", "marks", "order")
# Metadata is free-form: anything JSON lacks (a Path, say) is written as its str(); a number
# JSON lacks (NaN, infinity) never is written (`_metadata_json`).
_strict_json = json.JSONEncoder(default=str, allow_nan=False).encode
_NO_USAGE = Usage()
"""The counts of a response that reports none (all None): one instance, only ever read
(`Store.put_responses` took a validated `Usage()` for every such row)."""


def _metadata_json(value: Any) -> str:
    """Metadata as the store writes it: standard JSON, which its reader holds it to.

    NaN (a figure or a data cell with no value) is written as null. An infinite number is a
    fault where the metadata was made (JSON has no Infinity, and the store's reader refuses
    it): named, not written.

    Raises:
        StoreError: The metadata holds an infinite number (the message names its key).
        TypeError: A key JSON cannot hold (a tuple).

    """
    try:
        return _strict_json(value)
    except ValueError as exc:  # a number JSON lacks: the rare case, walked only then
        if "Out of range float" not in str(exc):
            raise  # a cycle, as the plain encoder reports it
        return _strict_json(_finite(value, "metadata"))


def _finite(value: Any, at: str) -> Any:
    """`value` with NaN as None; a `StoreError` naming where (`at`) an infinity is."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            raise StoreError(
                f"{at} holds {value}, a number JSON cannot hold: not written (a fault in what "
                "made it)"
            )
        return value
    if isinstance(value, dict):
        return {k: _finite(v, f"{at}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, f"{at}[{i}]") for i, v in enumerate(value)]
    return value


# A recorded image reference: what ``json.dumps(..., ensure_ascii=False)`` writes, with one
# encoder made once rather than one per image (a run records every sample it asks).
_text_json = json.JSONEncoder(ensure_ascii=False).encode


def _companion(file: Path, suffix: str) -> Path:
    """One of the files SQLite keeps beside a database: ``-wal``, ``-shm``, ``-journal``."""
    return file.with_name(file.name + suffix)


def _tidy(file: Path) -> None:
    """Let SQLite remove the ``-wal`` and ``-shm`` files a read-only connection left.

    A read-only connection cannot remove them; a plain connection that reads and closes does,
    exactly as after a writer, and only when no other connection has the store open (then
    they are in use and stay). It writes nothing else: the log it empties is empty. Only an
    optimisation, so a failure leaves the files, which SQLite reuses.
    """
    try:
        conn = sqlite3.connect(file, timeout=0.1, isolation_level=None)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        log.debug("files beside %s left as they are: %s", file, exc)


def _process_start(pid: int) -> str | None:
    """When process `pid` started, in clock ticks since boot (Linux), or None where unknown.

    Recorded with the pid so a pid the system has since given to another process is not
    taken for the run's owner.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2, in parentheses) may hold spaces, so count from ')'.
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _owner_tag() -> str:
    """The owner tag of the current process: ``host:pid:start``."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid) or ''}"


def _owner_gone(owner: str) -> bool:
    """Whether the process an owner tag names has ended (False when it cannot be told)."""
    try:
        host, pid_text, start = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname():
        return False  # another machine's process: nothing here can tell whether it lives
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, under another user
    except OSError:
        return False
    # The pid is in use: by the owner only if it started when the owner did.
    now = _process_start(pid)
    return bool(start) and now is not None and now != start


def _stored_version(conn: sqlite3.Connection, path: Path) -> int | None:
    """The schema version a database records, or None for a new (empty) database.

    Raises:
        StoreVersionError: The database holds tables of ours but no version, or a version
            that is not a number: lmmprobe did not write it, or it is damaged.

    """
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        if tables.intersection(OUR_TABLES):
            raise StoreVersionError(
                f"{path} has tables named like lmmprobe's but no meta table with a schema "
                "version: it was not written by lmmprobe. Pass another --db file."
            )
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    try:
        return int(row[0])
    except (TypeError, ValueError):
        found = "none" if row is None else repr(row[0])
        raise StoreVersionError(
            f"{path}: the meta table records schema_version {found}, not a number: the file "
            "is damaged or was not written by lmmprobe. Pass another --db file."
        ) from None


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _reading(
    method: Callable[Concatenate[Store, _P], _R],
) -> Callable[Concatenate[Store, _P], _R]:
    """A read method whose SQLite errors (a damaged file) are one-line `StoreError` s."""

    def read(self: Store, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._faults("reading it"):
            return method(self, *args, **kwargs)

    return wraps(method)(read)  # type: ignore[return-value]


# Statuses that say a run did not finish; such a run has no results and is not "incomplete".
_UNFINISHED = frozenset(
    {
        "running",
        "failed",
        "interrupted",
        "incomplete",
        "judging_failed",
        "stopped_unreachable",
        "stopped_auth",
        "stopped_unhealthy",
    }
)
# APEx experiments are runs whose figures live in the campaign's report, never in the run row:
# finished without results is their normal state.
_NO_RESULTS_DATA_PREFIX = "apex:"


def check_out_dir(out_dir: Path) -> None:
    """Check that a run's output folder can be made and written, without creating it.

    Raises:
        StoreAccessError: The folder (or the nearest folder above it that exists) is not
            writable, or a file stands where a folder is needed; ``reason`` is ``out_dir``.

    """
    probe = out_dir
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    problem = None
    if not probe.is_dir():
        problem = f"{probe} is a file, not a folder. Pass another --out folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        problem = f"{probe} is read-only. Make it writable or pass another --out folder"
    elif probe == out_dir:
        # A FIFO there would hold the run's end forever (nothing reads it), a link to a
        # device would swallow the results (re-test 15 #9): refused before anything runs.
        for name in ("results.json", "results.md"):
            try:
                info = os.stat(out_dir / name)
            except OSError:  # not there (or a broken link): written as a new file
                continue
            if not stat.S_ISREG(info.st_mode) or kernel_file(info):
                problem = (
                    f"{out_dir / name} is {file_kind(info.st_mode, info)}, not a regular file. "
                    "Remove it or pass another --out folder"
                )
                break
    if problem:
        raise StoreAccessError(
            f"cannot write the run's results to {out_dir}: {problem} (nothing was run).",
            "out_dir",
        )


class Store:
    """A SQLite database of runs, responses and scores.

    Args:
        path: Database file; parent folders are created. Defaults to
            ``./lmmprobe-runs/lmmprobe.db``.
        timeout: Seconds to wait for another process's write lock before giving up with a
            `StoreAccessError`; default ``$LMMPROBE_DB_TIMEOUT`` or 30.
        read_only: Open the existing store for reading only (``show``, ``export``...): a
            store on read-only media or in a read-only folder can be read, and nothing is
            created or changed (see `_open_read_only` for the two exceptions an older
            layout and dead runs make, where the file can be written).
        may_write: With `read_only`, whether those two exceptions may write the file. False
            for a store the user did not name (one a run folder's results.json names, which
            may be another run's): an older layout is refused with the command that migrates
            it, and runs of dead processes are shown as stored.

    Raises:
        StoreVersionError: The store was written by another lmmprobe version, or not by
            lmmprobe.
        StoreDamagedError: The file is not a readable SQLite database.
        StoreAccessError: The folder or file cannot be created or written, or stays locked;
            with `read_only`, there is no store at `path`.

    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        timeout: float | None = None,
        read_only: bool = False,
        may_write: bool = True,
    ) -> None:
        self.path = Path(path) if path is not None else DEFAULT_DB
        self._may_write = may_write
        self.timeout = timeout_from_env() if timeout is None else timeout
        self.read_only = read_only
        self._tidy_on_close = False  # a read-only open made SQLite's -wal/-shm files
        self._checked = False  # integrity checked (before the first write)
        self._watch = Watch(self.path)  # (its file resolved below, for a writing store)
        self._owned: set[str] = set()  # runs this store created, released on close
        self._owner = _owner_tag()
        # Each spec as recorded (`recorded_spec`): worked out once per spec, not per row.
        self._recorded_specs: dict[str, str] = {}
        # Samples of runs recorded by `put_samples`, written with their first answers:
        # sample id → run id → the sample (encoded only when written).
        self._pending_samples: dict[str, dict[str, Sample]] = {}
        if self.path.is_dir():
            raise StoreAccessError(
                f"{self.path} is a folder, not a store file: pass --db with a file path "
                f"such as {self.path / DEFAULT_DB.name}.",
                "cannot_open",
            )
        if read_only:
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreAccessError(
                f"cannot create the folder {self.path.parent} for the store {self.path}: "
                f"{exc.strerror or exc}. Pass --db with a file in a writable folder.",
                "read_only" if isinstance(exc, PermissionError) else "cannot_open",
            ) from exc
        # The file itself, for connections opened later (a relative path could point elsewhere
        # once the working directory changes).
        self._file = self.path.resolve()
        # A file this store's code checked and closed cleanly, untouched since, needs no
        # integrity check before its first write (`store.seal`); asked before the connection
        # makes the write-ahead log.
        self._checked = is_sealed(self._file)
        # Its identity from here, and after each of this store's own writes: a change between
        # them is someone else's, and such a file is not sealed on close (re-test 15 #2).
        self._watch = Watch(self._file)
        if self._checked:
            self._watch.vouch()
        with self._faults("opening it"):
            self.conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            with self._faults("opening it"):
                self.conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL is durable against a killed process in WAL mode (only a power loss can
                # drop the last commits), and avoids an fsync per batch.
                self.conn.execute("PRAGMA synchronous=NORMAL")
                self._open_schema()
                self._settle_abandoned_runs()
        except BaseException:
            self.conn.close()
            raise

    def _open_read_only(self) -> None:
        """Open the existing store with a read-only connection (SQLite's ``mode=ro``).

        A store in WAL mode is read through its ``-shm`` index, which SQLite creates beside
        the file. Where the folder is read-only (read-only media, another user's folder) and
        no index exists, ``mode=ro`` cannot open it; the store is then opened ``immutable=1``
        (no index, no locks: SQLite reads the file as it is). That is correct only when no
        writer is at work, and none is without a ``-shm`` (a writer keeps one while it works),
        and when no change waits in a ``-wal`` (or ``-journal``) file, which an immutable read
        would ignore. So it is used only when there is no ``-shm`` and no such file holds
        anything; otherwise the store is refused with what to do. (Copying the store to a
        temporary file would also work, at the cost of a whole copy per command.)

        A store of an older layout is migrated, and runs of dead processes are marked, by a
        short writable open, as any open did before: both are writes the file needs once, and
        both are made only when needed and possible. Where the file cannot be written, an
        older layout is refused with what to do and dead runs keep their stored status.
        """
        if not self.path.is_file():
            raise StoreAccessError(
                f"no store at {self.path}: run an evaluation first "
                f"({command_for('run', self.path)}), or pass --db with the store it wrote.",
                "cannot_open",
            )
        self._file = self.path.resolve()
        self._checked = True  # never written through this connection
        # SQLite leaves the -wal and -shm files a read-only connection makes; made here, they
        # are tidied on close (see `close`).
        self._tidy_on_close = not any(_companion(self._file, s).exists() for s in ("-wal", "-shm"))
        with self._faults("opening it"):
            self.conn = self._connect(immutable=False)
        try:
            with self._faults("opening it"):
                try:
                    found = _stored_version(self.conn, self.path)
                except sqlite3.OperationalError as exc:
                    if primary_code(exc) not in (SQLITE_READONLY, SQLITE_CANTOPEN):
                        raise
                    self.conn.close()
                    self.conn = self._connect_immutable(exc)
                    found = _stored_version(self.conn, self.path)
                if found is None:
                    raise StoreVersionError(
                        f"{self.path} holds no lmmprobe tables: it is empty or was not written "
                        "by lmmprobe. Pass --db with the store `lmmprobe run` wrote."
                    )
                self._refuse_version(found)
                self._refuse_foreign_objects(self.conn)
                if found < SCHEMA_VERSION and not self._may_write:
                    raise StoreVersionError(
                        f"{self.path} is an lmmprobe store of schema version {found}, which this "
                        f"lmmprobe reads once it has migrated it to version {SCHEMA_VERSION}; it "
                        "is not migrated unasked, as it may be another run's store: "
                        f"{command_for('runs', self.path)} migrates it"
                    )
                if found < SCHEMA_VERSION:
                    self._migrate_with_a_writer(found)
                if self._may_write and self._abandoned_runs():
                    try:
                        Store(self.path, timeout=self.timeout).close()
                    except StoreError as exc:  # read-only, busy or damaged: shown as stored
                        log.debug(
                            "runs of dead processes in %s left as they are: %s", self.path, exc
                        )
        except BaseException:
            self.conn.close()
            if self._tidy_on_close:
                _tidy(self._file)
            raise

    def _connect(self, *, immutable: bool) -> sqlite3.Connection:
        """A read-only connection to the store file (``mode=ro``, or also ``immutable=1``)."""
        flags = "mode=ro&immutable=1" if immutable else "mode=ro"
        # The name's bytes, quoted: a file name that is not UTF-8 opens as well.
        uri = f"file:{quote(os.fsencode(self._file))}?{flags}"
        return sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)

    def _connect_immutable(self, exc: sqlite3.Error) -> sqlite3.Connection:
        """The immutable connection `_open_read_only` falls back on, when that is correct.

        Raises:
            StoreAccessError: A ``-shm`` file (a writer may be at work), or a ``-wal`` or
                ``-journal`` file holding changes an immutable read would miss, is beside the
                store (``reason`` ``read_only``).

        """
        for suffix in ("-shm", "-wal", "-journal"):
            beside = _companion(self._file, suffix)
            if not beside.exists() or (suffix != "-shm" and beside.stat().st_size == 0):
                continue
            what = "may be in use" if suffix == "-shm" else "holds changes not yet in the file"
            raise StoreAccessError(
                f"{self.path} cannot be read here: {beside.name} beside it {what}, and SQLite "
                f"reads such a store only with write access to the folder {self.path.parent} "
                f"({exc}). Make the folder writable, or copy the store with the files beside it "
                "to a writable folder and pass --db with the copy.",
                "read_only",
            ) from exc
        self._tidy_on_close = False  # an immutable read makes no files
        return self._connect(immutable=True)

    def _migrate_with_a_writer(self, found: int) -> None:
        """Migrate an older store through a writable open (read-only `Store` only)."""
        try:
            Store(self.path, timeout=self.timeout).close()
        except StoreAccessError as exc:
            if exc.reason not in ("read_only", "cannot_open"):
                raise
            raise StoreAccessError(
                f"{self.path} is an lmmprobe store of schema version {found}, which this lmmprobe "
                f"reads once it has migrated it to version {SCHEMA_VERSION}; that writes to the "
                "file, which cannot be written here. Copy the store to a writable folder and "
                "pass --db with the copy.",
                "read_only",
            ) from exc

    @contextmanager
    def _faults(self, doing: str) -> Iterator[None]:
        """Raise SQLite errors met inside as one-line `StoreError` s (see `_fault`)."""
        try:
            yield
        except sqlite3.Error as exc:
            if not is_fault(exc):
                raise
            raise fault(exc, self.path, doing, self.timeout) from exc

    def check_integrity(self) -> None:
        """Run SQLite's ``PRAGMA quick_check`` on the file.

        Done once before a store's first write, so a damaged file is reported before
        anything is added to it; skipped there for a file this code checked and closed
        cleanly and nothing has touched since (`lmmprobe.store.seal`).

        Raises:
            StoreDamagedError: The check found damage (the file is left as it is).

        """
        with self._faults("checking its integrity"):
            rows = self.conn.execute("PRAGMA quick_check").fetchall()
        # SQLite may report many problems in one row, one a line, under a "*** in database
        # main ***" heading: the message names the first and counts the others.
        reported = [str(r[0]) for r in rows if r and r[0] != "ok"]
        problems = [
            line.strip()
            for text in reported
            for line in text.splitlines()
            if line.strip() and not line.startswith("***")
        ] or [" ".join(text.split()) for text in reported]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            first = problems[0][:200]
            raise StoreDamagedError(
                f"{self.path} is damaged: SQLite's integrity check reports {first!r}{more}. "
                f"lmmprobe has left it as it is: move it aside (`sqlite3 {self.path} .recover` "
                "may save its rows) and pass another --db file."
            )
        self._checked = True
        if not self.read_only:
            self._watch.vouch()

    def _open_schema(self) -> None:
        """Create the tables in a new database; check (and migrate) an existing one's version.

        Raises:
            StoreVersionError: The store is newer than this lmmprobe, has no migration path,
                or is a database lmmprobe did not write.

        """
        self._refuse_foreign_objects(self.conn)
        if _stored_version(self.conn, self.path) == SCHEMA_VERSION:
            return  # the usual case, settled without taking the write lock
        with self.transaction(doing="creating or migrating its tables") as c:  # one at a time
            # Read again under the lock: another process may have created or migrated it.
            found = _stored_version(c, self.path)
            if found is None:
                # One by one: executescript commits first.
                for statement in (*DDL, *DDL_5, *DDL_7, *DDL_9, *DDL_10, *DDL_12, *DDL_13, *DDL_14):
                    c.execute(statement)
                c.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                return
            self._refuse_version(found)
            while found < SCHEMA_VERSION:
                MIGRATIONS[found](c)
                found += 1
                c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(found),))
                log.info("migrated %s to store schema version %d", self.path, found)

    def _refuse_foreign_objects(self, conn: sqlite3.Connection) -> None:
        """Refuse a store holding triggers, views, tables or indexes lmmprobe did not create.

        A trigger runs on lmmprobe's own writes (one can rewrite a new run's scores), and a
        view in place of a table is read as the table (an endless one hangs every command), so
        the store is refused before anything is read or written, naming the first such object.

        Raises:
            StoreVersionError: With the file, the object and what to do.

        """
        found = foreign_objects(conn)
        if not found:
            return
        kind, name = found[0]
        shown = name if len(name) <= 60 else name[:60] + "..."
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise StoreVersionError(
            f"{self.path} holds a {kind} {shown!r}{more} that lmmprobe did not create: it was "
            "added by hand or by another program, and lmmprobe would read it or run it as its "
            f"own. Remove it (`sqlite3 {self.path} .schema` lists every object) or pass another "
            "--db file."
        )

    def _refuse_version(self, found: int) -> None:
        """Refuse a store this lmmprobe cannot read: newer, or older than any migration.

        Raises:
            StoreVersionError: With the file, both versions and what to do.

        """
        if found > SCHEMA_VERSION:
            raise StoreVersionError(
                f"{self.path} is an lmmprobe store of schema version {found}, written by a "
                f"newer lmmprobe; this one reads version {SCHEMA_VERSION} and older. Upgrade "
                "lmmprobe (pip install -U lmmprobe) to use it, or pass another --db file."
            )
        if any(step not in MIGRATIONS for step in range(found, SCHEMA_VERSION)):
            raise StoreVersionError(
                f"{self.path} is an lmmprobe store of schema version {found}, which this "
                f"lmmprobe (version {SCHEMA_VERSION}) cannot migrate; pass another --db "
                "file to start a new store."
            )

    def _abandoned_runs(self) -> list[tuple[str, float, str, str]]:
        """Runs whose owner process has died, as ``(new status, now, id, owner)`` rows."""
        rows = self.conn.execute(
            "SELECT id, status, owner, results IS NULL, json_extract(spec, '$.data') FROM runs "
            "WHERE owner IS NOT NULL"
        ).fetchall()
        settle = []
        for run_id, status, owner, no_results, data in rows:
            if owner == self._owner or not _owner_gone(owner):
                continue
            expects_results = not str(data or "").startswith(_NO_RESULTS_DATA_PREFIX)
            if status == "running":
                new = "interrupted"
            elif no_results and expects_results and status not in _UNFINISHED:
                new = "incomplete"
            else:
                new = status
            settle.append((new, time.time(), run_id, owner))
        return settle

    def _settle_abandoned_runs(self) -> None:
        """Mark runs whose owner process has died for what they are.

        A run still ``running`` becomes ``interrupted``; one whose status says it finished but
        whose results were never written (killed in between) becomes ``incomplete``. Either
        resumes from its stored responses when run again. Runs of live processes, of other
        machines and of stores older than schema version 4 (no owner) are left alone. Done
        only when there is something to mark, and given up when another process holds the
        write lock (the next open tries again).
        """
        settle = self._abandoned_runs()
        if not settle:
            return
        try:
            with self._lock_wait(0.0), self.transaction(doing="marking abandoned runs") as c:
                # Matched on the owner too: another process may have settled a row meanwhile.
                c.executemany(
                    "UPDATE runs SET status = ?, updated_at = ?, owner = NULL "
                    "WHERE id = ? AND owner = ?",
                    settle,
                )
        except StoreAccessError as exc:  # busy or read-only: leave them for another open
            log.debug("runs of dead processes in %s left as they are: %s", self.path, exc)
            return
        for new, _, run_id, _ in settle:
            log.info("run %s of a process that has ended: marked %s", run_id, new)

    @contextmanager
    def _lock_wait(self, seconds: float) -> Iterator[None]:
        """Wait at most `seconds` for the write lock inside (the store's timeout after)."""
        self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def close(self) -> None:
        """Release the runs this store created and close (a run left ``running``: ``interrupted``).

        Releasing is best-effort: when the store cannot be written (disk full, locked) the
        runs keep their owner, and a later open judges them by their status and results.
        """
        if self._owned:
            try:
                with (
                    self._lock_wait(min(self.timeout, 2.0)),
                    self.transaction(doing="releasing its runs") as c,
                ):
                    # A run still "running" when its store closes is not going on any more.
                    c.executemany(
                        "UPDATE runs SET owner = NULL, status = CASE status WHEN 'running' "
                        "THEN 'interrupted' ELSE status END WHERE id = ? AND owner = ?",
                        [(run_id, self._owner) for run_id in sorted(self._owned)],
                    )
                self._owned.clear()
            except (StoreError, sqlite3.Error) as exc:
                log.debug("runs in %s keep their owner: %s", self.path, exc)
        if self._tidy_on_close or self.read_only:
            self.conn.close()
        else:
            with self._watch.own():  # the close moves the log into the file
                self.conn.close()
        if self._tidy_on_close:
            _tidy(self._file)
        elif not self.read_only and self._checked:
            # Checked (or found sealed) and, since, written by this store's SQLite only.
            seal(self._file, self._watch.vouched)

    def __enter__(self) -> Store:
        return self

    @contextmanager
    def checkpoint_in_background(self) -> Iterator[None]:
        """Move the write-ahead log into the database while the caller does other work.

        SQLite copies the log into the database when its last connection closes; after a
        run's writes that copy is a sizeable part of a cached re-run. Done here, in a thread
        with its own connection (SQLite releases the GIL while it copies), it overlaps work
        such as computing metrics, and closing later finds little left. The context waits
        for the copy on exit; it is only an optimisation, so a failure (the database busy,
        say) leaves the log for closing to handle.
        """

        def checkpoint() -> None:
            try:
                conn = sqlite3.connect(self._file, timeout=0.5, isolation_level=None)
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                log.debug("background checkpoint of %s skipped: %s", self.path, exc)

        worker = threading.Thread(target=checkpoint, name="lmmprobe-checkpoint", daemon=True)
        with self._watch.own_in_background():
            worker.start()
            try:
                yield
            finally:
                worker.join()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def recorded_spec(self, spec: str) -> str:
        """`spec` as this store records it: its secrets redacted (`redact_spec`).

        Every row a model, judge or arena judge writes names its spec, and redaction reads the
        whole spec: it is worked out once per spec for this store (a run names a handful),
        so a row costs a lookup. The result is `redact_spec`'s, whatever its rule.
        """
        label = self._recorded_specs.get(spec)
        if label is None:
            if len(self._recorded_specs) >= _RECORDED_SPECS_KEPT:
                self._recorded_specs.clear()  # a long-lived store (serve) asked by many judges
            label = self._recorded_specs[spec] = redact_spec(spec)
        return label

    @contextmanager
    def transaction(self, doing: str = "writing to it") -> Iterator[sqlite3.Connection]:
        """A write transaction, committed on success and rolled back on error.

        The store's first write is preceded by an integrity check (`check_integrity`), unless
        the file is sealed (`lmmprobe.store.seal`).

        Args:
            doing: What the transaction does, for error messages ("storing responses").

        Raises:
            StoreError: An SQLite error inside, as a one-line message (locked, disk full,
                read-only, damaged); nothing the transaction wrote is kept.

        """
        if self.read_only:
            raise StoreAccessError(
                f"{self.path} was opened read-only, so it cannot be written (while {doing}): "
                "open it with Store(path) to write.",
                "read_only",
            )
        if not self._checked:
            self.check_integrity()
        with self._watch.own():  # a commit may move the log into the file
            with self._faults(doing):
                self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException as exc:
                # SQLite may have rolled back already (a full disk does that).
                if self.conn.in_transaction:
                    try:
                        self.conn.execute("ROLLBACK")
                    except sqlite3.Error as rollback_exc:
                        log.debug("rollback on %s failed: %s", self.path, rollback_exc)
                if isinstance(exc, sqlite3.Error) and is_fault(exc):
                    raise fault(exc, self.path, doing, self.timeout) from exc
                raise

    # -- runs -----------------------------------------------------------------------------

    def create_run(self, run_id: str, spec: dict[str, Any], out_dir: str) -> None:
        """Record a new run as ``running``, owned by this process until the store is closed.

        The spec is recorded with its secrets redacted (`redact_record`), as every run record,
        model and judge spec this store writes: a secret in a spec that was not refused (a
        password in a server's URL) still never reaches the file.

        Raises:
            StoreAccessError: `out_dir`, where the run's files will be written, cannot be
                written (checked now, so a run does not spend its time and then fail), or the
                store cannot be written.

        """
        check_out_dir(Path(out_dir))
        now = time.time()
        recorded = json.dumps(redact_record(spec))
        with self.transaction(doing=f"recording run {run_id}") as c:
            c.execute(
                "INSERT INTO runs (id, created_at, updated_at, status, spec, out_dir, owner) "
                "VALUES (?,?,?,?,?,?,?)",
                (run_id, now, now, "running", recorded, out_dir, self._owner),
            )
        self._owned.add(run_id)

    def update_run(
        self,
        run_id: str,
        *,
        status: str | None = None,
        manifest: dict[str, Any] | None = None,
        results: dict[str, Any] | None = None,
    ) -> None:
        """Update a run's status, manifest or results (their secrets redacted, `redact_record`)."""
        sets: list[str] = ["updated_at = ?"]
        args: list[object] = [time.time()]
        for col, val in (("status", status), ("manifest", manifest), ("results", results)):
            if val is not None:
                sets.append(f"{col} = ?")
                args.append(val if isinstance(val, str) else json.dumps(redact_record(val)))
        with self.transaction(doing=f"updating run {run_id}") as c:
            c.execute(f"UPDATE runs SET {', '.join(sets)} WHERE id = ?", (*args, run_id))
        if status is not None and status != "running":
            # A finished or failed run asks nothing more: its samples never asked are not
            # recorded, and are not kept for a later write under this run's id.
            self._forget_samples(None, run_id)

    def reuse_identical_run(
        self,
        run_id: str,
        spec: dict[str, Any],
        manifest: dict[str, Any],
        models: Sequence[str],
        *,
        rows: int | None,
    ) -> Reused | None:
        """Give run `run_id` the sample and score rows of an identical earlier run, if one is here.

        The rule of what must match is `lmmprobe.store.reuse`'s; the search, its checks and
        the copy are one transaction. Nothing is written when no run fits.

        Args:
            run_id: The new run, recorded (`create_run`) with nothing stored under it yet.
            spec: Its spec (``RunSpec.model_dump(mode="json")``).
            manifest: Its manifest, as `update_run` will record it.
            models: Its model specs, in order.
            rows: The score rows each model of it has (`lmmprobe.run.runner.planned_rows`):
                an earlier run holding other counts (a damaged store) is not copied; None
                (not known without reading the data again) copies nothing.

        Returns:
            The earlier run, its answers' totals (what a re-run counts) per model spec as
            given; None when no earlier run fits (then nothing was copied).

        """
        labels = {self.recorded_spec(m): m for m in models}
        if rows is None:
            return None
        with self.transaction(doing=f"reusing an identical run's rows for run {run_id}") as c:
            found = find_identical_run(
                c,
                run_id,
                recorded_form(redact_record(spec)),
                recorded_form(redact_record(manifest)),
                list(labels),
                rows,
            )
            if found is None:
                return None
            copy_run_rows(c, found.source, run_id)
        found.totals = {labels[label]: t for label, t in found.totals.items()}
        return found

    def mark_rows_scored(
        self, run_id: str, status: str, manifest: dict[str, Any], *, at: float | None = None
    ) -> float:
        """Record that run `run_id`'s rows are all scored and stored: its status and manifest.

        The manifest gains `lmmprobe.store.reuse.ROWS_SCORED_AT`, the time taken inside this
        transaction's write lock (or `at`: a copy's source's time), so that an answer any writer
        commits after it has a later write time (`put_responses` takes its time inside the lock
        too). `manifest` is the caller's dict, updated in place, so later writes of it (the
        judging step's) keep the time.

        Returns:
            The time recorded.

        """
        with self.transaction(doing=f"updating run {run_id}") as c:
            now = time.time()
            manifest[ROWS_SCORED_AT] = now if at is None else at
            c.execute(
                "UPDATE runs SET updated_at = ?, status = ?, manifest = ? WHERE id = ?",
                (now, status, json.dumps(redact_record(manifest)), run_id),
            )
        if status != "running":
            self._forget_samples(None, run_id)  # as `update_run` does for a finished run
        return float(manifest[ROWS_SCORED_AT])

    @_reading
    def resolve_run(self, ref: str) -> str:
        """Turn ``latest``, a full run id or a unique id prefix into a run id.

        A run's folder (or its ``results.json``/``results.md``), as `lmmprobe run` prints it
        (``results: lmmprobe-runs/RUN_ID/results.json``), names that run too: by the folder's
        name when it is a run id, else by the folder a run of this store wrote (``--out``).

        Raises:
            KeyError: No run matches, or a prefix matches several.

        """
        if ref == "latest":
            row = self.conn.execute(
                "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise KeyError(
                    f"no runs in {self.path} (start one with {command_for('run', self.path)})"
                )
            return str(row[0])
        rows = self.conn.execute(
            # substr, not LIKE: "_" and "%" in a run id are literal characters.
            "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY created_at",
            (len(ref), ref),
        ).fetchall()
        ids = [r[0] for r in rows]
        if ref in ids:
            return ref
        if len(ids) == 1:
            return str(ids[0])
        if not ids:
            by_folder = self._run_of_folder(ref)
            if by_folder is not None:
                return by_folder
            raise KeyError(
                f"no run {ref!r} in {self.path} ({command_for('runs', self.path)} lists them)"
            )
        raise KeyError(f"run prefix {ref!r} is ambiguous: {', '.join(ids[:5])}")

    def _run_of_folder(self, ref: str) -> str | None:
        """The run whose folder (or results file) `ref` names, or None.

        A new user copies the path a run printed; it was "no run 'lmmprobe-runs/RUN_ID'".
        Only a ref holding a path separator is looked at (a run id holds none), and only as
        text: no file is read.
        """
        if "/" not in ref and os.sep not in ref:
            return None
        folder = Path(ref)
        if folder.name in ("results.json", "results.md"):
            folder = folder.parent
        row = self.conn.execute("SELECT id FROM runs WHERE id = ?", (folder.name,)).fetchone()
        if row is not None:
            return str(row[0])
        try:
            wanted = os.path.abspath(folder)
            # The newest run that wrote there: what the folder holds (a later run replaces it).
            for run_id, out_dir in self.conn.execute(
                "SELECT id, out_dir FROM runs WHERE out_dir IS NOT NULL ORDER BY created_at DESC"
            ):
                if isinstance(out_dir, str) and os.path.abspath(out_dir) == wanted:
                    return str(run_id)
        except (OSError, ValueError):  # a path the system cannot take (a NUL, too long)
            return None
        return None

    @_reading
    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run's row with spec, manifest and results decoded (None where a column is empty).

        Raises:
            KeyError: The store holds no such run.
            StoreDamagedError: A JSON column of the run does not hold a JSON object.

        """
        run = read_run(self.conn, run_id)
        if run is None:
            raise KeyError(f"no run {run_id!r} in {self.path}")
        if run.damaged:
            raise StoreDamagedError(
                f"{self.path}: run {run_id}'s {' and '.join(run.damaged)} column does not hold "
                "a JSON object (damaged, or edited by hand); re-run it, or pass another --db"
            )
        return {
            "id": run.id,
            "created_at": run.created_at,
            "updated_at": run.updated_at,
            "status": run.status,
            "spec": run.spec or None,
            "manifest": run.manifest or None,
            "results": run.results or None,
            "out_dir": run.out_dir,
        }

    @_reading
    def list_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent runs (id, created_at, status), newest first.

        `lmmprobe.store.runs.read_runs` gives the whole rows, decoded.
        """
        return [
            {"id": r.id, "created_at": r.created_at, "status": r.status}
            for r in read_runs(self.conn, limit)
        ]

    def has_image_checks(self) -> bool:
        """Whether the store remembers any checked image file (`put_image_checks`)."""
        return self.conn.execute("SELECT 1 FROM image_checks LIMIT 1").fetchone() is not None

    def image_checks_from(self, path: str, limit: int) -> list[tuple[str, int, int, int, int, str]]:
        """The first `limit` image checks remembered for paths from `path` on, in path order.

        One read serves the loader's next files (a dataset names them mostly in order): every
        path from `path` up to the last one returned is remembered only if it is among them.

        Returns:
            (path, size, ctime_ns, width, height, content hash) rows, as `put_image_checks`
            wrote them.

        """
        rows = self.conn.execute(
            "SELECT path, size, ctime_ns, width, height, content_hash FROM image_checks "
            "WHERE path >= ? ORDER BY path LIMIT ?",
            (path, limit),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def put_image_checks(self, rows: Sequence[tuple[str, int, int, int, int, str]]) -> None:
        """Remember image files found readable: (path, size, ctime_ns, width, height, hash).

        A path remembered before is replaced (its file changed since).
        """
        if not rows:
            return
        with self.transaction(doing="remembering the checked images") as c:
            c.executemany("INSERT OR REPLACE INTO image_checks VALUES (?, ?, ?, ?, ?, ?)", rows)

    def has_load_checks(self) -> bool:
        """Whether the store remembers any first read of a data file (`put_load_check`)."""
        return self.conn.execute("SELECT 1 FROM load_checks LIMIT 1").fetchone() is not None

    def load_check(self, source: str, content: str) -> tuple[str, bytes] | None:
        """The first read remembered for `source` (a hash) when its `content` hash is this one.

        Returns:
            Its summary (JSON text) and image checks (zlib-compressed JSON), as
            `put_load_check` wrote them; None when none is remembered for these bytes.

        """
        row = self.conn.execute(
            "SELECT summary, images FROM load_checks WHERE source = ? AND content = ?",
            (source, content),
        ).fetchone()
        return None if row is None else (str(row[0]), bytes(row[1]))

    def put_load_check(self, source: str, content: str, summary: str, images: bytes) -> None:
        """Remember a first read of a data file, replacing the one remembered for `source`.

        One read is kept per source (data spec and settings): a file read again after it
        changed replaces its earlier read, so the table holds no more rows than sources read.
        """
        with self.transaction(doing="remembering the data's first read") as c:
            c.execute(
                "INSERT OR REPLACE INTO load_checks VALUES (?, ?, ?, ?, ?)",
                (source, content, time.time(), summary, images),
            )

    def put_samples(self, run_id: str, samples: Sequence[Sample]) -> None:
        """Record the samples a run asks, as the run sees them.

        Each sample is kept as its JSON (its question also in a column of its own) with its
        images as references a viewer can serve later: a file path made absolute (a relative
        one would point elsewhere from another working directory) with the SHA-256 of the
        content its requests' keys hashed (``sha256``: a viewer refuses a file changed since
        the run), a recipe as the source gave
        it, and base64 data or an in-memory picture (as PNG, encoded once per content) as bytes
        in the ``images`` table, referenced by content hash.

        A sample is written in the transaction of the first batch of responses that asks it
        (`put_responses`), or with the run's scores (`put_scores`) when every answer came from
        the store. So recording costs no transaction of its own, a run writes nothing before
        its first answers, and a sample is on record exactly when something of it is; the
        samples of a run stopped early that were never asked are not recorded (they are
        forgotten when `update_run` gives the run a final status).
        """
        for sample in samples:
            self._pending_samples.setdefault(sample.id, {})[run_id] = sample

    def _write_samples(
        self, c: sqlite3.Connection, sample_ids: Iterable[str] | None, run_id: str | None = None
    ) -> None:
        """Write (inside transaction `c`) the pending samples of these ids, or of `run_id`."""
        pending: list[tuple[str, Sample]] = []
        if sample_ids is not None:
            for sid in dict.fromkeys(sample_ids):
                pending += list(self._pending_samples.get(sid, {}).items())
        else:
            for runs in self._pending_samples.values():
                if run_id in runs:
                    pending.append((str(run_id), runs[str(run_id)]))
        rows = [
            (
                run, sample.id, sample.question, recorded_sample_json(sample, c),
                _shared_metadata_json(sample),
            )
            for run, sample in pending
        ]  # fmt: skip
        if rows:
            # A sample recorded again (a resumed run) is replaced, but the metadata its rows
            # share is kept as first written: rows stored since read their metadata from it.
            c.executemany(
                "INSERT INTO samples (run_id, sample_id, question, sample, row_metadata) "
                "VALUES (?,?,?,?,?) ON CONFLICT (run_id, sample_id) DO UPDATE SET "
                "question = excluded.question, sample = excluded.sample, "
                "row_metadata = coalesce(samples.row_metadata, excluded.row_metadata)",
                rows,
            )

    def _forget_samples(self, sample_ids: Iterable[str] | None, run_id: str | None = None) -> None:
        """Drop written samples from the pending ones (after their transaction committed)."""
        if sample_ids is not None:
            for sid in set(sample_ids):
                self._pending_samples.pop(sid, None)
            return
        for sid in [sid for sid, runs in self._pending_samples.items() if run_id in runs]:
            runs = self._pending_samples[sid]
            runs.pop(str(run_id))
            if not runs:
                del self._pending_samples[sid]

    # -- responses ------------------------------------------------------------------------

    def put_responses(
        self, model: str, requests: Sequence[Request], responses: Sequence[Response]
    ) -> None:
        """Store one batch of responses in one transaction (error rows included).

        A success replaces any stored row for its key; an error never replaces a success.
        Their write time is taken inside the transaction's write lock: a batch committed after
        a run marked its rows scored (`mark_rows_scored`) has a later time than that mark,
        whichever process took its time first (`lmmprobe.store.reuse`).
        """
        label = self.recorded_spec(model)
        rows: list[tuple[Any, ...]] = []
        for req, resp in zip(requests, responses, strict=True):
            err = resp.error
            # The schemas validate usage and repair text where it enters; a response built
            # without validation (``model_construct``, ``model_copy(update=...)``) is repaired
            # here too, so one broken answer cannot fail its whole batch.
            usage = Usage.model_validate(resp.usage.model_dump()) if resp.usage else _NO_USAGE
            text, reasoning, finish = _reply(resp.text), _reply(resp.reasoning), resp.finish_reason
            if max(len(resp.text or ""), len(resp.reasoning or "")) > MAX_STORED_TEXT:
                finish = "length"  # cut as a backend cuts a longer reply (`MAX_STORED_TEXT`)
            rows.append(
                (
                    resp.key, label, req.method, _text(req.prompt), text,
                    _dumps(resp.loglikelihoods), _dumps(resp.token_counts), resp.latency_s,
                    usage.prompt_tokens, usage.completion_tokens,
                    err.type if err else None, _reply(err.message) if err else None,
                    (int(err.retryable) if err else None), None, int(resp.redacted),
                    reasoning, _text(finish), usage.reasoning_tokens,
                )
            )  # fmt: skip
        asked = [req.sample_id for req in requests]
        with self.transaction(doing=f"storing responses of {model}") as c:
            now = time.time()
            rows = [(*row[:13], now, *row[14:]) for row in rows]
            self._write_samples(c, asked)
            c.executemany(
                f"""INSERT INTO responses ({_RESPONSE_WRITE}) VALUES ({_RESPONSE_MARKS})
                ON CONFLICT(key) DO UPDATE SET
                    model=excluded.model, method=excluded.method, prompt=excluded.prompt,
                    text=excluded.text, loglikelihoods=excluded.loglikelihoods,
                    token_counts=excluded.token_counts, latency_s=excluded.latency_s,
                    prompt_tokens=excluded.prompt_tokens, completion_tokens=excluded.completion_tokens,
                    error_type=excluded.error_type, error_message=excluded.error_message,
                    error_retryable=excluded.error_retryable, created_at=excluded.created_at,
                    redacted=excluded.redacted, reasoning=excluded.reasoning,
                    finish_reason=excluded.finish_reason, reasoning_tokens=excluded.reasoning_tokens
                WHERE excluded.error_type IS NULL OR responses.error_type IS NOT NULL""",
                rows,
            )
        self._forget_samples(asked)

    @_reading
    def get_responses(
        self, keys: Iterable[str], *, include_errors: bool = False
    ) -> dict[str, Response]:
        """Stored responses for these keys; by default only successes (errors are retried)."""
        keys = list(keys)
        ok = "" if include_errors else " AND error_type IS NULL"
        out: dict[str, Response] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            rows = self.conn.execute(
                f"SELECT {_RESPONSE_READ} FROM responses "
                f"WHERE key IN ({','.join('?' * len(chunk))}){ok}",
                chunk,
            )
            for row in rows:
                if row[-1] is not None:  # measured in SQL: the text itself never came here
                    raise StoreDamagedError(
                        past_cap(f"{self.path}: the stored response {row[0]}", row[-1])
                    )
                out[row[0]] = _response_from_row(row, str(self.path))
        return out

    @_reading
    def count_responses(self) -> int:
        """Number of stored responses (successes and errors)."""
        return int(self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # -- scores ---------------------------------------------------------------------------

    def put_scores(self, run_id: str, scores: Sequence[Score]) -> None:
        """Store a run's scores, replacing any earlier scoring of the same rows.

        A row's metadata is stored as what it adds to the metadata its recorded sample's rows
        share (`lmmprobe.store.layout.metadata_part`), whole where the run recorded no sample.
        """
        marks = ",".join("?" * len(_SCORE_COLUMNS))
        with self.transaction(doing=f"storing scores of run {run_id}") as c:
            self._write_samples(c, None, run_id)  # those every answer of came from the store
            shared = _shared_metadata(c, run_id, [s.sample_id for s in scores])
            rows = []
            for score in scores:
                row = _score_values(run_id, self.recorded_spec(score.model), score)
                part = metadata_part(shared.get(score.sample_id), row[_METADATA_AT])
                rows.append((*row[:_METADATA_AT], part, *row[_METADATA_AT + 1 :]))
            c.executemany(
                f"INSERT OR REPLACE INTO scores ({', '.join(_SCORE_COLUMNS)}) VALUES ({marks})",
                rows,
            )
        self._forget_samples(None, run_id)

    def iter_score_rows(
        self,
        run_id: str,
        *,
        model: str | None = None,
        sample_ids: Sequence[str] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Scores of a run joined with their responses, one dict per row (for exports).

        A row an answer's judges (or a judge protocol's rules) decided carries its verdicts
        under ``judgements`` (a list of `Judgement` dicts); other rows have no such key.
        With `model`, only that model's rows; with `sample_ids`, only those samples' rows
        (a chunk of the run's samples, as the judging step reads them).

        Streamed: the rows are read `_CHUNK` at a time and each chunk's verdicts with one
        query keyed by its rows' own (model, sample id) values, so a judged run of millions
        of rows never holds more than a chunk's verdicts (nor every model's, with `model`).
        """
        with self._faults("reading it"):
            rows = self._score_rows(run_id, model, sample_ids)
            judged = self.conn.execute(
                "SELECT 1 FROM judgements WHERE run_id = ? LIMIT 1", (run_id,)
            ).fetchone()
            if judged is None:
                yield from rows
                return
            while chunk := list(islice(rows, _CHUNK)):
                found = self._chunk_judgements(run_id, chunk)
                for rec in chunk:
                    verdicts = found.get((rec["model"], rec["sample_id"], rec["repeat"]))
                    if verdicts:
                        rec["judgements"] = [j.model_dump() for j in verdicts]
                    yield rec

    def _chunk_judgements(
        self, run_id: str, chunk: Sequence[dict[str, Any]]
    ) -> dict[tuple[str, Any, int], list[Judgement]]:
        """The stored verdicts of a chunk of `_score_rows`, by (model, sample id, repeat).

        Looked up by equality on the rows' own values (never compared for order in Python),
        so a row finds exactly the verdicts the whole-run `get_judgements` gives it, in the
        same order; a sample's verdicts on repeats outside the chunk are read and left.
        """
        ids: dict[str, dict[Any, None]] = {}
        for rec in chunk:
            ids.setdefault(rec["model"], {})[rec["sample_id"]] = None
        out: dict[tuple[str, Any, int], list[Judgement]] = {}
        for model, sample_ids in ids.items():
            marks = ",".join("?" * len(sample_ids))
            rows = self.conn.execute(
                f"SELECT {_JUDGEMENT_COLUMNS} FROM judgements WHERE run_id = ? AND model = ? "
                f"AND sample_id IN ({marks}) ORDER BY {_JUDGEMENT_ORDER}",
                (run_id, model, *sample_ids),
            )
            for row in rows:
                out.setdefault((row[0], row[1], row[2]), []).append(
                    _judgement_from_row(row, f"{self.path}: run {run_id}")
                )
        return out

    def row_chunks(
        self, run_id: str, model: str, keys: Sequence[str] = (), chunk_rows: int | None = None
    ) -> Iterator[RowChunk]:
        """Model `model`'s rows of run `run_id` as columns, in chunks (`store.rows.read_chunks`).

        Args:
            run_id: The run.
            model: The model spec.
            keys: Metadata keys each chunk carries besides the ones every chunk has (``--by``).
            chunk_rows: Rows per chunk; `lmmprobe.schema.rows.CHUNK_ROWS` when None.

        """
        with self._faults("reading it"):
            yield from read_chunks(self.conn, run_id, model, keys, chunk_rows)

    def model_scores(self, run_id: str, model: str) -> list[Score]:
        """Model `model`'s rows of run `run_id` as Scores, in stored row order."""
        return list(self.iter_model_scores(run_id, model))

    def iter_model_scores(self, run_id: str, model: str) -> Iterator[Score]:
        """`model_scores` one Score at a time: a pass that reduces them never holds the run."""
        for rec in self.iter_score_rows(run_id, model=model):
            yield score_from_row(rec)

    def rows(self, run_id: str, model: str) -> StoredRows:
        """The `RowSource` of model `model`'s rows of run `run_id` (read on each pass)."""
        return StoredRows(self, run_id, model)

    @_reading
    def run_models(self, run_id: str) -> list[str]:
        """The models with score rows in run `run_id`, in the order the rows sort."""
        rows = self.conn.execute(
            "SELECT DISTINCT model FROM scores WHERE run_id = ? ORDER BY model", (run_id,)
        )
        return [str(m) for (m,) in rows]

    # -- judgements -----------------------------------------------------------------------

    def put_judgements(
        self, run_id: str, model: str, rows: Sequence[tuple[str, int, Judgement]]
    ) -> None:
        """Store verdicts on answers of `model` in run `run_id`, in one transaction.

        Each row is (sample id, repeat, judgement); a verdict replaces the stored one of the
        same judge, protocol, version and attempt (a judge asked again on resume). Its reading
        and reason are cut at `MAX_STORED_TEXT` characters (a reason can quote a server's
        error message), as every free text lmmprobe stores is.
        """
        now = time.time()
        label = self.recorded_spec(model)
        values = [
            (
                run_id, label, sid, repeat, self.recorded_spec(j.judge or ""), j.protocol, j.version, j.attempt,
                j.decided_by, j.key, j.value, _reply(j.reading), json.dumps(j.detail), _reply(j.reason), now,
            )
            for sid, repeat, j in rows
        ]  # fmt: skip
        with self.transaction(doing=f"storing judgements of run {run_id}") as c:
            c.executemany(
                "INSERT OR REPLACE INTO judgements (run_id, model, sample_id, repeat, judge, "
                "protocol, version, attempt, decided_by, key, value, reading, detail, reason, "
                "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                values,
            )

    @_reading
    def get_judgements(self, run_id: str) -> dict[tuple[str, int | str, int], list[Judgement]]:
        """Stored verdicts of a run by (model, sample id, repeat), judge by judge.

        The verdicts of one answer come in the order (protocol, version, judge, attempt), a
        rule's (judge '') before any judge's. Every verdict of the run at once: the rows'
        readers stream theirs (`iter_score_rows`).
        """
        out: dict[tuple[str, Any, int], list[Judgement]] = {}
        rows = self.conn.execute(
            f"SELECT {_JUDGEMENT_COLUMNS} FROM judgements WHERE run_id = ? "
            f"ORDER BY {_JUDGEMENT_ORDER}",
            (run_id,),
        )
        for row in rows:
            out.setdefault((row[0], row[1], row[2]), []).append(
                _judgement_from_row(row, f"{self.path}: run {run_id}")
            )
        return out

    @_reading
    def recorded_samples(self, run_id: str, *, images: bool = True) -> RecordedSamples:
        """The samples a run recorded (`put_samples`), read back in id order.

        A judge needs only what the run recorded: an imported run's samples are judged from
        here, without the benchmark's copy or the file. Image bytes the store keeps come back
        as base64 data, a path as the absolute path recorded. A path's file is read and
        hashed now: one whose content is not the one the run recorded (``sha256``), or that
        cannot be read, names its sample in `RecordedSamples.unusable` (the picture the model
        saw is not there); its reference keeps the recorded hash, so a run recording these
        samples again records the picture the model saw, never the file's new content.

        Args:
            run_id: The run.
            images: False leaves the images out (a judge that sees none): no file is read.

        """
        rows = self.conn.execute(
            "SELECT sample_id, sample FROM samples WHERE run_id = ? ORDER BY sample_id", (run_id,)
        )
        return self._recorded(run_id, rows, images)

    @_reading
    def recorded_videos(self, run_id: str) -> dict[str, VideoRef]:
        """The videos a run's recorded samples ask about, by sample id (no file is read).

        Each holds the frames the run sampled (times and pixel hashes) under each of its frame
        policies: what the models were shown. Samples without a video are left out; only
        those whose JSON names a video object are decoded, so an image run costs one scan.
        A recorded video that does not validate is left out too (the run's pages say it).
        """
        rows = self.conn.execute(
            "SELECT sample_id, sample FROM samples WHERE run_id = ? AND instr(sample, ?) > 0 "
            "ORDER BY sample_id",
            (run_id, '"video":{'),
        )
        out: dict[str, VideoRef] = {}
        for sample_id, text in rows:
            doc = _column_json(
                text,
                f"{self.path}: run {run_id}'s recorded sample {sample_id!r}: its sample column",
            )
            video = doc.get("video") if isinstance(doc, dict) else None
            if not isinstance(video, dict):
                continue  # the text was in a question, not a video field
            try:
                out[str(sample_id)] = VideoRef.model_validate(video)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                log.warning(
                    "run %s, sample %r: recorded video unreadable: %s", run_id, sample_id, exc
                )
        return out

    def recorded_sample_chunks(
        self, run_id: str, size: int, *, images: bool = True
    ) -> Iterator[RecordedSamples]:
        """`recorded_samples` a page of `size` samples at a time, in the same (id) order.

        Each page is read by the last id of the one before (never an offset), so a run of any
        size is read once, holding one page of samples; its files are checked as the page is.
        """
        with self._faults("reading it"):
            last: str | None = None
            while True:
                # A range on the key (not an OR with NULL), so each page is an index seek.
                after, args = (
                    ("", (run_id, size))
                    if last is None
                    else (" AND sample_id > ?", (run_id, last, size))
                )
                rows = self.conn.execute(
                    f"SELECT sample_id, sample FROM samples WHERE run_id = ?{after} "
                    "ORDER BY sample_id LIMIT ?",
                    args,
                ).fetchall()
                if not rows:
                    return
                last = rows[-1][0]
                yield self._recorded(run_id, rows, images)

    def _recorded(
        self, run_id: str, rows: Iterable[tuple[str, str]], images: bool
    ) -> RecordedSamples:
        """Recorded samples from their stored ``(sample_id, sample)`` rows (`recorded_samples`)."""
        out: list[Sample] = []
        unusable: dict[str, str] = {}
        for sample_id, text in rows:
            doc = _column_json(
                text,
                f"{self.path}: run {run_id}'s recorded sample {sample_id!r}: its sample column",
            )
            if not isinstance(doc, dict):
                raise StoreDamagedError(
                    f"{self.path}: run {run_id}'s recorded sample {sample_id!r}: its sample "
                    "column does not hold a JSON object (damaged, or edited by hand); re-run "
                    "it, or pass another --db"
                )
            refs = doc.pop("images", None) or []
            doc["images"] = []
            for i, ref in enumerate(refs if images else []):
                image, why = self._recorded_ref(ref)
                doc["images"].append(image)
                if why is not None and str(doc.get("id")) not in unusable:
                    unusable[str(doc.get("id"))] = f"sample {doc.get('id')!r}, image {i + 1}: {why}"
            out.append(Sample.model_validate(doc))
        return RecordedSamples(out, unusable)

    def get_samples(self, run_id: str, *, images: bool = True) -> list[Sample]:
        """`recorded_samples`' samples, each image the one the run saw.

        Raises:
            ValueError: A recorded image file changed since the run or cannot be read (the
                first such, in one line naming it).

        """
        recorded = self.recorded_samples(run_id, images=images)
        for why in recorded.unusable.values():
            raise ValueError(why)
        return recorded.samples

    def _recorded_ref(self, ref: dict[str, Any]) -> tuple[ImageRef, str | None]:
        """An image reference as `_recorded_image` wrote it, made usable again.

        With why it is not the picture the run saw (None: it is), for a file.
        """
        if isinstance(ref.get("path"), str):
            return recorded_file(ref)
        digest = ref.get("image")
        if not isinstance(digest, str):
            return ImageRef.model_validate(ref), None
        row = self.conn.execute("SELECT data FROM images WHERE hash = ?", (digest,)).fetchone()
        if row is None:
            raise StoreDamagedError(f"{self.path}: image {digest} of a recorded sample is missing")
        return ImageRef(data_b64=base64.b64encode(bytes(row[0])).decode("ascii")), None

    def _score_rows(
        self, run_id: str, model: str | None = None, sample_ids: Sequence[str] | None = None
    ) -> Iterator[dict[str, Any]]:
        one_model = "" if model is None else " AND s.model = ?"
        args: tuple[Any, ...] = (run_id,) if model is None else (run_id, model)
        if sample_ids is not None:
            # The ids go as one JSON parameter: any number of them, no variable limit met.
            one_model += " AND s.sample_id IN (SELECT value FROM json_each(?))"
            args += (json.dumps(list(sample_ids)),)
        # The free texts (`CAPPED_COLUMNS`) measured in SQL: one past the cap is read as NULL
        # and named in the last column, never received.
        cur = self.conn.execute(
            f"""SELECT s.model, s.sample_id, s.repeat, s.key, r.prompt,
                      {within_cap("r.text", "text")}, r.loglikelihoods,
                      s.stage, s.prediction, {within_cap("s.prediction_text", "prediction_text")},
                      s.correct, s.format_hit, s.gold, s.gold_text, s.abstain_offered,
                      s.abstained, s.error_type, {within_cap("r.error_message", "error_message")},
                      r.latency_s, r.prompt_tokens, r.completion_tokens,
                      {WHOLE_METADATA} AS metadata,
                      s.formulation, s.options, s.marks, s.option_order AS "order", r.redacted,
                      {within_cap("r.reasoning", "reasoning")}, r.finish_reason,
                      r.reasoning_tokens,
                      {over_cap("r.text", "r.reasoning", "r.error_message", "s.prediction_text")}
                      AS past_cap
               FROM scores s LEFT JOIN responses r ON r.key = s.key
               WHERE s.run_id = ?{one_model} ORDER BY s.model, s.sample_id, s.repeat""",
            args,
        )
        names = [d[0] for d in cur.description]
        for row in cur:
            rec = dict(zip(names, row, strict=True))
            found = rec.pop("past_cap")
            if found is not None:  # measured in SQL: the text itself never came here
                raise StoreDamagedError(
                    past_cap(
                        f"{self.path}: run {run_id}'s answer of {rec['model']} to sample "
                        f"{rec['sample_id']!r}",
                        found,
                    )
                )
            if rec["metadata"] is None:
                raise StoreDamagedError(
                    f"{self.path}: the score row of sample {rec['sample_id']!r} of run {run_id} "
                    "refers to its sample's metadata, which is not stored (damaged, or edited "
                    "by hand); re-run it, or pass another --db"
                )
            for name in (*_SCORE_JSON, *_SCORE_NULLABLE_JSON, "loglikelihoods"):
                text = rec[name]
                if text is None or (name == "loglikelihoods" and not text):
                    rec[name] = None  # never for gold and metadata: stored for every row
                    continue
                try:
                    rec[name] = stored_json(text)
                except ValueError as exc:  # damaged: one line naming run, sample, column
                    raise StoreDamagedError(
                        f"{self.path}: run {run_id}'s score row of sample {rec['sample_id']!r}: "
                        f"its {name} column does not hold JSON as lmmprobe writes it (damaged, "
                        f"or edited by hand: {exc}); re-run it, or pass another --db"
                    ) from None
            for b in ("correct", "format_hit", "abstain_offered", "abstained"):
                rec[b] = None if rec[b] is None else bool(rec[b])
            rec["redacted"] = bool(rec["redacted"])  # NULL: stored before schema 6, or no answer
            yield rec


# A stored verdict's columns, as `_judgement_from_row` reads them (its free texts measured in
# SQL, the first past the cap named in a last column), and the order one answer's verdicts
# come in (`Store.get_judgements`).
_JUDGEMENT_COLUMNS = (
    "model, sample_id, repeat, judge, protocol, version, attempt, decided_by, key, value, "
    f"{within_cap('reading')}, detail, {within_cap('reason')}, {over_cap('reading', 'reason')}"
)
_JUDGEMENT_ORDER = "model, sample_id, repeat, protocol, version, judge, attempt"


def _judgement_from_row(row: Sequence[Any], where: str) -> Judgement:
    """A stored verdict; `where` names the store and run for a damaged column."""
    judge, protocol, version, attempt, by, key, value, reading, detail, reason, found = row[3:]
    if found is not None:  # measured in SQL: the text itself never came here
        raise StoreDamagedError(
            past_cap(f"{where}'s verdict on sample {row[1]!r} of {row[0]}", found)
        )
    what = f"{where}'s verdict on sample {row[1]!r} of {row[0]}: its detail column"
    details = _column_json(detail, what)
    if not isinstance(details, dict):
        raise StoreDamagedError(
            f"{what} does not hold a JSON object (damaged, or edited by hand); re-run it, or "
            "pass another --db"
        )
    return Judgement(
        judge=judge or None, protocol=protocol, version=version, decided_by=by, key=key,
        attempt=attempt, value=value, reading=reading, detail=details, reason=reason,
    )  # fmt: skip


def _column_json(text: str | bytes, what: str) -> Any:
    """A JSON column decoded by `stored_json`, or one line naming `what` (store, row, column).

    Raises:
        StoreDamagedError: The column does not hold JSON as lmmprobe writes it.

    """
    try:
        return stored_json(text)
    except ValueError as exc:
        raise StoreDamagedError(
            f"{what} does not hold JSON as lmmprobe writes it (damaged, or edited by hand: "
            f"{exc}); re-run it, or pass another --db"
        ) from None
    except TypeError:  # a number or a blob where JSON text belongs
        raise StoreDamagedError(
            f"{what} does not hold JSON text (damaged, or edited by hand); re-run it, or pass "
            "another --db"
        ) from None


@dataclass(frozen=True)
class RecordedSamples:
    """A run's recorded samples (`Store.recorded_samples`), and those not to be judged on."""

    samples: list[Sample]
    unusable: dict[str, str] = field(default_factory=dict)
    """Sample id → one line naming its image file that changed since the run or cannot be
    read: whatever is sent with it now is not the picture the model saw."""


def recorded_file(ref: dict[str, Any]) -> tuple[ImageRef, str | None]:
    """A recorded file reference (``{"path", "sha256"}``) checked against the file now.

    The file is read once, as a regular file (a FIFO or a device is refused, never waited
    on), and hashed as `ImageRef.content_hash` hashes it; the reference returned remembers
    the hash the run recorded (the file's, where the run recorded none), so the request
    keys built from it are the run's and the file is not read again for them.

    Returns:
        The reference, and None when the file is the one the run saw; else one line naming
        the file and what is wrong (changed since the run, or unreadable).

    """
    path = str(ref["path"])
    image = ImageRef.model_validate({"path": path})
    recorded = ref.get("sha256")
    if isinstance(recorded, str):
        image.__dict__["_content_hash"] = recorded
    try:
        now = _file_sha256(path)
    except OSError as exc:
        return (
            image,
            f"{path} cannot be read ({exc.strerror or exc}): not the picture the model saw",
        )
    if isinstance(recorded, str) and now != recorded:
        return image, f"{path} changed since the run: not the picture the model saw"
    image.__dict__["_content_hash"] = now
    return image, None


def _file_sha256(path: str) -> str:
    """Hex SHA-256 of a regular file's bytes, read in pieces (opened without waiting)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or kernel_file(info):  # /proc/kmsg blocks a read
            raise OSError(errno.EINVAL, "not a regular file", path)
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _png_bytes(ref: ImageRef) -> bytes:
    """An in-memory picture as PNG (converted first where PNG cannot hold its mode: CMYK...)."""
    image = ref.load()
    buf = io.BytesIO()
    try:
        image.save(buf, format="PNG")
    except (OSError, ValueError):
        buf = io.BytesIO()
        image.convert("RGBA").save(buf, format="PNG")
    return buf.getvalue()


def _recorded_image(ref: ImageRef, c: sqlite3.Connection) -> str:
    """An image reference as `Store.put_samples` records it (JSON), its bytes written to `c`."""
    if ref.kind == "path":
        recorded: dict[str, str] = {"path": os.path.abspath(str(ref.path))}
        # The content hash the request's key used (remembered by the reference: no new read),
        # so a viewer can tell a file changed since the run from the one sent. A file gone
        # before it was asked has none (its answer records why).
        with contextlib.suppress(OSError):
            recorded["sha256"] = ref.content_hash()
        # A file name that is not UTF-8 (a byte such as 0xE9 read as "\udce9") names a real
        # file: written with JSON's escapes, which give the same name back, not refused.
        return _text_json(recorded) if recorded["path"].isascii() else json.dumps(recorded)
    if ref.kind not in ("base64", "memory"):
        return ref.model_dump_json(exclude_none=True)
    digest = ref.content_hash()
    # Encoded only when the store does not hold this content yet (a picture asked again, by
    # this run or another, costs a lookup).
    if c.execute("SELECT 1 FROM images WHERE hash = ?", (digest,)).fetchone() is None:
        data = base64.b64decode(ref.data_b64 or "") if ref.kind == "base64" else _png_bytes(ref)
        c.execute("INSERT OR IGNORE INTO images VALUES (?, ?)", (digest, data))
    return json.dumps({"image": digest})


def recorded_sample_json(sample: Sample, c: sqlite3.Connection) -> str:
    """The JSON a store records for a sample: the sample with its images as recorded refs.

    Image bytes the reference holds (base64 data, an in-memory picture) are written to the
    ``images`` table through `c` (inside the caller's transaction).

    Raises:
        OSError: An in-memory picture cannot be encoded.

    """
    # Written by pydantic-core (every run records every sample it asks, so this is on the
    # runner's path); metadata values JSON lacks (a Path, say) are written as their str().
    body = sample.model_dump_json(exclude={"images"}, fallback=str)
    images = ",".join(_recorded_image(ref, c) for ref in sample.images)
    return f'{body[:-1]},"images":[{images}]}}'


def _shared_metadata_json(sample: Sample) -> str | None:
    """The metadata a sample's score rows share, as they store it; None where JSON cannot hold it.

    Such metadata (a dict with tuple keys deep inside, a cycle) fails the rows' own write,
    as it always did; recording the sample and its answers must not fail on it first.
    """
    try:
        return _metadata_json(sample.row_metadata)
    except (TypeError, ValueError, RecursionError):
        return None


def _shared_metadata(
    c: sqlite3.Connection, run_id: str, sample_ids: Iterable[str]
) -> dict[str, str]:
    """The metadata the rows of these samples of run `run_id` share, where recorded."""
    ids = list(dict.fromkeys(sample_ids))
    out: dict[str, str] = {}
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        out.update(
            c.execute(
                "SELECT sample_id, row_metadata FROM samples WHERE run_id = ? AND sample_id IN "
                f"({','.join('?' * len(chunk))}) AND row_metadata IS NOT NULL",
                (run_id, *chunk),
            ).fetchall()
        )
    return out


def _score_values(run_id: str, model: str, s: Score) -> tuple[Any, ...]:
    """A score as a row of the scores table, in `_SCORE_COLUMNS` order.

    `model` is the score's model spec as recorded (`Store.recorded_spec`); its prediction text
    is cut at `MAX_STORED_TEXT` characters, like the answer it was read from.
    """
    return (
        run_id, model, s.sample_id, s.repeat, s.key, s.stage, s.prediction, _reply(s.prediction_text),
        s.correct, s.format_hit, json.dumps(s.gold), s.gold_text, s.abstain_offered, s.abstained,
        s.error_type, _score_metadata_json(s), s.formulation, _json_or_null(s.options),
        _json_or_null(s.marks), _json_or_null(s.order),
    )  # fmt: skip


def _score_metadata_json(s: Score) -> str:
    """A score's metadata as written (`_metadata_json`); its fault names the sample."""
    try:
        return _metadata_json(s.metadata)
    except StoreError as exc:
        raise StoreError(f"the score of sample {s.sample_id!r}: {exc}") from None


def _text(value: str | None) -> str | None:
    """`value` as SQLite can store it: lone surrogates replaced (`safe_text`)."""
    return None if value is None else safe_text(value)


def _reply(value: str | None) -> str | None:
    """A free text as stored: `_text`, cut at `MAX_STORED_TEXT` characters (`capped`).

    An answer, its thinking, a server's error message, a judge's reading or reason. Every backend that reads a reply over HTTP cuts it there already; a local one that wrote
    more is held to the same cap, so that a stored text past it is always damage.
    """
    return _text(capped(value))


def _json_or_null(value: list[Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def score_from_row(rec: dict[str, Any]) -> Score:
    """Rebuild the `Score` of one `Store.iter_score_rows` record.

    Fields the record lacks keep their defaults (the usage counts a response did not record).
    """
    return Score.model_validate({name: rec[name] for name in Score.model_fields if name in rec})


# Columns of a stored response, in the order `_response_from_row` reads them: the texts
# lmmprobe caps measured in SQL, one past the cap left there (NULL) and named in a last column
# (`over_cap`), so that a crafted 50 MB text never reaches Python.
_RESPONSE_READ = (
    f"key, {within_cap('text')}, loglikelihoods, token_counts, latency_s, prompt_tokens, "
    f"completion_tokens, error_type, {within_cap('error_message')}, error_retryable, redacted, "
    f"{within_cap('reasoning')}, finish_reason, reasoning_tokens, "
    f"{over_cap('text', 'reasoning', 'error_message')}"
)
# Columns `Store.put_responses` writes, in its order: named, since a migrated store has its
# later columns where ALTER TABLE put them.
_RESPONSE_WRITE = (
    "key, model, method, prompt, text, loglikelihoods, token_counts, latency_s, prompt_tokens, "
    "completion_tokens, error_type, error_message, error_retryable, created_at, redacted, "
    "reasoning, finish_reason, reasoning_tokens"
)
_RESPONSE_MARKS = ",".join("?" * len(_RESPONSE_WRITE.split(",")))


def _response_from_row(row: Sequence[Any], store: str) -> Response:
    """A stored response; `store` names the store for a damaged JSON column."""
    key, text, lls, counts, latency, pt, ct, etype, emsg, eretry, redacted = row[:11]
    reasoning, finish_reason, rt = row[11:14]
    usage = (
        Usage(prompt_tokens=pt, completion_tokens=ct, reasoning_tokens=rt)
        if pt is not None or ct is not None or rt is not None
        else None
    )
    error = ErrorInfo(type=etype, message=emsg or "", retryable=bool(eretry)) if etype else None
    return Response(
        key=key,
        text=text,
        loglikelihoods=_column_json(
            lls, f"{store}: the stored response {key}'s loglikelihoods column"
        )
        if lls
        else None,
        token_counts=_column_json(
            counts, f"{store}: the stored response {key}'s token_counts column"
        )
        if counts
        else None,
        latency_s=latency,
        usage=usage,
        error=error,
        redacted=bool(redacted),
        reasoning=reasoning,
        finish_reason=finish_reason,
    )
