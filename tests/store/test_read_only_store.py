"""A store on read-only media: the commands that only read it open it read-only, and read it.

The store is made by a real run, then its file and folder are made read-only (chmod). Root
ignores file permissions, so where the tests run as root each command runs in a child process
whose capabilities are dropped (``prctl(PR_CAPBSET_DROP)``, then ``exec``): then root is held
to the permission bits like any user, as on a read-only mount. A probe checks that
the folder really cannot be written by such a process, or the tests skip saying why.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmmprobe.store import Store, StoreAccessError
from lmmprobe.store.layout import SCHEMA_VERSION
from lmmprobe.store.seal import SEAL_SUFFIX

LMMPROBE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent)) or "lmmprobe"
# Runs a command with an empty capability bounding set: after its ``exec``, even root holds
# no capability (PR_CAPBSET_DROP is 24; capabilities this kernel lacks fail, ignored).
_WITHOUT_CAPABILITIES = (
    "import ctypes, ctypes.util, os, sys\n"
    "libc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
    "for cap in range(64):\n"
    "    libc.prctl(24, cap, 0, 0, 0)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


def _can_write_in(folder: Path, prefix: list[str]) -> bool:
    code = "import sys; open(sys.argv[1], 'w').close()"
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", code, str(folder / "p")], capture_output=True, check=False
    )
    (folder / "p").unlink(missing_ok=True)
    return probe.returncode == 0


@pytest.fixture(scope="module")
def as_user(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """What to run a command with so that permission bits apply to it (empty: they do)."""
    folder = tmp_path_factory.mktemp("probe")
    folder.chmod(0o555)
    dropped = [sys.executable, "-c", _WITHOUT_CAPABILITIES]
    try:
        if not _can_write_in(folder, []):
            return []
        if not _can_write_in(folder, dropped):
            return dropped
    finally:
        folder.chmod(0o755)
    pytest.skip(
        "file permissions cannot be made to apply here (root that cannot drop capabilities)"
    )


def _lmmprobe(*args: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), LMMPROBE, *args], capture_output=True, text=True, timeout=300, check=False
    )


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store written by a real run of two models (closed: all of it in the one file)."""
    root = tmp_path_factory.mktemp("written")
    db = root / "store" / "s.db"
    proc = _lmmprobe(
        "run", "-q", "-m", "random", "-m", "first", "-d", "demo,n=40", "--db", str(db),
        "--out", str(root / "out"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with Store(db) as store:
        run_id = store.resolve_run("latest")
    assert sorted(p.name for p in db.parent.iterdir()) == ["s.db", f"s.db{SEAL_SUFFIX}"]
    return db, run_id


@pytest.fixture
def read_only_store(written: tuple[Path, str], tmp_path: Path) -> Iterator[Path]:
    """A copy of the written store, its file and folder made read-only (restored after)."""
    folder = tmp_path / "media"
    folder.mkdir()
    db = folder / "s.db"
    shutil.copyfile(written[0], db)
    db.chmod(0o444)
    folder.chmod(0o555)
    yield db
    folder.chmod(0o755)
    db.chmod(0o644)


READS = {
    "show": (["show"], "results:"),
    "runs": (["runs"], "RUN"),
    "export": (["export", "latest"], '"sample_id"'),
    "report": (["report", "latest", "-f", "md"], "random"),
    "compare": (["compare", "latest", "-m", "random", "-m", "first"], "McNemar"),
}


@pytest.mark.parametrize("command", sorted(READS))
def test_read_commands_read_a_store_on_read_only_media(
    written: tuple[Path, str],
    read_only_store: Path,
    as_user: list[str],
    command: str,
) -> None:
    args, expected = READS[command]
    before = _listing(read_only_store.parent)
    proc = _lmmprobe(*args, "--db", str(read_only_store), prefix=as_user)
    assert proc.returncode == 0, proc.stderr
    assert expected.replace("RUN", written[1]) in proc.stdout, proc.stdout[-2000:]
    assert _listing(read_only_store.parent) == before  # nothing made, nothing changed


def test_writing_to_a_store_on_read_only_media_is_one_line(
    read_only_store: Path, as_user: list[str]
) -> None:
    proc = _lmmprobe(
        "run", "-q", "-m", "random", "-d", "demo,n=3", "--db", str(read_only_store), prefix=as_user
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "read-only" in lines[0] and str(read_only_store) in lines[0]


def _copied_mid_write(src: Path, folders: dict[str, tuple[str, ...]]) -> None:
    """Copy `src` while a writer has a change in its -wal: the files each folder gets."""
    work = src.parent.parent / "mid-write"
    work.mkdir(exist_ok=True)
    db = work / "s.db"
    shutil.copyfile(src, db)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint = 0")  # the change stays in the -wal
        writer.execute("UPDATE runs SET status = 'changed-in-the-wal'")
        for folder, suffixes in folders.items():
            (src.parent.parent / folder).mkdir()
            for suffix in suffixes:
                shutil.copyfile(f"{db}{suffix}", src.parent.parent / folder / f"s.db{suffix}")
    finally:
        writer.close()


def test_pending_changes_in_a_read_only_folder_are_read_or_refused(
    written: tuple[Path, str], tmp_path: Path, as_user: list[str]
) -> None:
    src = tmp_path / "src" / "s.db"
    src.parent.mkdir()
    shutil.copyfile(written[0], src)
    # As a killed run leaves a store (with its -wal and -shm), and copied without the -shm.
    _copied_mid_write(src, {"whole": ("", "-wal", "-shm"), "no-shm": ("", "-wal")})
    for name in ("whole", "no-shm"):
        (tmp_path / name).chmod(0o555)
    try:
        whole = _lmmprobe(
            "runs", "-f", "json", "--db", str(tmp_path / "whole" / "s.db"), prefix=as_user
        )
        assert whole.returncode == 0, whole.stderr
        assert [r["status"] for r in json.loads(whole.stdout)] == ["changed-in-the-wal"]
        # Without the -shm, SQLite could read the -wal only by making one; reading the file
        # alone would show what the -wal changed as it was before: refused instead.
        partial = _lmmprobe("runs", "--db", str(tmp_path / "no-shm" / "s.db"), prefix=as_user)
        lines = partial.stderr.strip().splitlines()
        assert partial.returncode == 2 and len(lines) == 1, partial.stderr
        assert "s.db-wal" in lines[0] and "writable" in lines[0] and "--db" in lines[0]
        assert "changed-in-the-wal" not in partial.stdout
    finally:
        for name in ("whole", "no-shm"):
            (tmp_path / name).chmod(0o755)


def _as_version_4(db: Path) -> None:
    conn = sqlite3.connect(db)
    for statement in (
        "DROP INDEX scores_by_sample",
        "DROP TABLE samples",
        "DROP TABLE images",
        "DROP TABLE battles",
        "UPDATE meta SET value = '4' WHERE key = 'schema_version'",
    ):
        conn.execute(statement)
    conn.commit()
    conn.close()


def test_an_older_store_on_read_only_media_says_what_to_do(
    written: tuple[Path, str], tmp_path: Path, as_user: list[str]
) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    db = folder / "s.db"
    shutil.copyfile(written[0], db)
    _as_version_4(db)
    folder.chmod(0o555)
    try:
        proc = _lmmprobe("show", "--db", str(db), prefix=as_user)
    finally:
        folder.chmod(0o755)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "schema version 4" in lines[0] and "writable folder" in lines[0]


def test_an_older_store_that_can_be_written_is_migrated_then_read(
    written: tuple[Path, str], tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    shutil.copyfile(written[0], db)
    _as_version_4(db)
    with Store(db, read_only=True) as store:
        assert store.resolve_run("latest") == written[1]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    conn.close()


def test_read_commands_never_create_a_store(tmp_path: Path) -> None:
    db = tmp_path / "nowhere" / "s.db"
    for args in (["show"], ["export", "latest"], ["arena", "export", "-o", str(tmp_path / "v")]):
        proc = _lmmprobe(*args, "--db", str(db))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert f"no store at {db}" in lines[0] and "lmmprobe run" in lines[0]
    assert not db.parent.exists()


def test_a_read_only_store_object_refuses_writes_and_leaves_no_files(
    written: tuple[Path, str], tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    shutil.copyfile(written[0], db)
    data = db.read_bytes()
    with Store(db, read_only=True) as store:
        assert [r["id"] for r in store.list_runs()] == [written[1]]
        with pytest.raises(StoreAccessError, match="opened read-only") as info:
            store.create_run("new", {}, str(tmp_path / "out"))
        assert info.value.reason == "read_only"
    assert db.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]  # no -wal or -shm left
