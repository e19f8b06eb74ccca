"""The import's join index: a benchmark's samples by id in a private SQLite file, not in memory.

A streamed import (`lmmprobe.predictions.scoring.plan_import` with ``on_chunk``) joins each
prediction to its sample here: the benchmark's samples are written once, in its order, to a
temporary on-disk database (deleted when closed), and each row looks its sample up by id (or
by the id after the benchmark's prefix, where only one sample has it: ``34602`` joins
``textvqa/34602``), so memory holds one chunk of rows, not a dict of every sample. The same
table remembers which samples were answered, and at which row: a second prediction for one
sample is found by the table, and the answered samples are read back in the benchmark's order
for the data fingerprint.

Samples are stored pickled: the database is this process's own temporary file, never read by
anything else, and a pickle gives back exactly the `Sample` stored (metadata of any type
included), so the fingerprint of the answered samples is the one the in-memory join gives.
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from types import TracebackType
from typing import Any

from lmmprobe.data.base import data_fingerprint
from lmmprobe.schema import RowSource, Sample, Score
from lmmprobe.schema import rows as schema_rows
from lmmprobe.schema.rows import FACT_KEYS, RowChunk

__all__ = ["FileOrderRows", "SampleIndex"]

_SCHEMA = """
CREATE TABLE sample (
    pos INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    short TEXT,
    body BLOB NOT NULL,
    row INTEGER,
    content TEXT
);
CREATE INDEX sample_id ON sample (id);
"""

_BATCH = 2000
"""Samples written per statement batch while indexing."""


class SampleIndex:
    """Samples by id (and by unambiguous short id) in a temporary SQLite file."""

    def __init__(self) -> None:
        # "" opens a private on-disk database that SQLite deletes when it is closed: its pages
        # spill to disk past the cache, so a million samples do not sit in memory.
        self._db = sqlite3.connect("")
        self._db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;" + _SCHEMA
        )
        self.total = 0
        """Samples indexed."""

    def __enter__(self) -> SampleIndex:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Drop the database (its file goes with it)."""
        self._db.close()

    def add_benchmark(
        self, samples: Iterable[Sample], key: Callable[[Sample], str | None] | None = None
    ) -> None:
        """Index a benchmark's samples, in its order, for `find` (call once, before finding).

        With `key`, each sample is also indexed by the key it gives (`find_key`).
        """
        batch: list[tuple[str, str | None, bytes, str | None]] = []
        for s in samples:
            _, sep, rest = s.id.partition("/")
            batch.append(
                (
                    s.id,
                    rest if sep and rest else None,
                    pickle.dumps(s, protocol=5),
                    key(s) if key is not None else None,
                )
            )
            if len(batch) >= _BATCH:
                self._insert(batch)
                batch = []
        self._insert(batch)
        if key is not None:
            self._db.execute("CREATE INDEX sample_content ON sample (content)")
        # A short id joins only where it names one sample and is no sample's full id.
        self._db.executescript(
            """
            CREATE TABLE short AS
                SELECT short AS key, max(pos) AS pos FROM sample
                WHERE short IS NOT NULL AND short NOT IN (SELECT id FROM sample)
                GROUP BY short HAVING count(*) = 1;
            CREATE UNIQUE INDEX short_key ON short (key);
            """
        )

    def _insert(self, batch: list[tuple[str, str | None, bytes, str | None]]) -> None:
        self._db.executemany(
            "INSERT INTO sample (id, short, body, content) VALUES (?, ?, ?, ?)", batch
        )
        self.total += len(batch)

    def find_key(self, key: str) -> list[Sample]:
        """The samples `key` names (at most two: more than one is ambiguous either way)."""
        rows = self._db.execute(
            "SELECT body FROM sample WHERE content = ? ORDER BY pos LIMIT 2", (key,)
        ).fetchall()
        return [_load(body) for (body,) in rows]

    def find_position(self, position: int) -> Sample | None:
        """The sample at `position` (0 for the first) in the benchmark's order, None past it."""
        if position < 0 or position >= self.total:
            return None
        hit = self._db.execute("SELECT body FROM sample WHERE pos = ?", (position + 1,)).fetchone()
        return None if hit is None else _load(hit[0])

    def find(self, sample_id: str) -> Sample | None:
        """The benchmark's sample of `sample_id` (or of that short id), None if none."""
        # The last sample of an id, as a dict built in the benchmark's order keeps it.
        hit = self._db.execute(
            "SELECT body FROM sample WHERE id = ? ORDER BY pos DESC LIMIT 1", (sample_id,)
        ).fetchone()
        if hit is None:
            hit = self._db.execute(
                "SELECT body FROM sample JOIN short USING (pos) WHERE key = ?", (sample_id,)
            ).fetchone()
        return None if hit is None else _load(hit[0])

    def claim(self, sample: Sample, row: int, *, add: bool = False) -> int | None:
        """Mark `sample` answered by `row`, or give the row that answered it first.

        With `add`, `sample` is indexed first (a gold from the file, in file order).
        """
        if add:
            first = self._db.execute(
                "SELECT row FROM sample WHERE id = ? LIMIT 1", (sample.id,)
            ).fetchone()
            if first is not None:
                return int(first[0])
            self._insert([(sample.id, None, pickle.dumps(sample, protocol=5), None)])
        marked = self._db.execute(
            "UPDATE sample SET row = ? WHERE id = ? AND row IS NULL", (row, sample.id)
        )
        if marked.rowcount:
            return None
        first = self._db.execute(
            "SELECT row FROM sample WHERE id = ? AND row IS NOT NULL LIMIT 1", (sample.id,)
        ).fetchone()
        return int(first[0])

    def answered_count(self) -> int:
        """How many samples are answered."""
        return int(
            self._db.execute("SELECT count(*) FROM sample WHERE row IS NOT NULL").fetchone()[0]
        )

    def answered(self) -> Iterator[Sample]:
        """The answered samples, one at a time, in the order they were indexed."""
        rows = self._db.execute("SELECT body FROM sample WHERE row IS NOT NULL ORDER BY pos")
        for (body,) in rows:
            yield _load(body)

    def fingerprint(self) -> str:
        """`data_fingerprint` of the answered samples, in the order they were indexed."""
        return data_fingerprint(self.answered())


