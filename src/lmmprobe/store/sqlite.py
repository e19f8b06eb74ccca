"""The SQLite store: runs, every response as it arrives, and scores.

Responses are keyed by their request's cache key (one row per key, ever), so a crashed or
repeated run can never store a response twice; a later success replaces a stored error. The
database runs in WAL mode so a reader (``lmmprobe show``) never blocks a running evaluation,
and each batch is committed on its own so a killed process loses at most its in-flight batch.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from itertools import chain
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from lmmprobe.schema import ErrorInfo, Request, Response, Score, Usage
from lmmprobe.schema._jsonmemo import MetadataJSON
from lmmprobe.schema._trusted import trusted

log = logging.getLogger(__name__)

DEFAULT_DB = Path("lmmprobe-runs") / "lmmprobe.db"
SCHEMA_VERSION = 1
# Keys per IN (...) query where SQLite lacks json_each, under its oldest variable limit (999).
_CHUNK = 500
# Score rows per INSERT statement: 50 rows of 16 values is 800 variables, also under 999.
_SCORES_PER_INSERT = 50
_SCORE_COLUMNS = 16

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL,
    spec TEXT NOT NULL,
    manifest TEXT,
    results TEXT,
    out_dir TEXT
);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    method TEXT NOT NULL,
    prompt TEXT NOT NULL,
    text TEXT,
    loglikelihoods TEXT,
    token_counts TEXT,
    latency_s REAL NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    error_type TEXT,
    error_message TEXT,
    error_retryable INTEGER,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS scores (
    run_id TEXT NOT NULL,
    model TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    key TEXT NOT NULL,
    stage TEXT NOT NULL,
    prediction INTEGER,
    prediction_text TEXT,
    correct INTEGER,
    format_hit INTEGER NOT NULL,
    gold TEXT NOT NULL,
    gold_text TEXT NOT NULL,
    abstain_offered INTEGER NOT NULL,
    abstained INTEGER NOT NULL,
    error_type TEXT,
    metadata TEXT NOT NULL,
    PRIMARY KEY (run_id, model, sample_id, repeat)
);
"""


# Score metadata as ``json.dumps(metadata, default=str)`` writes it.
_metadata_text = MetadataJSON(json.JSONEncoder(default=str))


def _gold_json(gold: Any) -> str:
    """``json.dumps(gold)``, quicker for the usual golds: an int, or a list of strings."""
    if type(gold) is int:  # not bool, which json spells ``true``
        return str(gold)
    if type(gold) is list and all(type(g) is str for g in gold):
        # json.dumps's default separators and ASCII escaping, item by item.
        return "[" + ", ".join(map(encode_basestring_ascii, gold)) + "]"
    return json.dumps(gold)


@cache
def _insert_scores_sql(rows: int) -> str:
    """``INSERT OR REPLACE`` of this many score rows in one statement."""
    one = "(" + ",".join("?" * _SCORE_COLUMNS) + ")"
    return "INSERT OR REPLACE INTO scores VALUES " + ",".join([one] * rows)


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


