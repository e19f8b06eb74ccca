"""The store's layout: its version, the tables of a new store, and the migrations to it.

`SCHEMA_VERSION` is kept in the ``meta`` table; `lmmprobe.store.sqlite.Store` creates a new
store with `DDL`, `DDL_5`, `DDL_7`, `DDL_9`, `DDL_10`, `DDL_12`, `DDL_13` and `DDL_14` and migrates an older one step by step
through `MIGRATIONS`, inside one transaction.

A score row's metadata is kept once per sample (schema 10): `metadata_part` is what a row
stores of it, `metadata_whole` (and `WHOLE_METADATA`, the same in SQL) reads it back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from lmmprobe.schema import MAX_REPLY_CHARS

__all__ = [
    "CAPPED_COLUMNS",
    "DDL",
    "DDL_5",
    "DDL_7",
    "DDL_9",
    "DDL_10",
    "DDL_11",
    "DDL_12",
    "DDL_13",
    "DDL_14",
    "MAX_STORED_TEXT",
    "MIGRATIONS",
    "OUR_TABLES",
    "OWN_SCHEMA",
    "SCHEMA_VERSION",
    "WHOLE_METADATA",
    "capped",
    "foreign_objects",
    "metadata_part",
    "metadata_whole",
    "over_cap",
    "past_cap",
    "shown_capped",
    "within_cap",
]

SCHEMA_VERSION = 14
"""Version of the database layout, kept in the ``meta`` table.

