"""A full-text index of finished runs for the sample browser's text search, beside the store.

The browser's text filter is a case-insensitive substring of a row's question, raw model output,
prediction, gold answer or sample id (`lmmprobe.store.queries.RowFilter.text`). Read by ``LIKE`` row by row, a
common text fills a page at once but a rare one reads the whole run (seconds on a million rows).
This module keeps, per finished run, an FTS5 table with the trigram tokenizer that finds the
candidate rows of any text of 3 or more characters in milliseconds; the browser's query then
checks each candidate with the very ``LIKE`` conditions of the scan, so both ways return the same
rows in the same order (the index only ever narrows which rows are read).

The index lives in a sidecar database file next to the store (`sidecar_path`: ``<store>-search``)
so that building it never takes the store's write lock and a running evaluation never waits for
it, and the store's write path has no trigger or extra work. `SearchIndexer` (started by
``lmmprobe serve``) builds it in a background thread, in chunks, for runs that are no longer
running, the newest first; a run's index is used only while the run's ``updated_at`` and status
are those it was built from. Until then, and for texts under 3 characters, the browser scans.

Layout of the sidecar (``PRAGMA user_version`` = `LAYOUT`):

- ``indexed(run_id PRIMARY KEY, tab, status, updated_at, run_status, models, rows, error)``:
  one row per run; ``tab`` numbers the run's two tables, ``status`` is ``building``, ``ready``
  or ``failed``.
- ``rows_<tab>(pos INTEGER PRIMARY KEY, sample_id, model, repeat)``: the run's rows, ``pos``
  in the browser's (sample, model, repeat) order.
- ``fts_<tab>``: contentless FTS5 (trigram, case-insensitive) over ``sid, question,
  prediction, gold, raw, mdl`` with rowid ``pos`` (``raw``: the model's raw output); ``mdl`` holds a fixed-width token per model so a
  model filter narrows the index search too.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.schema.text import stored_json
from lmmprobe.store.layout import within_cap

__all__ = [
    "LAYOUT",
    "MIN_CHARS",
    "SCHEMA",
    "IndexedRun",
    "SearchIndexer",
    "attach",
    "fts_query",
    "index_progress",
    "indexed_run",
    "searchable",
    "sidecar_path",
    "wait_ready",
]

log = logging.getLogger(__name__)

LAYOUT = 2
"""The sidecar's layout version; a file with another is rebuilt from scratch."""

MIN_CHARS = 3
"""The trigram tokenizer finds substrings of at least this many characters; shorter texts scan."""

SCHEMA = "lmmprobe_search"
"""The name the sidecar is attached under on a reader's connection."""

_CHUNK = 20_000  # rows read from the store and written to the index per transaction


def sidecar_path(db: str | Path) -> Path:
    """The search index file of the store at `db` (``<store>-search`` beside it)."""
    return Path(f"{db}-search")


def searchable(text: str | None) -> bool:
    """Whether the index can answer a search for `text` (else the browser scans the run)."""
    # Length in characters, as the trigram tokenizer counts them; NUL ends a LIKE pattern in
    # SQLite but not an FTS string, so such a text is left to the scan to keep one meaning.
    return bool(text) and len(text or "") >= MIN_CHARS and "\x00" not in (text or "")


def _literal(text: str) -> str:
    """`text` as an FTS5 string: everything inside is literal (operators, ``*``, ``:``...)."""
    return '"' + text.replace('"', '""') + '"'


def _model_token(index: int) -> str:
    # Fixed width, so no model's token is a substring of another's.
    return f"<{index:06d}>"


def fts_query(text: str, model_index: int | None = None) -> str:
    """The FTS5 query finding rows whose text columns hold `text` (and, given, the model)."""
    found = "{sid question prediction gold raw} : " + _literal(text)
    if model_index is None:
        return found
    return "mdl : " + _literal(_model_token(model_index)) + " AND " + found


def attach(conn: sqlite3.Connection) -> bool:
    """Attach the sidecar of `conn`'s main database (once); False when there is none yet.

    Attaching reads nothing and writes nothing: a ``query_only`` connection stays read-only.
    """
    names = {row[1]: row[2] for row in conn.execute("PRAGMA database_list")}
    if SCHEMA in names:
        return True
    main = names.get("main")
    if not main:
        return False
    path = sidecar_path(main)
    if not path.is_file():
        return False
    conn.execute(f"ATTACH DATABASE ? AS {SCHEMA}", (str(path),))
    return True


