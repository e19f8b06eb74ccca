"""Read-only queries over a store for viewers (``lmmprobe serve``) and comparisons.

Everything here reads through plain `sqlite3` connections that a `Readers` pool opens on the
store file with ``PRAGMA query_only``: in WAL mode a reader never blocks a run that is writing,
nor waits for it. Lists are paginated and filtered in SQL, so a store of a million responses
costs a page what a small one does: a run's rows are paged by keyset (the last row's
``(sample_id, model, repeat)``) along the ``scores_by_sample`` index, never by OFFSET, and
counts stop at `COUNT_CAP`.
A text filter of 3 or more characters on a finished run reads only the rows that run's
search index (`lmmprobe.store.search`, a file beside the store) names, checked with the same
conditions, so a rare text costs what a common one does; otherwise it reads the run's rows.

JSON columns written by other versions or by hand are read defensively: a value that does not
decode shows as missing, never as a crash of the listing.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

from lmmprobe.schema.text import stored_json
from lmmprobe.store import search
from lmmprobe.store.errors import as_store_error
from lmmprobe.store.judged import JudgeFilter, judge_clauses
from lmmprobe.store.layout import WHOLE_METADATA, shown_capped
from lmmprobe.store.runs import StoredRun, count_runs, decode_column, read_run, read_runs

__all__ = [
    "COUNT_CAP",
    "MISSING",
    "Answer",
    "PairedAnswer",
    "Readers",
    "RowFilter",
    "RunRow",
    "ScorePage",
    "ScoreRow",
    "count_runs",
    "data_fingerprint",
    "get_run",
    "get_sample",
    "image_data",
    "image_ref",
    "is_time_limit",
    "list_runs",
    "metadata_keys",
    "model_counts",
    "neighbour_samples",
    "paired_answers",
    "run_models",
    "run_rows",
    "sample_answers",
    "score_page",
]

MISSING = "(missing)"
"""The metadata value a filter reads as "the key is absent": the label the run's breakdown
gives such rows (`lmmprobe.metrics.choice.MISSING`; the store sits below metrics)."""

COUNT_CAP = 1_000
"""Counts of filtered rows stop here (a page shows "more than 1,000"), so counting a page's
rows costs about what reading the page does, never a scan of the run."""

Verdict = Literal["correct", "wrong"]
StageFilter = Literal["format_hit", "unparsed", "truncated", "error"]


class Readers:
    """A small pool of read-only connections to one store file, shareable across threads.

    Args:
        path: The store file (it must exist: open it once with `Store` to create or migrate it).
        size: Connections kept open; more are opened when all are in use and closed after.
        mmap_mb: Memory-mapped size per connection: pages mapped once are shared by every
            connection through the OS page cache.
        time_limit_s: A query running longer is stopped (`sqlite3.OperationalError`
            "interrupted"), so one pathological filter cannot hold a connection for minutes.

    """

    def __init__(
        self, path: str | Path, *, size: int = 8, mmap_mb: int = 1024, time_limit_s: float = 10.0
    ) -> None:
        self.path = Path(path)
        self.time_limit_s = time_limit_s
        self._mmap = mmap_mb * 1024 * 1024
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue(maxsize=size)

    def _open(self) -> sqlite3.Connection:
        # Not mode=ro: a read-only open cannot create the WAL index a running writer needs.
        conn = sqlite3.connect(
            self.path, timeout=5.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA query_only = 1")
        conn.execute(f"PRAGMA mmap_size = {self._mmap}")
        conn.execute("PRAGMA cache_size = -32768")  # 32 MB of pages per connection
        return conn

    @contextmanager
    def connection(self, time_limit_s: float | None = None) -> Iterator[sqlite3.Connection]:
        """A read-only connection for the duration of the block (returned to the pool after).

        Args:
            time_limit_s: Stop queries after this many seconds instead of `time_limit_s`
                (a whole-run comparison may need longer than a page).

        Raises:
            StoreError: A fault of the store file met inside the block (damaged, locked...),
                as the one-line error `Store` raises (`lmmprobe.store.as_store_error`); a query
                stopped by the time limit stays the `sqlite3.OperationalError` it is.

        """
        try:
            conn = self._pool.get_nowait()
        except queue.Empty:
            try:
                conn = self._open()
            except sqlite3.Error as exc:
                self._raise_typed(exc)
        limit = self.time_limit_s if time_limit_s is None else time_limit_s
        deadline = time.monotonic() + limit
        # Checked every 100,000 virtual-machine steps: a few milliseconds apart at most.
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 100_000)
        try:
            yield conn
        except sqlite3.Error as exc:
            self._raise_typed(exc)
        finally:
            conn.set_progress_handler(None, 0)
            if conn.in_transaction:
                conn.rollback()
            try:
                self._pool.put_nowait(conn)
            except queue.Full:
                conn.close()

    def _raise_typed(self, exc: sqlite3.Error) -> NoReturn:
        """Raise `exc` as a `StoreError` when it is a fault of the file, else as it is."""
        fault = as_store_error(exc, self.path)
        if fault is None:
            raise exc
        raise fault from exc

    def close(self) -> None:
        """Close every pooled connection."""
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return


def is_time_limit(exc: BaseException) -> bool:
    """Whether an exception is a query stopped by `Readers`' time limit."""
    return isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc)


