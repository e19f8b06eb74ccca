"""Store schema 6: responses record whether a key was taken out of their answer (issue 23, 10).

A store written before keeps working: it is migrated in place, its responses read as not
redacted, and new responses (redacted or not) are stored next to them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lmmprobe.schema import Request, Response
from lmmprobe.store import Store
from lmmprobe.store.layout import SCHEMA_VERSION


def _request(key: str) -> Request:
    return Request(key=key, sample_id=key, method="generate", messages=[], prompt="?")


def test_a_version_5_store_is_migrated_and_reads_as_not_redacted(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store(db) as store:
        store.put_responses("m", [_request("old")], [Response(key="old", text="(A)")])
    conn = sqlite3.connect(db)  # what a version 5 store looks like: no redacted column
    conn.execute("ALTER TABLE responses DROP COLUMN redacted")
    conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()

    with Store(db) as store:
        assert store.get_responses(["old"])["old"] == Response(key="old", text="(A)")
        new = Response(key="new", text="(B) key: [redacted]", redacted=True)
        store.put_responses("m", [_request("new")], [new])
        got = store.get_responses(["old", "new"])
    assert got["new"].redacted and not got["old"].redacted
    conn = sqlite3.connect(db)
    (version,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    rows = dict(conn.execute("SELECT key, redacted FROM responses"))
    conn.close()
    assert version == str(SCHEMA_VERSION) and rows == {"old": None, "new": 1}