1: the first layout. 2: stored likelihood responses name their method ``likelihood`` (1 wrote
``loglikelihood``); the tables are unchanged. 3: scores record the sample's formulation and the
options, marks and order shown (``formulation``, ``options``, ``marks``, ``option_order``; NULL
in rows scored before). 4: runs record their owner process (``owner``: host, pid and process
start), so a run whose process died can be told from one still going. 5: runs record the
samples they asked (``samples``: the sample JSON as the run saw it, its question in a column of
its own, images as references a viewer can serve), image bytes a run held only in memory or as
base64 are kept once per content in ``images`` (keyed by `ImageRef.content_hash`),
``battles`` holds the arena's human votes, and an index on scores by (run, sample) lets a
viewer page through a run's rows and read one sample's answers quickly. 6: responses record
whether an API key was taken out of their answer before it was stored (``redacted``; NULL in
rows stored before, read as not redacted). 7: ``answer_scores`` keeps per-answer scores that
depend only on the answer, its reference and the scoring definition
(`lmmprobe.store.answer_scores`), so a re-run does not compute them again. 8: responses
record the thinking a server sent apart from the text (``reasoning``), why generation stopped
(``finish_reason``) and the reasoning tokens of the usage (``reasoning_tokens``); NULL in rows
stored before, read as "none sent" and "unknown" (their text, inline thinking included, is
split when it is scored, so old answers are read by today's rules). 9: ``judgements`` keeps the
verdicts of judges (and of a judge protocol's rules) on a run's answers, one row per (run,
model, sample, repeat, judge, protocol, version, attempt); a run stored before has none.
``judge_votes`` keeps a judge's votes on the arena's human battles (``lmmprobe arena judge``):
one row per (battle, judge, protocol, version, image sent or not), with both orders' verdicts.
10: a sample's metadata is kept once per run and sample (``samples.row_metadata``) instead of
in every score row of every model and repeat; a row's ``metadata`` holds only what it adds
(`metadata_part`). Rows stored before are rewritten so, in place; the ``score_metadata`` view
gives every row's whole metadata to other tools reading the file. 11: ``image_checks``
remembers each image file the data loader checked (its resolved path, size and modification
time, its dimensions and content hash), so a run reading an unchanged file again neither decodes
nor hashes it (`lmmprobe.data.rows.check_image`); a store migrated to 11 starts with none.
12: ``image_checks`` tells a file unchanged by its size and status-change time (``ctime_ns``)
instead of its modification time, which a copy, an untar or ``touch -d`` sets back (re-test 8);
the checks a store remembered are dropped, and the next run checks its images again.
13: an index on runs newest first (``runs_newest``: ``created_at``, ``id``), so a page of the
runs list reads its runs only, not every run of a store holding 100,000 (re-test 11 #19); the
migration builds it, and the tables are unchanged.
14: ``load_checks`` remembers the first read of a large data file (`lmmprobe.data.remembered_loads`):
the figures a read gives (count, fingerprints, kinds), keyed by the file's bytes, the reading
rules' code and settings, with where each image file was found (path, size, ``ctime_ns``), so a
run reading the same bytes and unchanged images again does not parse and validate every row to
learn them; a store migrated to 14 starts with none.
"""


# The tables of a new store, created together with its ``meta`` row.
DDL = (
    """CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        status TEXT NOT NULL,
        spec TEXT NOT NULL,
        manifest TEXT,
        results TEXT,
        out_dir TEXT,
        owner TEXT
    )""",
    """CREATE TABLE responses (
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
        created_at REAL NOT NULL,
        redacted INTEGER,
        reasoning TEXT,
        finish_reason TEXT,
        reasoning_tokens INTEGER
    )""",
    """CREATE TABLE scores (
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
        formulation TEXT,
        options TEXT,
        marks TEXT,
        option_order TEXT,
        PRIMARY KEY (run_id, model, sample_id, repeat)
    )""",
)

# Added by schema 5 (new stores and the migration from 4 alike): idempotent, so a migration
# can run them over tables that exist already.
DDL_5 = (
    # The question has a column of its own so the viewer's pages and text search never parse
    # the sample's JSON. ``row_metadata`` (schema 10) is the metadata its score rows share.
    """CREATE TABLE IF NOT EXISTS samples (
        run_id TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        question TEXT,
        sample TEXT NOT NULL,
        row_metadata TEXT,
        PRIMARY KEY (run_id, sample_id)
    )""",
    # Image bytes by content: the same picture asked by many runs is kept once.
    """CREATE TABLE IF NOT EXISTS images (hash TEXT PRIMARY KEY, data BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS battles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at REAL NOT NULL,
        rater TEXT NOT NULL,
        run_id TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        model_a TEXT NOT NULL,
        model_b TEXT NOT NULL,
        key_a TEXT NOT NULL,
        key_b TEXT NOT NULL,
        vote TEXT NOT NULL CHECK (vote IN ('a', 'b', 'tie', 'both_bad')),
        UNIQUE (rater, run_id, sample_id, repeat, model_a, model_b)
    )""",
    # One sample's answers by every model, and a run's rows in sample order (the viewer's
    # sample browser pages through it) without a scan of the run. The verdict columns ride
    # along so that filtering and counting by them reads the index alone, never the rows.
    """CREATE INDEX IF NOT EXISTS scores_by_sample
        ON scores (run_id, sample_id, model, repeat, correct, stage, format_hit)""",
)

# Added by schema 7: per-answer scores by (metric, version, scoring model, answer + reference
# hash); see `lmmprobe.store.answer_scores`.
DDL_7 = (
    """CREATE TABLE IF NOT EXISTS answer_scores (
        metric TEXT NOT NULL,
        version INTEGER NOT NULL,
        scorer TEXT NOT NULL,
        pair TEXT NOT NULL,
        value REAL NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (metric, version, scorer, pair)
    ) WITHOUT ROWID""",
)

# Added by schema 9: a judge's (or a protocol rule's) verdict on one answer of a run; the
# judge's own reply is a response like any other, under `key`. `judge` is '' where a rule
# decided (a primary key column cannot be NULL).
DDL_9 = (
    """CREATE TABLE IF NOT EXISTS judgements (
        run_id TEXT NOT NULL,
        model TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        judge TEXT NOT NULL,
        protocol TEXT NOT NULL,
        version TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        decided_by TEXT NOT NULL CHECK (decided_by IN ('rule', 'judge', 'unjudged')),
        key TEXT,
        value REAL,
        reading TEXT,
        detail TEXT NOT NULL,
        reason TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, model, sample_id, repeat, judge, protocol, version, attempt)
    )""",
    # A judge's vote on a human battle (`battles.id`), asked in both orders; the judge's
    # replies are responses under `key_first` / `key_swapped`. `winner` is NULL when unjudged.
    """CREATE TABLE IF NOT EXISTS judge_votes (
        battle_id INTEGER NOT NULL,
        judge TEXT NOT NULL,
        protocol TEXT NOT NULL,
        version TEXT NOT NULL,
        sees_image INTEGER NOT NULL,
        key_first TEXT,
        key_swapped TEXT,
        first TEXT CHECK (first IN ('A', 'B', 'tie')),
        swapped TEXT CHECK (swapped IN ('A', 'B', 'tie')),
        winner TEXT CHECK (winner IN ('a', 'b', 'tie')),
        reason TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (battle_id, judge, protocol, version, sees_image)
    )""",
)

# A score row's metadata (schema 10). Every row of one sample of a run (each model, each
# repeat) used to carry the sample's metadata whole; now the run's ``samples`` row keeps it
# once, as JSON text (``row_metadata``: the metadata of the sample's rows, which is not the
# sample's own: the keys only the formulator reads are left out and the benchmark tag's keys
# added, `Sample.row_metadata`), and a row keeps only what it adds. A row's metadata can
# differ from its sample's: an imported row adds the other tool's reading and verdict
# (``imported_row``, ``tool_verdict``...), and a caller may store any Score. So a row's
# ``metadata`` column holds, by its first character:
#
# - ``''``: the row's metadata is the shared text exactly (every row a run scores);
# - ``,``: the shared text with members appended: the shared text less its closing ``}``,
#   followed by this (``, "imported_row": 7}``): keys added at scoring or import time;
# - ``{``: the row's whole metadata, as before schema 10: a row whose sample has no shared
#   text (a run stored before schema 5, rows stored without their samples) or whose metadata
#   is not the shared text with members appended (a value changed, a key left out).
#
# The split is on text, never on decoded values, so a row reads back exactly the JSON text it
# was given (key order, ``1.0`` against ``1``, NaN): exports and every figure are unchanged,
# and SQLite's JSON functions read the joined text as they read the whole column before. The
# shared text is written once and never changed (a sample recorded again keeps it), so a
# stored row always reads back what it was written as.


MAX_STORED_TEXT = MAX_REPLY_CHARS
"""The longest free text lmmprobe stores in one column, in characters: what a backend keeps of a
reply (`lmmprobe.schema.MAX_REPLY_CHARS`). It holds for every column of text that comes from
outside and that commands read (`CAPPED_COLUMNS`): an answer's text and thinking (a judge's
reply is a response too), a server's error message, the answer a row's matcher read or an
imported file held (``prediction_text``), and a judge's reading and reasons. lmmprobe cuts what
it writes there to the cap (`capped`, `lmmprobe.store.Store.put_responses`,
`lmmprobe.store.Store.put_judgements`), so a longer stored text was written by another program
(or edited by hand): a reader refuses it (`over_cap`, `past_cap`), or shows a marker in its
place (`shown_capped`), and measures it in SQL (``length()``) so that Python never receives
it."""

CAPPED_COLUMNS: dict[str, tuple[str, ...]] = {
    "responses": ("text", "reasoning", "error_message"),
    "scores": ("prediction_text",),
    "judgements": ("reading", "reason"),
    "judge_votes": ("reason",),
}
"""The columns `MAX_STORED_TEXT` holds, by table: free text from outside (a model, a server, a
judge, an imported file) that commands read. A dataset's own texts (a question, its prompt, the
reference answer) have no cap where they are read, and lmmprobe's JSON columns are decoded by
`lmmprobe.schema.text.stored_json`, under its own rules."""


def capped(value: str | None) -> str | None:
    """`value` cut to `MAX_STORED_TEXT` characters, as lmmprobe writes a `CAPPED_COLUMNS` text.

    What a backend keeps of a reply already: a local backend, a server's error message or a
    judge's reason that is longer is held to the same cap, so that a stored text past it is
    always damage.
    """
    return None if value is None else value[:MAX_STORED_TEXT]


def within_cap(column: str, name: str | None = None) -> str:
    """SQL: `column`, or NULL where it is longer than `MAX_STORED_TEXT` (see `over_cap`).

    Args:
        column: A column of text, as the query names it (``r.text``).
        name: The name the value is read under (``AS name``), if one is given.

    """
    named = "" if name is None else f" AS {name}"
    return f"(CASE WHEN length({column}) > {MAX_STORED_TEXT} THEN NULL ELSE {column} END){named}"


def over_cap(*columns: str) -> str:
    """SQL: the first of `columns` longer than `MAX_STORED_TEXT` with its length, else NULL.

    The value reads ``text column holds 52,428,800 characters``, for `past_cap` to turn into a
    refusal.
    """
    whens = " ".join(
        f"WHEN length({c}) > {MAX_STORED_TEXT} THEN '{c.rsplit('.', 1)[-1]} column holds ' "
        f"|| printf('%,d', length({c})) || ' characters'"
        for c in columns
    )
    return f"(CASE {whens} END)"


def past_cap(where: str, found: str) -> str:
    """The one-line refusal of a stored text `over_cap` found longer than lmmprobe writes.

    Args:
        where: The store and row (``/x/db.sqlite: run R's answer to sample 's'``).
        found: `over_cap`'s value.

    """
    return (
        f"{where}: its {found}, more than the {MAX_STORED_TEXT:,} lmmprobe stores of a text "
        "(damaged, or written by another program); not read: re-run it, or pass another --db"
    )


def shown_capped(column: str) -> str:
    """SQL: `column`, or a bracketed marker naming its length where it is past `MAX_STORED_TEXT`.

    For a viewer, which shows the other rows rather than refusing the page.
    """
    return (
        f"(CASE WHEN length({column}) > {MAX_STORED_TEXT} THEN '[a stored text of ' || "
        f"printf('%,d', length({column})) || ' characters, more than lmmprobe stores: not shown]' "
        f"ELSE {column} END)"
    )


def metadata_part(shared: str | None, whole: str) -> str:
    """What a score row stores of its metadata JSON `whole`, given its sample's `shared` text.

    Args:
        shared: The sample's ``row_metadata`` (None where the run holds none for it).
        whole: The row's metadata as JSON text (an object).

    Returns:
        ``''`` (the shared text), ``, ...}`` (members appended to it) or `whole` itself.

    """
    if shared is None:
        return whole
    if whole == shared:
        return ""
    # An object with members, less its "}", then ", ": `whole` holds every member of the
    # shared text, in order and written alike, and more after them.
    cut = len(shared) - 1
    if cut > 1 and whole.startswith(shared[:cut]) and whole.startswith(", ", cut):
        return whole[cut:]
    return whole


def metadata_whole(shared: str | None, part: str) -> str:
    """A score row's metadata JSON text from its stored `part` and its sample's `shared` text.

    Raises:
        ValueError: `part` refers to a shared text the run does not hold (a damaged file).

    """
    if part.startswith("{"):
        return part
    if shared is None:
        raise ValueError("a score row refers to its sample's metadata, which is not stored")
    return shared if part == "" else shared[:-1] + part


# `metadata_whole` in SQL, for a query over ``scores s``: the JSON functions (a filter on a
# metadata key) and other tools read the row's whole metadata from it. SQLite's substr and
# length count characters of text, as Python's slices do.
WHOLE_METADATA = """(CASE WHEN substr(s.metadata, 1, 1) = '{' THEN s.metadata
    ELSE (SELECT CASE s.metadata WHEN '' THEN sm.row_metadata
                 ELSE substr(sm.row_metadata, 1, length(sm.row_metadata) - 1) || s.metadata END
          FROM samples sm WHERE sm.run_id = s.run_id AND sm.sample_id = s.sample_id) END)"""

# Added by schema 10 (new stores and the migration from 9): every score row's whole metadata,
# for tools that read the file (``SELECT metadata FROM score_metadata``).
DDL_10 = (
    f"""CREATE VIEW IF NOT EXISTS score_metadata AS
        SELECT s.run_id, s.model, s.sample_id, s.repeat, {WHOLE_METADATA} AS metadata
        FROM scores s""",
)

# Added by schema 11 (new stores and the migration from 10): image files the data loader found
# readable, by resolved path; a row holds only while the file's size and mtime_ns are these.
DDL_11 = (
    """CREATE TABLE IF NOT EXISTS image_checks (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        content_hash TEXT NOT NULL
    ) WITHOUT ROWID""",
)

# Schema 12 (new stores and the migration from 11): the same, a file's identity being its size
# and st_ctime_ns, which writing it or setting its times back always moves (no program sets it).
DDL_12 = (
    """CREATE TABLE IF NOT EXISTS image_checks (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        ctime_ns INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        content_hash TEXT NOT NULL
    ) WITHOUT ROWID""",
)

# Added by schema 13: the runs list's order (`lmmprobe.store.runs.read_runs`), newest first,
# read from the index a page at a time instead of sorting every run of the store.
DDL_13 = ("CREATE INDEX IF NOT EXISTS runs_newest ON runs (created_at DESC, id DESC)",)

# Added by schema 14 (new stores and the migration from 13): one remembered first read per data
# spec and settings (``source``, a hash), holding while ``content`` (a hash of the file's bytes
# and the reading rules' code) is the same; ``images`` is each image check of that read, JSON
# compressed with zlib (`lmmprobe.data.remembered_loads`).
DDL_14 = (
    """CREATE TABLE IF NOT EXISTS load_checks (
        source TEXT PRIMARY KEY,
        content TEXT NOT NULL,
        created_at REAL NOT NULL,
        summary TEXT NOT NULL,
        images BLOB NOT NULL
    )""",
)


OUR_TABLES = (
    "runs",
    "responses",
    "scores",
    "samples",
    "images",
    "battles",
    "judgements",
    "judge_votes",
    "image_checks",
    "load_checks",
)


OWN_SCHEMA: frozenset[tuple[str, str]] = frozenset(
    {("table", name) for name in ("meta", "answer_scores", *OUR_TABLES)}
    | {("index", "scores_by_sample"), ("index", "runs_newest"), ("view", "score_metadata")}
)
"""Every (type, name) in ``sqlite_master`` that any schema version of lmmprobe creates (with
SQLite's own ``sqlite_*`` objects: automatic indexes, ``sqlite_sequence``, ``ANALYZE``'s
statistics). Anything else was added by hand or by another program: a trigger would run on
lmmprobe's own writes (and could rewrite its figures), and a view or table in place of one of
these would be read as lmmprobe's, so a store holding one is refused (`foreign_objects`)."""