def _decode(text: str | None) -> dict[str, Any]:
    return decode_column(text) or {}


# -- runs -----------------------------------------------------------------------------------


@dataclass
class RunRow:
    """One stored run as a viewer lists it."""

    id: str
    created_at: float
    updated_at: float
    status: str
    data: str | None
    models: list[str]
    n: int | None
    """Samples the run evaluates (from its results, else its manifest)."""
    asked: int | None
    """Samples recorded so far (schema 5 runs record a sample with its first answer)."""
    metrics: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """Model → metric name → ``{value, low, high, n}`` from the run's results (empty while
    the run has none)."""


def _run_row(run: StoredRun, asked: int | None) -> RunRow:
    models = run.models
    return RunRow(
        id=run.id,
        created_at=run.created_at,
        updated_at=run.updated_at,
        status=run.status,
        data=run.data,
        models=models,
        n=run.samples,
        asked=asked,
        metrics={m: dict(run.metrics(m)) for m in models if m in run.model_results},
    )


def _asked(conn: sqlite3.Connection, run: StoredRun) -> int | None:
    """Samples recorded so far by a running run (None for a run that is not running)."""
    if run.status != "running":
        return None
    return int(
        conn.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run.id,)).fetchone()[0]
    )


def list_runs(conn: sqlite3.Connection, limit: int = 500, offset: int = 0) -> list[RunRow]:
    """The store's runs, newest first (at most `limit`, after skipping the `offset` newest).

    A running run also says how many of its samples are recorded so far (`RunRow.asked`).
    """
    return run_rows(conn, read_runs(conn, limit, offset))


def run_rows(conn: sqlite3.Connection, runs: Sequence[StoredRun]) -> list[RunRow]:
    """The list's rows of runs already read (`lmmprobe.store.runs.read_runs`), in their order.

    For a page that needs more of each run than its row (the web app's settings column): the
    runs are read once, not once for the rows and again for the rest.
    """
    return [_run_row(r, _asked(conn, r)) for r in runs]


def get_run(conn: sqlite3.Connection, run_id: str) -> tuple[RunRow, dict[str, Any]] | None:
    """A run's row and its decoded columns (``spec``, ``manifest``, ``results``); None if absent."""
    run = read_run(conn, run_id)
    if run is None:
        return None
    docs = {"spec": run.spec, "manifest": run.manifest, "results": run.results}
    return _run_row(run, _asked(conn, run)), docs


