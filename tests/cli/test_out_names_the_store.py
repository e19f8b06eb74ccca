"""Every command that takes ``--out``/``-o`` keeps the store when ``--out`` names it (re-test 11 #13).

``arena export -o db.sqlite --db db.sqlite`` truncated the store to 0 bytes, exit 0, and renamed
a fixed ``.NAME.tmp`` over a device node or a link. The file commands (``export``, ``report``,
``arena export``, ``arena judge``) now write through `lmmprobe.cli._common.write_out_file`; the
folder commands (``run``, ``judge``, ``import``, ``apex``, ``synth generate``) take a folder,
and a plain file (the store) is refused as not one. Each runs through the real console script.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.store import Store
from lmmprobe.store.battles import record_vote

JUDGE = "openai:j@http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one run of the ``random`` baseline and one arena vote on its answers."""
    root = tmp_path_factory.mktemp("out-store")
    db = root / "db.sqlite"
    for model in ("random", "first"):
        proc = lmmprobe("run", "-q", "-m", model, "-d", "demo,n=3", "--db", db,
                        "--out", root / model)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    with Store(db) as store:
        rows = store.conn.execute(
            "SELECT run_id, sample_id, repeat, model, key FROM scores ORDER BY run_id"
        ).fetchall()
        (run_a, sample, repeat, model_a, key_a) = rows[0]
        other = next(r for r in rows if r[1] == sample and r[3] != model_a)
        record_vote(store, rater="kim", run_id=run_a, sample_id=sample, repeat=repeat,
                    model_a=model_a, model_b=other[3], key_a=key_a, key_b=other[4],
                    vote="a")  # fmt: skip
    return db


@pytest.fixture
def db(made: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "db.sqlite"
    copy.write_bytes(made.read_bytes())
    return copy


def _file_commands(db: Path) -> list[tuple[object, ...]]:
    return [
        ("export", "latest", "--out", db),
        ("report", "latest", "--out", db),
        ("report", "latest", "--format", "csv", "--out", Path(f"{db}-wal")),
        ("arena", "export", "-o", db),
        ("arena", "export", "-o", Path(f"{db}-shm")),
        ("arena", "judge", "--judge", JUDGE, "-o", db),
    ]


FILE_COMMANDS = ["export", "report", "report-csv-wal", "arena-export", "arena-export-shm",
                 "arena-judge"]  # fmt: skip


@pytest.mark.parametrize("which", range(len(FILE_COMMANDS)), ids=FILE_COMMANDS)
def test_a_file_out_naming_the_store_is_refused_in_one_line_and_the_store_kept(
    db: Path, which: int
) -> None:
    command = _file_commands(db)[which]
    before = db.read_bytes()
    proc = lmmprobe(*command, "--db", db, OPENAI_API_KEY="test-key")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: --out {command[-1]} is the store "), line
    assert line.endswith("name another file"), line
    assert db.read_bytes() == before
    assert lmmprobe("runs", "--db", db).returncode == 0


FOLDER_COMMANDS = {
    "run": ("run", "-q", "-m", "random", "-d", "demo,n=3"),
    "judge": ("judge", "latest", "--judge", JUDGE),
    "import": ("import", "PREDICTIONS"),
    "apex": ("apex", "Can models identify rotated images?", "-m", "random", "--max-calls", "1"),
    "synth-generate": ("synth", "generate", "--n", "1"),
}


@pytest.mark.parametrize("name", list(FOLDER_COMMANDS))
def test_a_folder_out_naming_the_store_is_refused_and_the_store_kept(
    db: Path, tmp_path: Path, name: str
) -> None:
    # These take a folder: the store is a plain file, refused as not one before anything is made.
    command = list(FOLDER_COMMANDS[name])
    if "PREDICTIONS" in command:
        predictions = tmp_path / "p.jsonl"
        predictions.write_text(json.dumps({"id": "a", "prediction": "A", "gold": "A"}) + "\n")
        command[command.index("PREDICTIONS")] = str(predictions)
    db_option = () if name in ("apex", "synth-generate") else ("--db", db)
    before = db.read_bytes()
    proc = lmmprobe(*command, *db_option, "--out", db, OPENAI_API_KEY="test-key")
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr
    assert str(db) in proc.stderr.strip().splitlines()[-1], proc.stderr[-2000:]
    assert db.read_bytes() == before
    assert lmmprobe("runs", "--db", db).returncode == 0


def test_arena_export_writes_through_a_link_and_ignores_a_planted_temporary(
    db: Path, tmp_path: Path
) -> None:
    # The fixed `.NAME.tmp` was renamed over a link (the link became a file, its target kept
    # the old text) and a planted `.NAME.tmp` link was followed, writing its target.
    target = tmp_path / "kept.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    (tmp_path / ".out.jsonl.tmp").symlink_to(victim)
    assert lmmprobe("arena", "export", "-o", link, "--db", db).returncode == 0
    assert link.is_symlink()
    (row,) = [json.loads(x) for x in target.read_text().splitlines()]
    assert row["vote"] == "a"
    done = lmmprobe("arena", "export", "-o", tmp_path / "out.jsonl", "--db", db)
    assert done.returncode == 0, done.stderr[-2000:]
    assert victim.read_text() == "keep\n"
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 1


def test_arena_export_to_a_device_writes_into_it_and_leaves_it_a_device(
    db: Path, tmp_path: Path
) -> None:
    # A device node was replaced by a regular file: as root, `-o /dev/null` would have
    # replaced the machine's /dev/null. Shown on a node of our own, never the real one.
    node = tmp_path / "mynull"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    done = lmmprobe("arena", "export", "-o", node, "--db", db)
    assert done.returncode == 0, done.stderr[-2000:]
    assert stat.S_ISCHR(node.stat().st_mode)
