"""`lmmprobe arena export` then `lmmprobe elo`, through the real console script: the same
numbers as the arena's live leaderboard."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_arena_support import build_demo_store, client_for, start_rater, vote_once

LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LMMPROBE, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def voted_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = build_demo_store(tmp_path_factory.mktemp("arena-cli"))
    votes = itertools.cycle(["a", "a", "b", "tie", "both_bad", "a", "b"])
    for rater in ("kim", "lee"):
        with client_for(db) as client:
            token = start_rater(client, rater)
            for _ in range(11):
                assert vote_once(client, token, vote=next(votes)) is not None
    return db


def test_export_then_elo_prints_the_leaderboards_numbers(voted_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "battles.jsonl"
    done = _cli("arena", "export", "-o", str(out), "--db", str(voted_db))
    assert done.returncode == 0, done.stderr
    assert "22 vote(s)" in done.stdout
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 22 and {r["rater"] for r in rows} == {"kim", "lee"}
    assert {r["winner"] for r in rows if r["vote"] == "both_bad"} == {"tie"}

    elo = _cli("elo", str(out), "--format", "json")
    assert elo.returncode == 0, elo.stderr
    printed = json.loads(elo.stdout)
    with client_for(voted_db) as client:
        board = client.get("/arena/api/leaderboard").json()
    assert printed["battles"] == board["votes"] == 22
    assert printed["models"] == board["models"]
    # And the table form shows the same Elo to one decimal.
    table = _cli("elo", str(out))
    assert table.returncode == 0, table.stderr
    for row in board["models"]:
        assert f"{row['elo']:.1f}" in table.stdout


def test_export_of_a_store_without_votes_and_bad_paths(tmp_path: Path) -> None:
    from lmmprobe.store import Store

    db = tmp_path / "empty.db"
    Store(db).close()
    out = tmp_path / "none.jsonl"
    done = _cli("arena", "export", "-o", str(out), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "" and "No votes" in done.stdout
    bad = _cli("arena", "export", "-o", str(tmp_path / "missing" / "x.jsonl"), "--db", str(db))
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    folder = _cli("arena", "export", "-o", str(tmp_path), "--db", str(db))
    assert folder.returncode == 2 and "is a folder" in folder.stderr