def run_models(conn: sqlite3.Connection, run_id: str) -> list[str]:
    """Models with scores in a run: in the order the run asked for them, then any others."""
    run = read_run(conn, run_id)
    asked = [str(m) for m in (run.spec.get("models") or [] if run else [])]
    # One index probe per model (the scores key starts with run and model), not a scan.
    have: list[str] = []
    found = conn.execute(
        "SELECT model FROM scores WHERE run_id = ? ORDER BY model LIMIT 1", (run_id,)
    ).fetchone()
    while found is not None:
        have.append(str(found[0]))
        found = conn.execute(
            "SELECT model FROM scores WHERE run_id = ? AND model > ? ORDER BY model LIMIT 1",
            (run_id, have[-1]),
        ).fetchone()
    ordered = [m for m in asked if m in have]
    return ordered + [m for m in have if m not in ordered]


def model_counts(conn: sqlite3.Connection, run_id: str) -> dict[str, dict[str, int]]:
    """Per model: rows, correct, wrong, format hits, unparsed, truncated, no verdict and errors.

    The outcomes of `lmmprobe.metrics.outcome` in SQL (the store sits below metrics), by a scan:
    unparsed and truncated rows have a verdict (wrong, counted apart from ``wrong``);
    ``no_verdict`` are captions and free-form descriptions (empty, cut off or not).
    For a run still going, whose results are not written yet; a finished run's results hold
    these figures already.
    """
    rows = conn.execute(
        """SELECT model, COUNT(*), SUM(correct = 1 AND stage NOT IN ('unparsed', 'truncated')),
                  SUM(correct = 0 AND stage NOT IN ('unparsed', 'truncated')), SUM(format_hit),
                  SUM(stage = 'unparsed' AND correct IS NOT NULL),
                  SUM(stage = 'truncated' AND correct IS NOT NULL),
                  SUM(correct IS NULL AND stage != 'error' AND error_type IS NULL),
                  SUM(stage = 'error' OR error_type IS NOT NULL)
           FROM scores WHERE run_id = ? GROUP BY model""",
        (run_id,),
    ).fetchall()
    names = (
        "rows", "correct", "wrong", "format_hit", "unparsed", "truncated", "no_verdict", "error"
    )  # fmt: skip
    return {r[0]: dict(zip(names, (int(x or 0) for x in r[1:]), strict=True)) for r in rows}


def metadata_keys(conn: sqlite3.Connection, run_id: str, probe: int = 500) -> dict[str, list[str]]:
    """Metadata keys of a run's rows and up to 30 values seen for each, from its first rows.

    Values are those of scalar metadata (strings, numbers, booleans) in the first `probe` rows,
    and the scalar items of a list (a row is in the group of each, as the breakdown counts
    it); other nested values are left out. Enough to offer a filter; any key or value can
    still be typed.
    """
    out: dict[str, list[str]] = {}
    for (text,) in conn.execute(
        f"SELECT {WHOLE_METADATA} FROM scores s WHERE s.run_id = ? LIMIT ?", (run_id, probe)
    ):
        for key, value in _decode(text).items():
            values = out.setdefault(str(key), [])
            for item in value if isinstance(value, list) else [value]:
                shown = _scalar_text(item)
                if shown is not None and shown not in values and len(values) < 30:
                    values.append(shown)
    return out


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


# -- a run's rows ----------------------------------------------------------------------------


@dataclass
class RowFilter:
    """What a viewer's sample browser filters a run's rows by (all optional, combined by AND).

    Attributes:
        model: Only this model's rows.
        verdict: ``correct`` or ``wrong`` (rows without a verdict, errors and captions, match
            neither).
        stage: ``format_hit`` (the answer read by option mark, text or likelihood),
            ``unparsed``, ``truncated`` (cut off before an answer) or ``error``.
        meta_key: A metadata key; with `meta_value`, rows whose value equals it (compared as
            text: ``3`` matches the number 3, ``true`` or ``True`` the boolean, ``null`` or
            ``None`` a null, and ``(missing)`` rows lacking the key, as the run's breakdown
            groups them), alone, rows that have it.
        meta_value: See `meta_key`.
        text: Case-insensitive substring of the question, the model's raw output, the
            prediction, the gold answer or the sample id.
        judge: Only answers this judge gave a verdict on (`lmmprobe.store.judged`).
        judgement: ``unjudged`` (a judge could not decide the answer) or ``disagree`` (two
            judges rated it differently); see `lmmprobe.store.judged`.

    """

    model: str | None = None
    verdict: Verdict | None = None
    stage: StageFilter | None = None
    meta_key: str | None = None
    meta_value: str | None = None
    text: str | None = None
    judge: str | None = None
    judgement: JudgeFilter | None = None

    def active(self) -> bool:
        """Whether any filter is set."""
        return any(
            v not in (None, "")
            for v in (
                self.model,
                self.verdict,
                self.stage,
                self.meta_key,
                self.text,
                self.judge,
                self.judgement,
            )
        )