@dataclass(frozen=True)
class IndexedRun:
    """A run whose index is current: its tables' number and its models in token order."""

    tab: int
    models: tuple[str, ...]

    @property
    def fts(self) -> str:
        """The run's FTS5 table, qualified by the attached schema."""
        return f"{SCHEMA}.fts_{self.tab}"

    @property
    def rows(self) -> str:
        """The run's position → row key table, qualified by the attached schema."""
        return f"{SCHEMA}.rows_{self.tab}"

    @property
    def fts_name(self) -> str:
        """The FTS5 table's bare name (the left side of ``MATCH``)."""
        return f"fts_{self.tab}"


def indexed_run(conn: sqlite3.Connection, run_id: str) -> IndexedRun | None:
    """The run's index if it is built and still matches the run as stored, else None."""
    try:
        if not attach(conn):
            return None
        row = conn.execute(
            f"SELECT i.tab, i.models FROM {SCHEMA}.indexed i JOIN main.runs r ON r.id = i.run_id "
            "WHERE i.run_id = ? AND i.status = 'ready' AND r.status <> 'running' "
            "AND r.status = i.run_status AND r.updated_at = i.updated_at",
            (run_id,),
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # a sidecar being created right now
            return None
        raise
    if row is None:
        return None
    try:
        models = stored_json(row[1])
    except ValueError:  # a damaged sidecar: the run is read as not indexed (a scan)
        return None
    if not isinstance(models, list):
        return None
    return IndexedRun(tab=int(row[0]), models=tuple(str(m) for m in models))


def index_progress(conn: sqlite3.Connection, run_id: str) -> tuple[str, int] | None:
    """The sidecar's state for a run (``building``, ``ready``, ``failed``) and rows indexed."""
    try:
        if not attach(conn):
            return None
        row = conn.execute(
            f"SELECT status, rows FROM {SCHEMA}.indexed WHERE run_id = ?", (run_id,)
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else (str(row[0]), int(row[1] or 0))


# -- building ---------------------------------------------------------------------------------

_ROWS_SQL = (
    "SELECT s.sample_id, s.model, s.repeat, "
    + within_cap("s.prediction_text")
    + """, s.gold_text,
    (SELECT CAST(sm.question AS TEXT) FROM samples sm
     WHERE sm.run_id = s.run_id AND sm.sample_id = s.sample_id),
    (SELECT """
    + within_cap("CAST(r.text AS TEXT)")
    + """ FROM responses r WHERE r.key = s.key)
    FROM scores s INDEXED BY scores_by_sample
    WHERE s.run_id = ? AND (s.sample_id, s.model, s.repeat) > (?, ?, ?)
    ORDER BY s.sample_id, s.model, s.repeat LIMIT ?"""
)


class SearchIndexer:
    """Builds and refreshes the sidecar index of a store's finished runs in a background thread.

    The store is only read (a ``query_only`` connection, one short read per chunk); the sidecar
    is written by this one connection. Call `start` once and `stop` at shutdown; `prioritise`
    moves a run to the front (a search on a run whose index is missing).

    Args:
        db: The store file.
        poll_s: Seconds between looks for runs that finished or changed.

    """

    def __init__(self, db: str | Path, *, poll_s: float = 5.0) -> None:
        self.db = Path(db)
        self.path = sidecar_path(self.db)
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._wanted: list[str] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.error: str | None = None
        """Why the index cannot be built (a read-only folder...), once it failed."""

    def start(self) -> None:
        """Start the builder thread (a daemon: it never keeps a process alive)."""
        self._thread = threading.Thread(target=self._run, name="lmmprobe-search-index", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop after the chunk in progress (each chunk is its own transaction).

        Waits at most `timeout` seconds: the thread is a daemon, and a transaction cut short
        by the process ending is rolled back by SQLite, so the index is never left half-written.
        """
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def prioritise(self, run_id: str) -> None:
        """Index `run_id` next (if it is not running and not indexed already)."""
        with self._lock:
            if run_id not in self._wanted:
                self._wanted.insert(0, run_id)
        self._wake.set()

    def build_all(self) -> int:
        """Bring every finished run's index up to date now, in this thread; runs built."""
        src, out = self._connect()
        try:
            return self._pass(src, out)
        finally:
            src.close()
            out.close()

    # The thread: a pass over the runs, then wait for a poll or a prioritised run.
    def _run(self) -> None:
        try:
            src, out = self._connect()
        except (sqlite3.Error, OSError) as exc:
            self.error = f"{self.path}: cannot create the search index: {exc}"
            log.warning("%s; text search will scan runs", self.error)
            return
        try:
            while not self._stop.is_set():
                try:
                    self._pass(src, out)
                except sqlite3.Error as exc:
                    # A locked or busy file now is no reason to stop: try again next poll.
                    self.error = f"{self.path}: building the search index: {exc}"
                    log.warning("%s", self.error)
                self._wake.wait(self.poll_s)
                self._wake.clear()
        finally:
            src.close()
            out.close()

    def _connect(self) -> tuple[sqlite3.Connection, sqlite3.Connection]:
        src = sqlite3.connect(self.db, timeout=5.0, isolation_level=None, check_same_thread=False)
        src.execute("PRAGMA query_only = 1")
        out = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            out.execute("PRAGMA journal_mode = WAL")  # readers never wait for the builder
            out.execute("PRAGMA synchronous = NORMAL")  # a lost index is rebuilt, not lost data
            if int(out.execute("PRAGMA user_version").fetchone()[0]) != LAYOUT:
                _reset(out)
        except BaseException:
            src.close()
            out.close()
            raise
        return src, out

    def _pass(self, src: sqlite3.Connection, out: sqlite3.Connection) -> int:
        runs = src.execute(
            "SELECT id, status, updated_at FROM runs ORDER BY created_at DESC, id DESC"
        ).fetchall()
        have = {
            r[0]: r[1:]
            for r in out.execute("SELECT run_id, status, run_status, updated_at, tab FROM indexed")
        }
        with self._lock:
            wanted, self._wanted = self._wanted, []
        order = {rid: i for i, rid in enumerate(wanted)}
        runs.sort(key=lambda r: order.get(r[0], len(order)))
        built = 0
        for run_id, status, updated in runs:
            if self._stop.is_set():
                break
            old = have.get(run_id)
            if status == "running" or (
                old and old[1:3] == (status, updated) and old[0] != "building"
            ):
                continue
            self._build(src, out, run_id, status, updated, None if old is None else int(old[3]))
            built += 1
        return built

    # Every write names the run's tables (`tab`): should a second server on the same store
    # rebuild the run meanwhile, this builder's late writes then change nothing of its index.
    def _build(
        self,
        src: sqlite3.Connection,
        out: sqlite3.Connection,
        run_id: str,
        status: str,
        updated: float,
        old_tab: int | None,
    ) -> None:
        models = [
            r[0]
            for r in src.execute(
                "SELECT DISTINCT model FROM scores WHERE run_id = ? ORDER BY model", (run_id,)
            )
        ]
        index = {m: i for i, m in enumerate(models)}
        out.execute("BEGIN IMMEDIATE")
        tab = int(out.execute("SELECT COALESCE(MAX(tab), 0) + 1 FROM indexed").fetchone()[0])
        tab = max(tab, int(out.execute("SELECT value FROM counter").fetchone()[0]) + 1)
        out.execute("UPDATE counter SET value = ?", (tab,))
        out.execute(
            f"CREATE TABLE rows_{tab} (pos INTEGER PRIMARY KEY, sample_id TEXT NOT NULL, "
            "model TEXT NOT NULL, repeat INTEGER NOT NULL)"
        )
        # Turns a page cursor (a row's key) into its position; rows arrive in key order, so
        # the index only ever appends.
        out.execute(f"CREATE UNIQUE INDEX rows_{tab}_key ON rows_{tab} (sample_id, model, repeat)")
        out.execute(
            f"CREATE VIRTUAL TABLE fts_{tab} USING fts5(sid, question, prediction, gold, raw, mdl, "
            "tokenize = 'trigram', content = '', detail = full)"
        )
        out.execute(
            "INSERT OR REPLACE INTO indexed (run_id, tab, status, updated_at, run_status, "
            "models, rows, error) VALUES (?, ?, 'building', ?, ?, ?, 0, NULL)",
            (run_id, tab, updated, status, json.dumps(models)),
        )
        out.execute("COMMIT")
        self._drop(out, old_tab)
        after: tuple[str, str, int] = ("", "", -1)
        pos = 0
        try:
            while not self._stop.is_set():
                src.execute("BEGIN")
                try:
                    chunk = src.execute(_ROWS_SQL, (run_id, *after, _CHUNK)).fetchall()
                    now = src.execute(
                        "SELECT status, updated_at FROM runs WHERE id = ?", (run_id,)
                    ).fetchone()
                finally:
                    src.execute("COMMIT")
                if (
                    now is None
                    or tuple(now) != (status, updated)
                    or any(r[1] not in index for r in chunk)
                ):
                    # Resumed or rescored while indexing: start over at the next pass.
                    out.execute("DELETE FROM indexed WHERE run_id = ? AND tab = ?", (run_id, tab))
                    self._drop(out, tab)
                    return
                if not chunk:
                    break
                out.execute("BEGIN IMMEDIATE")
                out.executemany(
                    f"INSERT INTO rows_{tab} (pos, sample_id, model, repeat) VALUES (?, ?, ?, ?)",
                    [(pos + i + 1, r[0], r[1], r[2]) for i, r in enumerate(chunk)],
                )
                out.executemany(
                    f"INSERT INTO fts_{tab} (rowid, sid, question, prediction, gold, raw, mdl) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (pos + i + 1, r[0], r[5], r[3], r[4], r[6], _model_token(index[r[1]]))
                        for i, r in enumerate(chunk)
                    ],
                )
                pos += len(chunk)
                out.execute(
                    "UPDATE indexed SET rows = ? WHERE run_id = ? AND tab = ?", (pos, run_id, tab)
                )
                out.execute("COMMIT")
                last = chunk[-1]
                after = (last[0], last[1], int(last[2]))
            if self._stop.is_set():
                return
            # One segment reads fastest; merging writes only the sidecar.
            out.execute(f"INSERT INTO fts_{tab} (fts_{tab}) VALUES ('optimize')")
            out.execute(
                "UPDATE indexed SET status = 'ready' WHERE run_id = ? AND tab = ?", (run_id, tab)
            )
        except sqlite3.Error as exc:
            if out.in_transaction:
                out.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise
            # A run whose rows the index cannot hold (say, a damaged JSON sample) is scanned.
            out.execute(
                "UPDATE indexed SET status = 'failed', error = ? WHERE run_id = ? AND tab = ?",
                (f"{type(exc).__name__}: {exc}", run_id, tab),
            )
            log.warning("search index of run %s: %s; its searches will scan", run_id, exc)

    @staticmethod
    def _drop(out: sqlite3.Connection, tab: int | None) -> None:
        if tab is None:
            return
        out.execute(f"DROP TABLE IF EXISTS fts_{tab}")
        out.execute(f"DROP TABLE IF EXISTS rows_{tab}")


def _reset(out: sqlite3.Connection) -> None:
    """Empty the sidecar and create its layout (a new file, or one of another layout)."""
    out.execute("BEGIN IMMEDIATE")
    tables: Sequence[Any] = out.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    for (name,) in tables:
        out.execute(f'DROP TABLE IF EXISTS "{name}"')
    for (name,) in out.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
    ).fetchall():
        out.execute(f'DROP TABLE IF EXISTS "{name}"')
    out.execute(
        "CREATE TABLE indexed (run_id TEXT PRIMARY KEY, tab INTEGER NOT NULL, "
        "status TEXT NOT NULL, updated_at REAL NOT NULL, run_status TEXT NOT NULL, "
        "models TEXT NOT NULL, rows INTEGER NOT NULL, error TEXT)"
    )
    out.execute("CREATE TABLE counter (value INTEGER NOT NULL)")
    out.execute("INSERT INTO counter VALUES (0)")
    out.execute(f"PRAGMA user_version = {LAYOUT}")
    out.execute("COMMIT")


def wait_ready(db: str | Path, run_id: str, timeout_s: float = 600.0) -> bool:
    """Wait until `run_id`'s index is ready (for benchmarks and tests); False on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA query_only = 1")
            if indexed_run(conn, run_id) is not None:
                return True
        finally:
            conn.close()
        time.sleep(0.2)
    return False