class Store:
    """A SQLite database of runs, responses and scores.

    Args:
        path: Database file; parent folders are created. Defaults to
            ``./lmmprobe-runs/lmmprobe.db``.

    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else DEFAULT_DB
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The file itself, for connections opened later (a relative path could point elsewhere
        # once the working directory changes).
        self._file = self.path.resolve()
        self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against a killed process in WAL mode (only a power loss can drop
        # the last commits), and avoids an fsync per batch.
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(_DDL)
        self.conn.execute(
            "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        self._json_each = _has_json_each(self.conn)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

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
        worker.start()
        try:
            yield
        finally:
            worker.join()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed on success and rolled back on error."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- runs -----------------------------------------------------------------------------

    def create_run(self, run_id: str, spec: dict[str, Any], out_dir: str) -> None:
        """Record a new run as ``running``."""
        now = time.time()
        with self.transaction() as c:
            c.execute(
                "INSERT INTO runs (id, created_at, updated_at, status, spec, out_dir) VALUES (?,?,?,?,?,?)",
                (run_id, now, now, "running", json.dumps(spec), out_dir),
            )

    def update_run(
        self,
        run_id: str,
        *,
        status: str | None = None,
        manifest: dict[str, Any] | None = None,
        results: dict[str, Any] | None = None,
    ) -> None:
        """Update a run's status, manifest or results."""
        sets: list[str] = ["updated_at = ?"]
        args: list[object] = [time.time()]
        for col, val in (("status", status), ("manifest", manifest), ("results", results)):
            if val is not None:
                sets.append(f"{col} = ?")
                args.append(val if isinstance(val, str) else json.dumps(val))
        with self.transaction() as c:
            c.execute(f"UPDATE runs SET {', '.join(sets)} WHERE id = ?", (*args, run_id))

    def resolve_run(self, ref: str) -> str:
        """Turn ``latest``, a full run id or a unique id prefix into a run id.

        Raises:
            KeyError: No run matches, or a prefix matches several.

        """
        if ref == "latest":
            row = self.conn.execute(
                "SELECT id FROM runs ORDER BY created_at DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise KeyError(f"no runs in {self.path}")
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
            raise KeyError(f"no run {ref!r} in {self.path} (try `lmmprobe show latest`)")
        raise KeyError(f"run prefix {ref!r} is ambiguous: {', '.join(ids[:5])}")

    def get_run(self, run_id: str) -> dict[str, Any]:
        """A run's row with spec, manifest and results decoded."""
        row = self.conn.execute(
            "SELECT id, created_at, updated_at, status, spec, manifest, results, out_dir FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise KeyError(f"no run {run_id!r} in {self.path}")
        keys = (
            "id",
            "created_at",
            "updated_at",
            "status",
            "spec",
            "manifest",
            "results",
            "out_dir",
        )
        out = dict(zip(keys, row, strict=True))
        for k in ("spec", "manifest", "results"):
            out[k] = json.loads(out[k]) if out[k] else None
        return out

    def list_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent runs (id, created_at, status), newest first."""
        rows = self.conn.execute(
            "SELECT id, created_at, status FROM runs ORDER BY created_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [{"id": r[0], "created_at": r[1], "status": r[2]} for r in rows]

    # -- responses ------------------------------------------------------------------------

    def put_responses(
        self, model: str, requests: Sequence[Request], responses: Sequence[Response]
    ) -> None:
        """Store one batch of responses in one transaction (error rows included).

        A success replaces any stored row for its key; an error never replaces a success.
        """
        now = time.time()
        rows = []
        for req, resp in zip(requests, responses, strict=True):
            err = resp.error
            usage = resp.usage or Usage()
            rows.append(
                (
                    resp.key, model, req.method, req.prompt, resp.text,
                    _dumps(resp.loglikelihoods), _dumps(resp.token_counts), resp.latency_s,
                    usage.prompt_tokens, usage.completion_tokens,
                    err.type if err else None, err.message if err else None,
                    (int(err.retryable) if err else None), now,
                )
            )  # fmt: skip
        with self.transaction() as c:
            c.executemany(
                """INSERT INTO responses VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
                ON CONFLICT(key) DO UPDATE SET
                    model=excluded.model, method=excluded.method, prompt=excluded.prompt,
                    text=excluded.text, loglikelihoods=excluded.loglikelihoods,
                    token_counts=excluded.token_counts, latency_s=excluded.latency_s,
                    prompt_tokens=excluded.prompt_tokens, completion_tokens=excluded.completion_tokens,
                    error_type=excluded.error_type, error_message=excluded.error_message,
                    error_retryable=excluded.error_retryable, created_at=excluded.created_at
                WHERE excluded.error_type IS NULL OR responses.error_type IS NOT NULL""",
                rows,
            )

    def get_responses(
        self, keys: Iterable[str], *, include_errors: bool = False
    ) -> dict[str, Response]:
        """Stored responses for these keys; by default only successes (errors are retried)."""
        keys = list(keys)
        if not keys:
            return {}
        if include_errors:
            return {
                row[0]: _response_from_row(row)
                for row in self._select_responses(_RESPONSE_COLUMNS, keys, answers_only=False)
            }
        return _answers(self._select_responses(_ANSWER_COLUMNS, keys, answers_only=True))

    def _select_responses(
        self, columns: str, keys: list[str], *, answers_only: bool
    ) -> Iterable[tuple[Any, ...]]:
        """Rows of these columns (of ``responses AS r``) for the stored keys among `keys`."""
        ok = " AND r.error_type IS NULL" if answers_only else ""
        # Non-ASCII characters go in as they are, as in a bound parameter. A NUL must be
        # escaped in JSON and would end the key in SQLite's JSON, so such keys (or keys that
        # merely look like that escape) take the IN (...) path below.
        array = json.dumps(keys, ensure_ascii=False) if self._json_each else ""
        if array and "\\u0000" not in array:
            # All keys in one statement, as one JSON array that SQLite walks, looking each
            # key up in the primary key index: no per-key parameter to bind, and no
            # IN (...) list for SQLite to sort first. CROSS JOIN keeps the array outermost.
            return self.conn.execute(
                f"SELECT {columns} FROM json_each(?) AS j CROSS JOIN responses AS r "
                f"WHERE r.key = j.value{ok}",
                (array,),
            )
        return chain.from_iterable(
            self.conn.execute(
                f"SELECT {columns} FROM responses AS r "
                f"WHERE r.key IN ({','.join('?' * len(chunk))}){ok}",
                chunk,
            )
            for chunk in (keys[i : i + _CHUNK] for i in range(0, len(keys), _CHUNK))
        )

    def count_responses(self) -> int:
        """Number of stored responses (successes and errors)."""
        return int(self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # -- scores ---------------------------------------------------------------------------

    def put_scores(self, run_id: str, scores: Sequence[Score]) -> None:
        """Store a run's scores, replacing any earlier scoring of the same rows."""
        # One flat list of values, inserted many rows per statement: a statement per row
        # (executemany) costs about as much again in per-row stepping as the insert itself.
        # Booleans are bound as ints: sqlite3 stores both as 0/1, but adapts a bool slowly.
        values: list[object] = []
        add = values.extend
        for s in scores:
            add((
                run_id, s.model, s.sample_id, s.repeat, s.key, s.stage, s.prediction,
                s.prediction_text, None if s.correct is None else int(s.correct), int(s.format_hit),
                _gold_json(s.gold), s.gold_text, int(s.abstain_offered), int(s.abstained),
                s.error_type, _metadata_text(s.metadata),
            ))  # fmt: skip
        step = _SCORES_PER_INSERT * _SCORE_COLUMNS
        with self.transaction() as c:
            # Rows go in in order, so a row repeated in `scores` ends as its last copy, as before.
            for i in range(0, len(values), step):
                part = values[i : i + step]
                c.execute(_insert_scores_sql(len(part) // _SCORE_COLUMNS), part)

    def iter_score_rows(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Scores of a run joined with their responses, one dict per row (for exports)."""
        cur = self.conn.execute(
            """SELECT s.model, s.sample_id, s.repeat, s.key, r.prompt, r.text, r.loglikelihoods,
                      s.stage, s.prediction, s.prediction_text, s.correct, s.format_hit, s.gold,
                      s.gold_text, s.abstain_offered, s.abstained, s.error_type, r.error_message,
                      r.latency_s, r.prompt_tokens, r.completion_tokens, s.metadata
               FROM scores s LEFT JOIN responses r ON r.key = s.key
               WHERE s.run_id = ? ORDER BY s.model, s.sample_id, s.repeat""",
            (run_id,),
        )
        names = [d[0] for d in cur.description]
        for row in cur:
            rec = dict(zip(names, row, strict=True))
            rec["gold"] = json.loads(rec["gold"])
            rec["metadata"] = json.loads(rec["metadata"])
            rec["loglikelihoods"] = (
                json.loads(rec["loglikelihoods"]) if rec["loglikelihoods"] else None
            )
            for b in ("correct", "format_hit", "abstain_offered", "abstained"):
                rec[b] = None if rec[b] is None else bool(rec[b])
            yield rec


def score_from_row(rec: dict[str, Any]) -> Score:
    """Rebuild the `Score` of one `Store.iter_score_rows` record."""
    return Score(
        model=rec["model"],
        sample_id=rec["sample_id"],
        repeat=rec["repeat"],
        key=rec["key"],
        stage=rec["stage"],
        prediction=rec["prediction"],
        prediction_text=rec["prediction_text"],
        correct=rec["correct"],
        format_hit=bool(rec["format_hit"]),
        gold=rec["gold"],
        gold_text=rec["gold_text"],
        abstain_offered=bool(rec["abstain_offered"]),
        abstained=bool(rec["abstained"]),
        error_type=rec["error_type"],
        metadata=rec["metadata"],
    )


def _has_json_each(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has the JSON functions (built in since 3.38, optional before)."""
    try:
        conn.execute("SELECT value FROM json_each('[]')").fetchall()
    except sqlite3.OperationalError:
        return False
    return True


# Columns of a stored response, in the order `_response_from_row` reads them.
_RESPONSE_COLUMNS = (
    "r.key, r.text, r.loglikelihoods, r.token_counts, r.latency_s, r.prompt_tokens, "
    "r.completion_tokens, r.error_type, r.error_message, r.error_retryable"
)
# The same less the error columns, which are NULL in a stored answer.
_ANSWER_COLUMNS = (
    "r.key, r.text, r.loglikelihoods, r.token_counts, r.latency_s, r.prompt_tokens, "
    "r.completion_tokens"
)


def _answers(rows: Iterable[tuple[Any, ...]]) -> dict[str, Response]:
    """The `Response` of each row of `_ANSWER_COLUMNS` (stored answers, no errors), by key."""
    out: dict[str, Response] = {}
    for row in rows:
        key, text, lls, counts, latency, pt, ct = row
        if lls is None and counts is None and pt is None and ct is None:
            # The common row, a stored text answer: its values were validated when stored and
            # come back with the same types (a REAL column always reads back as a float).
            resp = trusted(
                Response,
                {
                    "key": key,
                    "text": text,
                    "loglikelihoods": None,
                    "token_counts": None,
                    "latency_s": latency,
                    "usage": None,
                    "error": None,
                },
            )
            out[key] = resp
        else:
            out[key] = _response_from_row((*row, None, None, None))
    return out


def _response_from_row(row: Sequence[Any]) -> Response:
    key, text, lls, counts, latency, pt, ct, etype, emsg, eretry = row
    usage = (
        Usage(prompt_tokens=pt, completion_tokens=ct) if pt is not None or ct is not None else None
    )
    error = ErrorInfo(type=etype, message=emsg or "", retryable=bool(eretry)) if etype else None
    if lls is None and counts is None and error is None and usage is None:
        # The common row, a stored text answer: its values were validated when it was stored
        # and come back with the same types, so it is rebuilt without validating again.
        return trusted(
            Response,
            {
                "key": key,
                "text": text,
                "loglikelihoods": None,
                "token_counts": None,
                "latency_s": float(latency),
                "usage": None,
                "error": None,
            },
        )
    return Response(
        key=key,
        text=text,
        loglikelihoods=json.loads(lls) if lls else None,
        token_counts=json.loads(counts) if counts else None,
        latency_s=latency,
        usage=usage,
        error=error,
    )