def _json_path(key: str) -> str:
    """A JSON path naming one top-level key, whatever characters the key holds."""
    return "$." + json.dumps(key)


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _value_is(type_sql: str, value_sql: str) -> str:
    """SQL: the JSON value of type `type_sql` and value `value_sql` is labelled ``?``.

    Takes four parameters, the label each time: ``true``/``True``, ``false``/``False`` and
    ``null``/``None`` name the literals, any other value its text.
    """
    return (
        f"(CASE {type_sql} WHEN 'true' THEN ? IN ('true', 'True') WHEN 'false' THEN ? IN "
        f"('false', 'False') WHEN 'null' THEN ? IN ('null', 'None') ELSE CAST({value_sql} AS "
        "TEXT) = ? END)"
    )


def _in_list(item: str) -> str:
    """SQL: the metadata value at path ``?`` is a list with an item ``e`` for which `item` holds.

    Takes the path twice, then `item`'s parameters.
    """
    return (
        f"(json_type({WHOLE_METADATA}, ?) = 'array' AND EXISTS (SELECT 1 FROM "
        f"json_each({WHOLE_METADATA}, ?) e WHERE {item}))"
    )


def _where(run_id: str, f: RowFilter) -> tuple[list[str], list[Any]]:
    clauses, args = ["s.run_id = ?"], [run_id]
    if f.model:
        clauses.append("s.model = ?")
        args.append(f.model)
    if f.verdict == "correct":
        clauses.append("s.correct = 1")
    elif f.verdict == "wrong":
        clauses.append("s.correct = 0")
    if f.stage == "format_hit":
        clauses.append("s.format_hit = 1")
    elif f.stage == "unparsed":
        # Answers with a verdict that could not be read, as `lmmprobe.metrics.outcome` defines
        # them: an empty caption is stored as unparsed too but has no verdict (it is "empty").
        clauses.append("s.stage = 'unparsed' AND s.correct IS NOT NULL")
    elif f.stage == "truncated":
        # Outputs cut off before their answer that have a verdict (wrong), as outcome.py
        # counts them; a cut-off caption has none and is "empty" there.
        clauses.append("s.stage = 'truncated' AND s.correct IS NOT NULL")
    elif f.stage == "error":
        clauses.append("s.stage = 'error'")
    if f.meta_key:
        path = _json_path(f.meta_key)
        if f.meta_value is None or f.meta_value == "":
            clauses.append(f"json_type({WHOLE_METADATA}, ?) IS NOT NULL")
            args.append(path)
        elif f.meta_value == MISSING:
            # The run page's breakdown groups rows lacking the key as "(missing)" (with
            # any whose value, or an item of whose list, is that very text): its link shows
            # the same rows.
            clauses.append(
                f"(json_type({WHOLE_METADATA}, ?) IS NULL OR json_extract({WHOLE_METADATA}, ?) = ? "
                f"OR {_in_list('e.value = ?')})"
            )
            args += [path, path, MISSING, path, path, MISSING]
        else:
            # A value is written as the breakdown labels it (Python's ``True``, ``None``) or
            # as JSON (``true``, ``null``); booleans come back from json_extract as 1/0, so
            # they are told by their JSON type. A list value puts the row in the group of
            # each of its items (`lmmprobe.metrics.choice.value_labels`), so a row matches
            # when one of its items does.
            whole = _value_is(
                f"json_type({WHOLE_METADATA}, ?)", f"json_extract({WHOLE_METADATA}, ?)"
            )
            clauses.append(f"({whole} OR {_in_list(_value_is('e.type', 'e.value'))})")
            v = f.meta_value
            args += [path, v, v, v, path, v, path, path, v, v, v, v]
    if f.text:
        like = _like(f.text)
        # Checked row by row as the page is read (in the order written, cheapest first), so a
        # common text costs a page's worth of rows and only a rare one a scan of the run. The
        # question is the recorded sample's (one row per sample, not per model); the raw
        # output is the stored response's.
        clauses.append(
            "(s.prediction_text LIKE ? ESCAPE '\\' OR s.gold_text LIKE ? ESCAPE '\\' "
            "OR s.sample_id LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM samples sm "
            "WHERE sm.run_id = s.run_id AND sm.sample_id = s.sample_id AND "
            "sm.question LIKE ? ESCAPE '\\') OR EXISTS (SELECT 1 FROM responses r "
            "WHERE r.key = s.key AND r.text LIKE ? ESCAPE '\\'))"
        )
        args += [like] * 5
    judged, judged_args = judge_clauses(f.judge, f.judgement)
    return clauses + judged, args + judged_args


