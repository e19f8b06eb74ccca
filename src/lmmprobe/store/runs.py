"""The one reader of the store's ``runs`` table: every listing and description of runs uses it.

A run row holds three JSON columns (``spec``, ``manifest``, ``results``) that lmmprobe versions
have written differently over time, and that a person may have edited by hand. They are decoded
here, once, the same way for every caller (`lmmprobe runs`, ``lmmprobe serve``, `Store`):

- an empty column (a run still going has no results) reads as ``{}``;
- a column that is not JSON, or whose JSON is not an object (or is nested more than 100
  levels, or holds a number out of range such as ``1e999``), reads as ``{}`` and is named in
  `StoredRun.damaged`, so a listing shows missing figures instead of crashing, while a caller
  that needs the document (a report of that run) can refuse it with a clear message;
- figures a run of an older version did not record read as missing: the models come from the
  spec, else from the results (runs written before specs listed them); the sample count from
  the results, else from the manifest (a run stopped before it had results).

Works on a `Store`'s connection and on the read-only connections of
`lmmprobe.store.queries.Readers` alike: it only reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lmmprobe.schema.text import stored_json

__all__ = ["StoredRun", "count_runs", "decode_column", "read_run", "read_runs"]

_COLUMNS = "id, created_at, updated_at, status, spec, manifest, results, out_dir"
_NEWEST_FIRST = "ORDER BY created_at DESC, id DESC"
# SQLite's bound-parameter limit is 999 on old builds: ids are asked for in chunks below it.
_CHUNK = 500


def decode_column(text: str | bytes | None) -> dict[str, Any] | None:
    """A JSON column as a dict: ``{}`` when empty, None when it is not a JSON object.

    Args:
        text: The column's value as stored.

    """
    if not text:
        return {}
    try:
        value = stored_json(text)
    except ValueError:  # UnicodeDecodeError is a ValueError too
        return None
    return value if isinstance(value, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class StoredRun:
    """One row of the ``runs`` table, its JSON columns decoded."""

    id: str
    created_at: float
    """When the run started (seconds since the epoch)."""
    updated_at: float
    status: str
    spec: dict[str, Any]
    """The run's `RunSpec` as stored (``{}`` when empty or damaged)."""
    manifest: dict[str, Any]
    """The run's manifest (``{}`` before it is written, or when damaged)."""
    results: dict[str, Any]
    """The run's results, what results.json holds (``{}`` while it has none, or when damaged)."""
    out_dir: str | None
    """The folder the run writes its files to."""
    damaged: tuple[str, ...] = field(default=())
    """The JSON columns (``spec``, ``manifest``, ``results``) whose text did not decode."""

    @property
    def data(self) -> str | None:
        """The data spec the run evaluates (None when its spec names none)."""
        data = self.spec.get("data")
        return None if data is None else str(data)

    @property
    def models(self) -> list[str]:
        """The run's models: those its spec asks for, else those its results hold."""
        asked = self.spec.get("models")
        if asked and isinstance(asked, list):
            return [str(m) for m in asked]
        return [str(m) for m in self.model_results]

    @property
    def model_results(self) -> dict[str, Any]:
        """The results' ``models`` object (model → its figures), ``{}`` when absent."""
        return _dict(self.results.get("models"))

    def metrics(self, model: str) -> dict[str, Any]:
        """A model's metrics in the run's results (name → ``{value, low, high, n}``)."""
        return _dict(_dict(self.model_results.get(model)).get("metrics"))

    @property
    def samples(self) -> int | None:
        """Samples the run evaluates: from its results, else its manifest (None if neither)."""
        data = _dict(self.results.get("data"))
        n = data.get("samples", _dict(self.manifest.get("data")).get("samples"))
        return n if isinstance(n, int) else None


def _stored(row: Sequence[Any]) -> StoredRun:
    run_id, created, updated, status, spec_text, manifest_text, results_text, out_dir = row
    docs: dict[str, dict[str, Any]] = {}
    damaged: list[str] = []
    for name, text in (("spec", spec_text), ("manifest", manifest_text), ("results", results_text)):
        value = decode_column(text)
        if value is None:
            damaged.append(name)
        docs[name] = value or {}
    return StoredRun(
        id=str(run_id),
        created_at=float(created),
        updated_at=float(updated),
        status=str(status),
        spec=docs["spec"],
        manifest=docs["manifest"],
        results=docs["results"],
        out_dir=None if out_dir is None else str(out_dir),
        damaged=tuple(damaged),
    )


def read_runs(
    conn: sqlite3.Connection,
    limit: int | None = None,
    offset: int = 0,
    *,
    ids: Sequence[str] | None = None,
) -> list[StoredRun]:
    """Stored runs, newest first (ties by id, newest-looking first).

    Args:
        conn: A connection to the store (a `Store`'s, or a read-only one).
        limit: Return at most this many (None: all).
        offset: Skip this many newest runs first.
        ids: Only these runs (those absent are left out); `limit` and `offset` then apply to
            each chunk of 500 ids, so pass them only with `ids` left None.

    """
    bound = -1 if limit is None else limit
    if ids is None:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM runs {_NEWEST_FIRST} LIMIT ? OFFSET ?", (bound, offset)
        ).fetchall()
        return [_stored(r) for r in rows]
    found: list[StoredRun] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM runs WHERE id IN ({marks}) {_NEWEST_FIRST}", chunk
        ).fetchall()
        found += [_stored(r) for r in rows]
    return found


def read_run(conn: sqlite3.Connection, run_id: str) -> StoredRun | None:
    """One stored run by its exact id (None when the store holds no such run)."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else _stored(row)


def count_runs(conn: sqlite3.Connection) -> int:
    """How many runs the store holds."""
    return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