def _load(body: bytes) -> Sample:
    sample = pickle.loads(body)
    assert isinstance(sample, Sample)
    return sample


class FileOrderRows:
    """A stored import's rows (`Store.rows`), read back in the file's order.

    The store yields a run's rows by sample id; an import's figures were always computed over
    its rows in the order the file gave them, and some depend on that order (balanced
    accuracy's classes are numbered by first appearance; a judged metric resamples its rows
    as they come). Each pass puts the stored chunks' rows in a temporary SQLite table keyed by
    their row in the file (``imported_row``) and reads them back in that order, a chunk at a
    time: the same rows, the same figures, in memory one chunk at a time.
    """

    def __init__(self, rows: RowSource) -> None:
        """Reorder `rows` (a stored import's: each row's metadata holds ``imported_row``)."""
        self.rows = rows

    def chunks(self, keys: Sequence[str] = ()) -> Iterator[RowChunk]:
        """The rows in chunks, in file order, with `FACT_KEYS` and `keys` (`RowSource`)."""
        asked = [*dict.fromkeys([*FACT_KEYS, *keys])]
        with closing(sqlite3.connect("")) as db:
            db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
            # Rows a reader numbers alike (files of a folder) keep the order they came in.
            db.execute("CREATE TABLE row (at INTEGER NOT NULL, body BLOB NOT NULL)")
            for chunk in self.rows.chunks([*keys, IMPORTED_ROW]):
                at = chunk.meta[IMPORTED_ROW]
                db.executemany(
                    "INSERT INTO row VALUES (?, ?)",
                    ((at[i], pickle.dumps(_row(chunk, i, asked), protocol=5))
                     for i in range(len(chunk))),
                )  # fmt: skip
            read = db.execute("SELECT body FROM row ORDER BY at, rowid")
            while batch := read.fetchmany(schema_rows.CHUNK_ROWS):
                yield _chunk([pickle.loads(body) for (body,) in batch], asked)

    def in_sample_order(self) -> RowSource | None:
        """The same rows in sample-id order: the store's own (its answer sums keep no id)."""
        return self.rows if getattr(self.rows, "by_sample", False) else None

    def scores(self) -> list[Score]:
        """Every row as a `Score`, in file order."""
        return sorted(self.rows.scores(), key=lambda s: int(s.metadata[IMPORTED_ROW]))


IMPORTED_ROW = "imported_row"
"""The metadata key of a stored imported row's line (row) in its file."""

_COLUMNS = tuple(name for name in RowChunk.__slots__ if name != "meta")


def _row(chunk: RowChunk, i: int, keys: Sequence[str]) -> tuple[Any, ...]:
    """Row `i` of `chunk`: its columns, then its values of `keys`."""
    return (
        *(getattr(chunk, name)[i] for name in _COLUMNS),
        *(chunk.meta[k][i] for k in keys),
    )


def _chunk(rows: list[tuple[Any, ...]], keys: Sequence[str]) -> RowChunk:
    """The `RowChunk` of rows made by `_row`."""
    out = RowChunk()
    columns = list(zip(*rows, strict=True)) if rows else []
    for n, name in enumerate(_COLUMNS):
        setattr(out, name, list(columns[n]))
    out.meta = {k: list(columns[len(_COLUMNS) + n]) for n, k in enumerate(keys)}
    return out