Cursor = tuple[str, str, int]
"""A row's place in a run: ``(sample_id, model, repeat)``, the order of the sample browser."""


@dataclass
class ScoreRow:
    """One row of a run's sample browser."""

    sample_id: str
    model: str
    repeat: int
    stage: str
    correct: bool | None
    format_hit: bool
    prediction_text: str | None
    gold_text: str
    error_type: str | None
    question: str | None
    """From the recorded sample (None for runs stored before schema 5)."""
    metadata: dict[str, Any]


@dataclass
class ScorePage:
    """A page of a run's rows, with the cursors of the pages around it."""

    rows: list[ScoreRow]
    next: Cursor | None
    """Cursor after which the next page starts; None on the last page."""
    prev: Cursor | None
    """Cursor before which the previous page ends; None on the first page."""
    total: int
    """Rows matching the filter, counted up to `COUNT_CAP` (+1: more than the cap)."""
    capped: bool
    search: Literal["index", "scan"] | None = None
    """How a text filter was answered: through the run's search index (`lmmprobe.store.search`)
    or by reading the run's rows (no index yet, a running run, a text under 3 characters);
    None without a text filter."""


_PAGE_COLUMNS = (
    f"""s.sample_id, s.model, s.repeat, s.stage, s.correct, s.format_hit,
    {shown_capped("s.prediction_text")}, s.gold_text, s.error_type, """
    + WHOLE_METADATA
    + """,
    (SELECT sm.question FROM samples sm
     WHERE sm.run_id = s.run_id AND sm.sample_id = s.sample_id)"""
)


def _score_row(r: Sequence[Any]) -> ScoreRow:
    return ScoreRow(
        sample_id=r[0],
        model=r[1],
        repeat=int(r[2]),
        stage=r[3],
        correct=None if r[4] is None else bool(r[4]),
        format_hit=bool(r[5]),
        prediction_text=r[6],
        gold_text=r[7],
        error_type=r[8],
        metadata=_decode(r[9]),
        question=r[10] if isinstance(r[10], str) else None,
    )