def foreign_objects(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """The (type, name) of schema objects in the database that lmmprobe did not create.

    Args:
        conn: A connection to the store.

    Returns:
        Them in ``sqlite_master``'s order (none in a store only lmmprobe wrote).

    """
    rows = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    return [
        (str(kind), str(name))
        for kind, name in rows
        if (kind, name) not in OWN_SCHEMA
        # SQLite reserves the prefix: only SQLite itself makes such tables and indexes.
        and not (kind in ("table", "index") and str(name).startswith("sqlite_"))
    ]


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    # One name per concept: likelihood requests are "likelihood" everywhere now.
    conn.execute("UPDATE responses SET method = 'likelihood' WHERE method = 'loglikelihood'")


def _migrate_3_to_4(conn: sqlite3.Connection) -> None:
    # Runs record their owner process; runs stored before have none and are never marked.
    have = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    if "owner" not in have:
        conn.execute("ALTER TABLE runs ADD COLUMN owner TEXT")


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    # Scores record what was shown, so an export can be read again by another matcher. Rows
    # scored before keep NULL there (and say so when someone tries).
    have = {row[1] for row in conn.execute("PRAGMA table_info(scores)")}
    for column in ("formulation", "options", "marks", "option_order"):
        if column not in have:
            conn.execute(f"ALTER TABLE scores ADD COLUMN {column} TEXT")


def _migrate_4_to_5(conn: sqlite3.Connection) -> None:
    # Runs stored before record no samples: a viewer shows their rows without questions or
    # images (the scores and responses are all there).
    for statement in DDL_5:
        conn.execute(statement)


def _migrate_5_to_6(conn: sqlite3.Connection) -> None:
    # Responses stored before recorded no redaction: NULL, read as "nothing was taken out"
    # (older versions scrubbed error messages only, and those show "[redacted]" themselves).
    have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    if "redacted" not in have:
        conn.execute("ALTER TABLE responses ADD COLUMN redacted INTEGER")


def _migrate_6_to_7(conn: sqlite3.Connection) -> None:
    # An empty cache: the first re-run computes and keeps the per-answer scores.
    for statement in DDL_7:
        conn.execute(statement)


def _migrate_7_to_8(conn: sqlite3.Connection) -> None:
    # Responses stored before record no separate thinking, no finish reason and no reasoning
    # tokens: NULL, read as "none sent" and "unknown".
    have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    for column, kind in (
        ("reasoning", "TEXT"),
        ("finish_reason", "TEXT"),
        ("reasoning_tokens", "INTEGER"),
    ):
        if column not in have:
            conn.execute(f"ALTER TABLE responses ADD COLUMN {column} {kind}")


def _migrate_8_to_9(conn: sqlite3.Connection) -> None:
    # Runs stored before were judged by nobody: an empty table.
    for statement in DDL_9:
        conn.execute(statement)


def _migrate_9_to_10(conn: sqlite3.Connection) -> None:
    # Each recorded sample's rows share the metadata of the first of them (by model, then
    # repeat); every row then keeps only its part (`metadata_part`, the one rule, applied by
    # SQLite through a function of this connection). Samples never recorded (runs stored
    # before schema 5) and rows of samples with no rows keep NULL: their rows stay whole.
    have = {row[1] for row in conn.execute("PRAGMA table_info(samples)")}
    if "row_metadata" not in have:
        conn.execute("ALTER TABLE samples ADD COLUMN row_metadata TEXT")
    conn.execute(
        """UPDATE samples SET row_metadata = (
               SELECT s.metadata FROM scores s INDEXED BY scores_by_sample
               WHERE s.run_id = samples.run_id AND s.sample_id = samples.sample_id
               ORDER BY s.model, s.repeat LIMIT 1)
           WHERE row_metadata IS NULL"""
    )
    conn.create_function("lmmprobe_metadata_part", 2, metadata_part, deterministic=True)
    # Only rows still whole: run again (by hand, or a newer copy), it changes nothing.
    conn.execute(
        """UPDATE scores SET metadata = lmmprobe_metadata_part((
               SELECT sm.row_metadata FROM samples sm
               WHERE sm.run_id = scores.run_id AND sm.sample_id = scores.sample_id), metadata)
           WHERE substr(metadata, 1, 1) = '{'"""
    )
    for statement in DDL_10:
        conn.execute(statement)


def _migrate_10_to_11(conn: sqlite3.Connection) -> None:
    # Nothing checked yet: the first run reading the images checks them and fills it.
    for statement in DDL_11:
        conn.execute(statement)


def _migrate_11_to_12(conn: sqlite3.Connection) -> None:
    # A remembered modification time says nothing of a file's status-change time: the checks
    # are dropped (they only save work), and the next run reading the images checks them again.
    conn.execute("DROP TABLE IF EXISTS image_checks")
    for statement in DDL_12:
        conn.execute(statement)


def _migrate_12_to_13(conn: sqlite3.Connection) -> None:
    for statement in DDL_13:
        conn.execute(statement)


def _migrate_13_to_14(conn: sqlite3.Connection) -> None:
    # One self-contained step: a new, empty table (nothing else changes). The next run that
    # reads a large data file reads it in full, as before, and remembers that read.
    for statement in DDL_14:
        conn.execute(statement)


# Version n → n + 1, run in order inside one transaction when an older store is opened.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
    3: _migrate_3_to_4,
    4: _migrate_4_to_5,
    5: _migrate_5_to_6,
    6: _migrate_6_to_7,
    7: _migrate_7_to_8,
    8: _migrate_8_to_9,
    9: _migrate_9_to_10,
    10: _migrate_10_to_11,
    11: _migrate_11_to_12,
    12: _migrate_12_to_13,
    13: _migrate_13_to_14,
}
