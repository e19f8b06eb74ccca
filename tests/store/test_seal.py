"""The integrity check before a store's first write is skipped only for a file sealed unchanged.

`Store.check_integrity` reads the whole file: before, every command that wrote paid a read of
the store. A store this code checked and closed cleanly is sealed (`lmmprobe.store.seal`) and
its next write skips the check; a file damaged in place since (even with its modification time
set back), a copy of it, or a store left with its write-ahead log by a killed process is
checked as before, and a damaged one refused.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.store import Store, StoreDamagedError
from lmmprobe.store.seal import SEAL_SUFFIX


def _checks_before_write(db: Path, out: Path) -> int:
    """How many integrity checks a store's first write on `db` ran (SQLite's statement trace)."""
    statements: list[str] = []
    with Store(db) as store:
        store.conn.set_trace_callback(statements.append)
        store.create_run(uuid.uuid4().hex, {}, str(out))
    return sum("quick_check" in s for s in statements)


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    """A store a real run wrote and closed (so sealed), pages enough to damage one."""
    db = tmp_path / "s.db"
    done = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=300", "--db", db)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"s.db{SEAL_SUFFIX}").is_file()
    return db


def test_a_store_closed_cleanly_is_not_read_whole_before_its_next_write(
    sealed: Path, tmp_path: Path
) -> None:
    assert _checks_before_write(sealed, tmp_path / "o") == 0
    # That write was SQLite's, closed cleanly: the store is sealed again, and stays unchecked.
    assert _checks_before_write(sealed, tmp_path / "o") == 0


def test_a_new_store_is_sealed_on_close(tmp_path: Path) -> None:
    db = tmp_path / "n.db"
    with Store(db) as store:  # its tables' creation, its first write, checked the empty file
        store.create_run("r0", {}, str(tmp_path / "o"))
        assert not db.with_name(db.name + SEAL_SUFFIX).exists()
    assert db.with_name(db.name + SEAL_SUFFIX).is_file()
    assert _checks_before_write(db, tmp_path / "o") == 0


def test_a_sealed_store_damaged_in_place_is_checked_and_refused(sealed: Path) -> None:
    before = sealed.stat()
    with sealed.open("r+b") as fh:  # a page of responses, damaged where the file lies
        fh.seek((before.st_size // 4096 // 2) * 4096 + 100)
        fh.write(bytes(range(200)) * 4)
    os.utime(sealed, ns=(before.st_atime_ns, before.st_mtime_ns))  # its time set back, too
    damaged = sealed.read_bytes()
    done = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=3", "--db", sealed)
    assert done.returncode == 2
    assert "integrity check" in done.stderr and "Traceback" not in done.stderr
    assert sealed.read_bytes() == damaged
    with Store(sealed) as store, pytest.raises(StoreDamagedError):
        store.create_run("r", {}, str(sealed.parent / "out"))


def test_a_copy_of_a_sealed_store_with_its_seal_is_checked(sealed: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / "s.db"
    copy.parent.mkdir()
    shutil.copy2(sealed, copy)  # times kept; the seal copied beside it
    shutil.copy2(
        sealed.with_name(sealed.name + SEAL_SUFFIX), copy.with_name(copy.name + SEAL_SUFFIX)
    )
    assert _checks_before_write(copy, tmp_path / "o") == 1


_KILLED_WRITER = textwrap.dedent(
    """
    import os, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("UPDATE runs SET status = status")
    os._exit(9)  # killed: the log stays beside the store, the close never happened
    """
)


def test_a_store_a_killed_writer_left_is_checked(sealed: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(sealed)], check=False, timeout=60)
    assert sealed.with_name(sealed.name + "-wal").exists()
    assert _checks_before_write(sealed, tmp_path / "o") == 1


def test_a_store_another_connection_holds_open_is_not_sealed(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with Store(db) as store:
        store.create_run("r0", {}, str(tmp_path / "o"))
    other = sqlite3.connect(db)
    try:
        other.execute("SELECT 1 FROM runs").fetchall()
        # Its log is beside the store: a connection is at work, so the store is checked.
        assert _checks_before_write(db, tmp_path / "o") == 1
        # Closed while the other connection reads: the log stays, so no seal is left.
        assert not db.with_name(db.name + SEAL_SUFFIX).exists()
    finally:
        other.close()
    assert _checks_before_write(db, tmp_path / "o") == 1


def test_a_fifo_where_the_seal_goes_is_no_seal_and_hangs_nothing(tmp_path: Path) -> None:
    # A FIFO named like the seal (no writer on it): opening it blocking would hang every
    # write command on the store. It is no seal: the store is checked and written.
    db = tmp_path / "f.db"
    with Store(db) as store:
        store.create_run("r0", {}, str(tmp_path / "o"))
    seal_path = db.with_name(db.name + SEAL_SUFFIX)
    seal_path.unlink()
    os.mkfifo(seal_path)
    code = textwrap.dedent(
        f"""
        import uuid
        from pathlib import Path
        from lmmprobe.store import Store
        statements = []
        with Store(Path({str(db)!r})) as store:
            store.conn.set_trace_callback(statements.append)
            store.create_run(uuid.uuid4().hex, {{}}, {str(tmp_path / "o")!r})
        print(sum("quick_check" in s for s in statements))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"  # checked, since no seal could be read


def _damage(db: Path) -> None:
    """A page of responses in the middle of `db` overwritten outside SQLite."""
    with db.open("r+b") as fh:
        fh.seek((db.stat().st_size // 4096 // 2) * 4096 + 100)
        fh.write(bytes(range(200)) * 4)


@pytest.mark.parametrize("when", ["between-writes", "before-close"])
def test_a_store_damaged_while_a_writer_has_it_open_is_not_sealed_and_is_checked_next(
    when: str, sealed: Path, tmp_path: Path
) -> None:
    # Re-test 15 #2: the writer sealed the file it closed, damage and all, and every later
    # write command skipped the check and wrote into it (exit 0).
    with Store(sealed) as store:
        store.create_run("r1", {}, str(tmp_path / "o"))  # sealed: no check before it
        _damage(sealed)  # someone else's write, while the store is open
        if when == "between-writes":
            store.create_run("r2", {}, str(tmp_path / "o"))
    done = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=3", "--db", sealed)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "integrity check" in done.stderr and "Traceback" not in done.stderr


def test_a_seal_that_cannot_be_put_in_place_leaves_nothing_beside_the_store(
    tmp_path: Path,
) -> None:
    # Re-test 15 #3: a folder where the seal goes made each close leave its part file
    # (s.db-checked.PID.THREAD) beside the store, one more a command.
    db = tmp_path / "s.db"
    (tmp_path / f"s.db{SEAL_SUFFIX}").mkdir()
    for seed in ("1", "2"):
        done = lmmprobe("run", "-q", "-m", "random", "-d", "demo,n=3", "--seed", seed,
                        "--db", db)  # fmt: skip
        assert done.returncode == 0, done.stderr
    beside = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("s.db"))
    assert beside == ["s.db", f"s.db{SEAL_SUFFIX}"]