def score_page(
    conn: sqlite3.Connection,
    run_id: str,
    flt: RowFilter | None = None,
    *,
    after: Cursor | None = None,
    before: Cursor | None = None,
    limit: int = 50,
) -> ScorePage:
    """One page of a run's rows in (sample, model, repeat) order, filtered in SQL.

    Args:
        conn: A connection (`Readers.connection`).
        run_id: The run.
        flt: Filters (none: every row).
        after: Start after this row (the `ScorePage.next` of the page before).
        before: End before this row (the `ScorePage.prev` of the page after); ignored when
            `after` is given.
        limit: Rows per page.

    """
    flt = flt or RowFilter()
    clauses, args = _where(run_id, flt)
    index = search.indexed_run(conn, run_id) if search.searchable(flt.text) else None
    if index is not None:
        try:
            return _indexed_page(conn, index, flt, clauses, args, after, before, limit)
        except sqlite3.OperationalError as exc:
            # Replaced by a rebuild between looking it up and reading it: scan this once.
            if "no such table" not in str(exc):
                raise
    # The index in (run, sample, model, repeat) order both filters the run and orders it, so a
    # page reads its rows and stops, however deep it is.
    head = f"SELECT {_PAGE_COLUMNS} FROM scores s INDEXED BY scores_by_sample WHERE "
    if after is not None:
        sql = head + " AND ".join([*clauses, "(s.sample_id, s.model, s.repeat) > (?, ?, ?)"])
        rows = conn.execute(
            sql + " ORDER BY s.sample_id, s.model, s.repeat LIMIT ?", [*args, *after, limit + 1]
        ).fetchall()
    elif before is not None:
        sql = head + " AND ".join([*clauses, "(s.sample_id, s.model, s.repeat) < (?, ?, ?)"])
        rows = conn.execute(
            sql + " ORDER BY s.sample_id DESC, s.model DESC, s.repeat DESC LIMIT ?",
            [*args, *before, limit + 1],
        ).fetchall()
    else:
        rows = conn.execute(
            head + " AND ".join(clauses) + " ORDER BY s.sample_id, s.model, s.repeat LIMIT ?",
            [*args, limit + 1],
        ).fetchall()
    total = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM scores s INDEXED BY scores_by_sample WHERE "
        + " AND ".join(clauses)
        + " LIMIT ?)",
        [*args, COUNT_CAP + 1],
    ).fetchone()[0]
    return _page(rows, after, before, limit, int(total), "scan" if flt.text else None)


def _page(
    rows: list[Any],
    after: Cursor | None,
    before: Cursor | None,
    limit: int,
    total: int,
    how: Literal["index", "scan"] | None,
) -> ScorePage:
    """A `ScorePage` from up to `limit` + 1 rows read forward (or backward, with `before`)."""
    if after is not None or before is None:
        more_after, more_before = len(rows) > limit, after is not None
        rows = rows[:limit]
    else:
        more_after, more_before = True, len(rows) > limit
        rows = rows[:limit][::-1]
    out = [_score_row(r) for r in rows]
    return ScorePage(
        rows=out,
        next=(out[-1].sample_id, out[-1].model, out[-1].repeat) if out and more_after else None,
        prev=(out[0].sample_id, out[0].model, out[0].repeat) if out and more_before else None,
        total=min(total, COUNT_CAP),
        capped=total > COUNT_CAP,
        search=how,
    )


