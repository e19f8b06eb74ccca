"""The store's schema version: recorded on creation, checked on every open.

A store written by a newer lmmprobe is refused with a message naming the file, both versions
and what to do; an older one is migrated in place and keeps its data.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.schema import Response
from lmmprobe.store import Store
from lmmprobe.store.errors import StoreVersionError
from lmmprobe.store.layout import SCHEMA_VERSION


def _version(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(
            conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        )
    finally:
        conn.close()


def _set_version(path: Path, value: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (value,))
    finally:
        conn.close()


def _store_a_likelihood_answer(path: Path, method: str) -> None:
    """A response row as a version-1 store held it (method spelled as given)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO responses (key, model, method, prompt, text, loglikelihoods, latency_s, "
            "created_at) VALUES ('k1', 'hf:x', ?, 'Which color?', NULL, '[-0.5,-2.0]', 0.1, 0)",
            (method,),
        )
    finally:
        conn.close()


def test_new_store_records_our_version(tmp_db: Path) -> None:
    Store(tmp_db).close()
    assert _version(tmp_db) == str(SCHEMA_VERSION)
    Store(tmp_db).close()  # opening again checks and keeps it
    assert _version(tmp_db) == str(SCHEMA_VERSION)


def test_newer_store_is_refused_with_what_to_do(tmp_db: Path) -> None:
    Store(tmp_db).close()
    _set_version(tmp_db, str(SCHEMA_VERSION + 1))
    with pytest.raises(StoreVersionError) as info:
        Store(tmp_db)
    message = str(info.value)
    assert str(tmp_db) in message
    assert f"version {SCHEMA_VERSION + 1}" in message and f"version {SCHEMA_VERSION}" in message
    assert "upgrade lmmprobe" in message.lower()
    assert _version(tmp_db) == str(SCHEMA_VERSION + 1)  # left as it was


def test_version_1_store_is_migrated_and_keeps_its_data(tmp_db: Path) -> None:
    Store(tmp_db).close()
    _store_a_likelihood_answer(tmp_db, "loglikelihood")
    _set_version(tmp_db, "1")
    with Store(tmp_db) as store:
        assert store.get_responses(["k1"]) == {
            "k1": Response(key="k1", loglikelihoods=[-0.5, -2.0], latency_s=0.1)
        }
        method = store.conn.execute("SELECT method FROM responses WHERE key = 'k1'").fetchone()
    assert method == ("likelihood",)
    assert _version(tmp_db) == str(SCHEMA_VERSION)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_store_older_than_any_migration_is_refused(tmp_db: Path, value: str) -> None:
    Store(tmp_db).close()
    _set_version(tmp_db, value)
    with pytest.raises(StoreVersionError, match=f"version {value}, which this lmmprobe"):
        Store(tmp_db)


def test_unreadable_version_is_refused(tmp_db: Path) -> None:
    Store(tmp_db).close()
    _set_version(tmp_db, "two")
    with pytest.raises(StoreVersionError, match="'two', not a number"):
        Store(tmp_db)


def test_database_lmmprobe_did_not_write_is_refused(tmp_db: Path) -> None:
    tmp_db.parent.mkdir(parents=True)
    conn = sqlite3.connect(tmp_db)
    conn.execute("CREATE TABLE responses (id INTEGER)")
    conn.close()
    with pytest.raises(StoreVersionError, match="not written by lmmprobe"):
        Store(tmp_db)


def test_refused_store_leaves_no_open_connection(tmp_db: Path) -> None:
    Store(tmp_db).close()
    _set_version(tmp_db, str(SCHEMA_VERSION + 1))
    with pytest.raises(StoreVersionError):
        Store(tmp_db)
    _set_version(tmp_db, str(SCHEMA_VERSION))  # the file is not locked by the failed open
    Store(tmp_db).close()


@pytest.mark.parametrize("command", [["show"], ["export", "latest"], ["report", "latest"]])
def test_commands_refuse_a_newer_store_cleanly(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "new.db"
    Store(db).close()
    _set_version(db, str(SCHEMA_VERSION + 1))
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    out = ["--out", str(tmp_path / "r.html")] if command[0] == "report" else []
    proc = subprocess.run(
        [exe, *command, "--db", str(db), *out], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"version {SCHEMA_VERSION + 1}" in proc.stderr and str(db) in proc.stderr.replace(
        "\n", ""
    )
