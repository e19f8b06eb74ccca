"""`lmmprobe report RUN_FOLDER` finds the run's store whatever store the working folder holds.

A run's results.json names its store as the run's working folder saw it (by default the relative
``lmmprobe-runs/lmmprobe.db``), so reported from another folder the name can lead to another
store: one a newer lmmprobe wrote, or a file that is no store. That store is not the run's; the
store beside the run folder is looked at next, else the report is made from results.json.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.store.test_read_only_store import _as_version_4


def _newer(path: Path) -> None:
    made = lmmprobe("run", "-m", "first", "--data", "demo,n=2", "-q", "--db", path)
    assert made.returncode == 0, made.stdout + made.stderr
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    conn.close()


def _no_store(path: Path) -> None:
    path.write_text("notes, not a store\n", encoding="utf-8")


@pytest.mark.parametrize("make", [_newer, _no_store], ids=["newer-store", "no-store"])
def test_a_run_folder_is_reported_from_another_folder_holding_another_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], None]
) -> None:
    # Re-test 19: from a folder whose lmmprobe-runs/lmmprobe.db was a newer lmmprobe's store
    # (or no store), `report ../A/lmmprobe-runs/RUN` failed ("written by a newer lmmprobe",
    # "move it aside") though the run's own store sat beside its folder.
    (tmp_path / "A").mkdir()
    (tmp_path / "B" / "lmmprobe-runs").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "A")
    ran = lmmprobe("run", "-m", "random", "--data", "demo,n=3", "-q")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (folder,) = (p for p in (tmp_path / "A" / "lmmprobe-runs").iterdir() if p.is_dir())
    other = tmp_path / "B" / "lmmprobe-runs" / "lmmprobe.db"
    make(other)
    before = other.read_bytes()
    monkeypatch.chdir(tmp_path / "B")
    proc = lmmprobe("report", Path("..") / "A" / "lmmprobe-runs" / folder.name, "-f", "md")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"# lmmprobe report: {folder.name}" in proc.stdout
    assert "| random |" in proc.stdout  # from the run's own store: its leaderboard row
    assert "no store holds it" not in proc.stderr, proc.stderr
    assert "not the store its results.json names" in proc.stderr, proc.stderr
    assert other.read_bytes() == before  # the other store left as it was
    # A store the user names with --db is still refused when it cannot be read.
    named = lmmprobe("report", tmp_path / "A" / "lmmprobe-runs" / folder.name, "-f", "md",
                     "--db", other)  # fmt: skip
    assert named.returncode == 2 and "Traceback" not in named.stderr, named.stderr


def _schema(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        (value,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        conn.close()
    return str(value)


def test_an_older_store_a_run_folder_names_only_by_its_relative_path_is_not_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 19 of issue 34 (#18): reported from another folder, results.json's relative
    # store name led to that folder's store, which was an older lmmprobe's: opening it
    # migrated it (a write) though it was another run's store.
    (tmp_path / "A").mkdir()
    (tmp_path / "B" / "lmmprobe-runs").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "A")
    ran = lmmprobe("run", "-m", "random", "--data", "demo,n=3", "-q")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (folder,) = (p for p in (tmp_path / "A" / "lmmprobe-runs").iterdir() if p.is_dir())
    other = tmp_path / "B" / "lmmprobe-runs" / "lmmprobe.db"
    made = lmmprobe("run", "-m", "first", "--data", "demo,n=2", "-q", "--db", other)
    assert made.returncode == 0, made.stdout + made.stderr
    _as_version_4(other)
    before = other.read_bytes()
    monkeypatch.chdir(tmp_path / "B")
    proc = lmmprobe("report", Path("..") / "A" / "lmmprobe-runs" / folder.name, "-f", "md")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| random |" in proc.stdout  # from the run's own store, beside its folder
    said = " ".join(proc.stderr.split())
    assert "is an lmmprobe store of schema version 4" in said, said
    assert "not migrated unasked, as it may be another run's store" in said
    assert "`lmmprobe runs` migrates it" in said  # the command, as run from here
    assert other.read_bytes() == before and _schema(other) == "4"