def _indexed_page(
    conn: sqlite3.Connection,
    index: search.IndexedRun,
    flt: RowFilter,
    clauses: list[str],
    args: list[Any],
    after: Cursor | None,
    before: Cursor | None,
    limit: int,
) -> ScorePage:
    """`score_page` for a text filter, reading only the rows the run's search index names.

    The index gives candidates in the browser's order (its positions follow the rows' keys);
    each is then checked with all of `_where`'s conditions, the text's LIKEs included, so the
    page holds exactly the rows, in exactly the order, that reading the run would give.
    """
    assert flt.text is not None
    if flt.model is None:
        token: int | None = None
    elif flt.model in index.models:
        token = index.models.index(flt.model)
    else:
        token = len(index.models)  # no row has it: the index answers "none" at once
    # The run's rows in position order, joined to their scores by the primary key.
    base = (
        f"FROM {index.fts} f CROSS JOIN {index.rows} k CROSS JOIN scores s "
        f"WHERE f.{index.fts_name} MATCH ? AND k.pos = f.rowid AND s.model = k.model "
        "AND s.sample_id = k.sample_id AND s.repeat = k.repeat AND "
    )
    match = search.fts_query(flt.text, token)
    where = " AND ".join(clauses)
    if after is not None:
        found = conn.execute(
            f"SELECT pos FROM {index.rows} WHERE (sample_id, model, repeat) <= (?, ?, ?) "
            "ORDER BY sample_id DESC, model DESC, repeat DESC LIMIT 1",
            after,
        ).fetchone()
        rows = conn.execute(
            f"SELECT {_PAGE_COLUMNS} {base}{where} AND f.rowid > ? ORDER BY f.rowid LIMIT ?",
            [match, *args, found[0] if found else 0, limit + 1],
        ).fetchall()
    elif before is not None:
        found = conn.execute(
            f"SELECT pos FROM {index.rows} WHERE (sample_id, model, repeat) >= (?, ?, ?) "
            "ORDER BY sample_id, model, repeat LIMIT 1",
            before,
        ).fetchone()
        rows = conn.execute(
            f"SELECT {_PAGE_COLUMNS} {base}{where} AND f.rowid < ? ORDER BY f.rowid DESC LIMIT ?",
            [match, *args, found[0] if found else 1 << 62, limit + 1],
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_PAGE_COLUMNS} {base}{where} ORDER BY f.rowid LIMIT ?",
            [match, *args, limit + 1],
        ).fetchall()
    total = conn.execute(
        f"SELECT COUNT(*) FROM (SELECT 1 {base}{where} LIMIT ?)",
        [match, *args, COUNT_CAP + 1],
    ).fetchone()[0]
    return _page(rows, after, before, limit, int(total), "index")


# -- one sample -------------------------------------------------------------------------------


def get_sample(conn: sqlite3.Connection, run_id: str, sample_id: str) -> dict[str, Any] | None:
    """The sample as the run recorded it (its JSON, decoded), or None when not recorded."""
    row = conn.execute(
        "SELECT sample FROM samples WHERE run_id = ? AND sample_id = ?", (run_id, sample_id)
    ).fetchone()
    return None if row is None else _decode(row[0])


def image_ref(
    conn: sqlite3.Connection, run_id: str, sample_id: str, index: int
) -> dict[str, Any] | None:
    """The recorded reference of a sample's `index`-th image, or None when there is none."""
    sample = get_sample(conn, run_id, sample_id)
    images = sample.get("images") if sample else None
    if not isinstance(images, list) or not 0 <= index < len(images):
        return None
    ref = images[index]
    return ref if isinstance(ref, dict) else None


def image_data(conn: sqlite3.Connection, digest: str) -> bytes | None:
    """The bytes the store keeps for an image's content hash, or None when it keeps none."""
    row = conn.execute("SELECT data FROM images WHERE hash = ?", (digest,)).fetchone()
    return None if row is None else bytes(row[0])


@dataclass
class Answer:
    """One model's answer to a sample: the score row and the stored response."""

    model: str
    repeat: int
    key: str
    stage: str
    prediction: int | None
    prediction_text: str | None
    correct: bool | None
    format_hit: bool
    gold: Any
    gold_text: str
    error_type: str | None
    metadata: dict[str, Any]
    options: list[str] | None
    marks: list[str] | None
    order: list[int] | None
    prompt: str | None
    """The exact prompt sent (None when the response is not in the store)."""
    raw: str | None
    """What the model wrote (None for errors and likelihood answers)."""
    error_message: str | None
    latency_s: float | None
    method: str | None
    loglikelihoods: list[float] | None
    reasoning: str | None = None
    """Thinking the server sent apart from the text (None: none sent, or stored before 8)."""
    finish_reason: str | None = None
    """Why generation stopped (``length``: the token limit), when the backend said."""
    completion_tokens: int | None = None
    """The tokens the model wrote, as its server counted them (None: not reported)."""


def _json_or_none(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return stored_json(text)  # the 100-level rule: a crafted column is None, never a crash
    except ValueError:
        return None


def sample_answers(conn: sqlite3.Connection, run_id: str, sample_id: str) -> list[Answer]:
    """Every model's answers to one sample of a run (models, then repeats, in order)."""
    rows = conn.execute(
        f"""SELECT s.model, s.repeat, s.key, s.stage, s.prediction,
                  {shown_capped("s.prediction_text")}, s.correct, s.format_hit, s.gold,
                  s.gold_text, s.error_type, {WHOLE_METADATA}, s.options, s.marks,
                  s.option_order, r.prompt, {shown_capped("r.text")},
                  {shown_capped("r.error_message")},
                  r.latency_s, r.method, r.loglikelihoods, {shown_capped("r.reasoning")},
                  r.finish_reason, r.completion_tokens
           FROM scores s INDEXED BY scores_by_sample LEFT JOIN responses r ON r.key = s.key
           WHERE s.run_id = ? AND s.sample_id = ? ORDER BY s.model, s.repeat""",
        (run_id, sample_id),
    ).fetchall()
    return [
        Answer(
            model=r[0],
            repeat=int(r[1]),
            key=r[2],
            stage=r[3],
            prediction=r[4],
            prediction_text=r[5],
            correct=None if r[6] is None else bool(r[6]),
            format_hit=bool(r[7]),
            gold=_json_or_none(r[8]),
            gold_text=r[9],
            error_type=r[10],
            metadata=_decode(r[11]),
            options=_json_or_none(r[12]),
            marks=_json_or_none(r[13]),
            order=_json_or_none(r[14]),
            prompt=r[15],
            raw=r[16],
            error_message=r[17],
            latency_s=r[18],
            method=r[19],
            loglikelihoods=_json_or_none(r[20]),
            reasoning=r[21],
            finish_reason=r[22],
            completion_tokens=r[23],
        )
        for r in rows
    ]


def neighbour_samples(
    conn: sqlite3.Connection, run_id: str, sample_id: str
) -> tuple[str | None, str | None]:
    """The ids of the samples before and after `sample_id` in the run (None at either end)."""
    prev = conn.execute(
        "SELECT sample_id FROM scores INDEXED BY scores_by_sample WHERE run_id = ? "
        "AND sample_id < ? ORDER BY sample_id DESC LIMIT 1",
        (run_id, sample_id),
    ).fetchone()
    nxt = conn.execute(
        "SELECT sample_id FROM scores INDEXED BY scores_by_sample WHERE run_id = ? "
        "AND sample_id > ? ORDER BY sample_id LIMIT 1",
        (run_id, sample_id),
    ).fetchone()
    return (prev[0] if prev else None, nxt[0] if nxt else None)


# -- comparing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedAnswer:
    """What a comparison needs of one (sample, repeat) answer of one model."""

    correct: bool | None
    error_type: str | None
    prediction: int | None
    prediction_text: str | None
    raw: str | None
    gold: str
    """The gold answer's JSON as stored (compared between sides as text)."""
    gold_text: str
    stage: str | None = None
    """The score's stage (``mark``, ``unparsed``, ``truncated``...): how the answer was read."""


def paired_answers(
    conn: sqlite3.Connection, run_id: str, model: str
) -> dict[tuple[str, int], PairedAnswer]:
    """One model's answers in a run by (sample id, repeat), for a comparison."""
    rows = conn.execute(
        f"""SELECT s.sample_id, s.repeat, s.correct, s.error_type, s.prediction,
                  {shown_capped("s.prediction_text")}, {shown_capped("r.text")}, s.gold,
                  s.gold_text, s.stage
           FROM scores s LEFT JOIN responses r ON r.key = s.key
           WHERE s.run_id = ? AND s.model = ?""",
        (run_id, model),
    )
    return {
        (sid, rep): PairedAnswer(
            None if correct is None else bool(correct), etype, pred, ptext, raw, gold, gtext, stage
        )
        for sid, rep, correct, etype, pred, ptext, raw, gold, gtext, stage in rows
    }


def data_fingerprint(conn: sqlite3.Connection, run_id: str) -> str | None:
    """The data fingerprint a run's manifest records, or None."""
    run = read_run(conn, run_id)
    data = run.manifest.get("data") if run else None
    fp = data.get("fingerprint") if isinstance(data, dict) else None
    return fp if isinstance(fp, str) else None
