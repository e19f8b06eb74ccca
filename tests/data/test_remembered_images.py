"""A run checks an image file once: later runs on the same store reuse the check while the file
is unchanged (its resolved path, size and status-change time), and check a changed one again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from PIL import Image
from tests.console import lmmprobe

CHECKS = "SELECT path, size, ctime_ns, width, height, content_hash FROM image_checks"
SENT = "SELECT sample FROM samples ORDER BY rowid DESC LIMIT 1"


def _data(tmp_path: Path) -> tuple[Path, Path]:
    image = tmp_path / "img" / "a.png"
    image.parent.mkdir()
    Image.new("RGB", (16, 12), (200, 30, 30)).save(image)
    data = tmp_path / "q.jsonl"
    row = {"id": "q1", "images": ["img/a.png"], "question": "What colour?",
           "choices": ["red", "blue"], "answer": 0}  # fmt: skip
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return data, image


def _run(data: Path, db: Path, out: Path, **env: str) -> Any:
    return lmmprobe("run", "--model", "first", "--data", data, "--db", db, "--out", out,
                    "--bootstrap", "0", "-q", **env)  # fmt: skip


def _model(out: Path) -> dict[str, Any]:
    model: dict[str, Any] = json.loads((out / "results.json").read_text())["models"]["first"]
    return model


def test_an_image_checked_by_an_earlier_run_is_not_decoded_again_unless_it_changed(
    tmp_path: Path,
) -> None:
    data, image = _data(tmp_path)
    db = tmp_path / "s.db"
    first = _run(data, db, tmp_path / "1")
    assert first.returncode == 0, first.stderr
    before = image.stat()
    with sqlite3.connect(db) as c:
        remembered = c.execute(CHECKS).fetchall()
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    assert remembered == [
        (str(image.resolve()), before.st_size, before.st_ctime_ns, 16, 12, digest)
    ]
    # Unchanged: the remembered check is used as it is, hash included. (Made to remember
    # another hash here, the run records that one and asks anew under the key it gives: the
    # file was neither decoded nor hashed again.)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE image_checks SET content_hash = ?", ("f" * 64,))
    second = _run(data, db, tmp_path / "2")
    assert second.returncode == 0, second.stderr
    assert (
        _model(tmp_path / "2")["stats"]["cached"],
        _model(tmp_path / "2")["stats"]["called"],
    ) == (0, 1)
    with sqlite3.connect(db) as c:
        assert "f" * 64 in c.execute(SENT).fetchone()[0]
        c.execute("UPDATE image_checks SET content_hash = ?", (digest,))
    # A lower pixel cap than the one it was checked under: checked again (and refused: the
    # file is no image now), not waved through.
    capped = _run(data, db, tmp_path / "3", LMMPROBE_MAX_IMAGE_PIXELS="100")
    assert capped.returncode != 0 and "unreadable image img/a.png" in capped.stderr
    # Other bytes of the same size, the modification time set back (as `cp -p`, `rsync -t`
    # or an untar leave a replaced file): its ctime moved, so it is checked again, and
    # refused naming the file (re-test 8 #1: the old picture's check and answer were reused).
    image.write_bytes(b"\0" * before.st_size)
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    changed = _run(data, db, tmp_path / "4")
    assert changed.returncode != 0
    assert "unreadable image img/a.png" in changed.stderr
    # Made readable again: checked, and remembered as it is now.
    Image.new("RGB", (8, 8), (30, 30, 200)).save(image)
    again = _run(data, db, tmp_path / "5")
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db) as c:
        ((_, size, ctime_ns, width, height, content_hash),) = c.execute(CHECKS).fetchall()
    now = image.stat()
    assert (size, ctime_ns, width, height) == (now.st_size, now.st_ctime_ns, 8, 8)
    assert content_hash == hashlib.sha256(image.read_bytes()).hexdigest()


def test_a_store_of_schema_10_gains_the_table_in_place(tmp_path: Path) -> None:
    data, _ = _data(tmp_path)
    db = tmp_path / "s.db"
    assert _run(data, db, tmp_path / "1").returncode == 0
    with sqlite3.connect(db) as c:  # as schema 10 left it: no such table
        c.execute("DROP TABLE image_checks")
        c.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    again = _run(data, db, tmp_path / "2")
    assert again.returncode == 0, again.stderr
    assert _model(tmp_path / "2")["stats"]["cached"] == 1  # the earlier answers are all there
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "14",
        )
        assert len(c.execute(CHECKS).fetchall()) == 1


def test_a_picture_replaced_by_another_of_the_same_size_is_checked_and_asked_again(
    tmp_path: Path,
) -> None:
    # Re-test 8 #1: a red picture replaced by a blue one of the same byte size, its
    # modification time set back: the second run read the red one's answer from the store
    # and recorded the red one's sha256.
    data, image = _data(tmp_path)
    db = tmp_path / "s.db"
    assert _run(data, db, tmp_path / "1").returncode == 0
    before = image.stat()
    blue = tmp_path / "blue.png"
    Image.new("RGB", (16, 12), (30, 30, 200)).save(blue)
    assert blue.stat().st_size == before.st_size  # a flat picture: the same size in PNG
    image.write_bytes(blue.read_bytes())
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = _run(data, db, tmp_path / "2")
    assert second.returncode == 0, second.stderr
    stats = _model(tmp_path / "2")["stats"]
    assert (stats["cached"], stats["called"]) == (0, 1)
    with sqlite3.connect(db) as c:
        assert hashlib.sha256(blue.read_bytes()).hexdigest() in c.execute(SENT).fetchone()[0]


def test_a_store_of_schema_11_forgets_its_checks_and_checks_again(tmp_path: Path) -> None:
    data, image = _data(tmp_path)
    db = tmp_path / "s.db"
    assert _run(data, db, tmp_path / "1").returncode == 0
    with sqlite3.connect(db) as c:  # as schema 11 left it: modification times
        c.execute("DROP TABLE image_checks")
        c.execute(
            "CREATE TABLE image_checks (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
            "mtime_ns INTEGER NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL, "
            "content_hash TEXT NOT NULL) WITHOUT ROWID"
        )
        info = image.stat()
        c.execute("INSERT INTO image_checks VALUES (?, ?, ?, 16, 12, ?)",
                  (str(image.resolve()), info.st_size, info.st_mtime_ns, "f" * 64))  # fmt: skip
        c.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    again = _run(data, db, tmp_path / "2")
    assert again.returncode == 0, again.stderr
    assert _model(tmp_path / "2")["stats"]["cached"] == 1  # the answers are all there
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "14",
        )
        assert c.execute(CHECKS).fetchall() == [
            (str(image.resolve()), info.st_size, image.stat().st_ctime_ns, 16, 12, digest)
        ]


def _rows(db: Path, run_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """A run's recorded samples and score rows, its id left out (the one thing that differs)."""
    with sqlite3.connect(db) as c:
        samples = c.execute(
            "SELECT sample_id, question, sample, row_metadata FROM samples WHERE run_id = ? "
            "ORDER BY sample_id",
            (run_id,),
        ).fetchall()
        columns = [r[1] for r in c.execute("PRAGMA table_info(scores)") if r[1] != "run_id"]
        scores = c.execute(
            f"SELECT {', '.join(columns)} FROM scores WHERE run_id = ? "
            "ORDER BY model, sample_id, repeat",
            (run_id,),
        ).fetchall()
    return {"samples": samples, "scores": scores}


def test_a_cached_re_run_stores_and_prints_exactly_what_the_first_run_did(
    tmp_path: Path,
) -> None:
    # A re-run answered wholly from the store (every image check remembered, the pixel cap
    # read once for the load) records the same samples and score rows as the run that asked
    # the model, and prints the same table and figures.
    folder = tmp_path / "img"
    folder.mkdir()
    for name, colour in (("a", (200, 30, 30)), ("b", (30, 200, 30)), ("c", (30, 30, 200))):
        Image.new("RGB", (16, 12), colour).save(folder / f"{name}.png")
    rows = [
        {"id": "q1", "images": ["img/a.png"], "question": "What colour?",
         "choices": ["red", "green", "blue"], "answer": 0, "metadata": {"task": "colour"}},
        {"id": "q2", "images": ["img/b.png", "img/c.png", "img/b.png"], "question": "Which two?",
         "choices": ["green and blue", "red"], "answer": 0,
         "metadata": {"task": "pair", "tags": ["x", "y"]}},
        {"id": "q3", "images": [], "question": "No picture: yes?", "choices": ["yes", "no"],
         "answer": 1},
        {"id": "q4", "images": ["img/c.png"], "question": "Name it.", "answer": ["blue"]},
    ]  # fmt: skip
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "s.db"
    runs = []
    for out in ("1", "2"):
        done = lmmprobe(
            "run", "--model", "first", "--data", data, "--db", db, "--out", tmp_path / out,
            "--repeats", "2", "--by", "task", "--bootstrap", "200",
            LMMPROBE_MAX_IMAGE_PIXELS="1_000_000",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(done)
    first, second = (json.loads((tmp_path / o / "results.json").read_text()) for o in "12")
    asked, again = _model(tmp_path / "1")["stats"], _model(tmp_path / "2")["stats"]
    assert (again["called"], again["cached"]) == (0, asked["called"]) and asked["called"] == 4
    assert _rows(db, first["run_id"]) == _rows(db, second["run_id"])
    assert _rows(db, first["run_id"])["scores"]  # (rows there to compare)
    for doc in (first, second):
        for model in doc["models"].values():
            model.pop("stats")  # where the answers came from: differs on purpose
    assert first["models"] == second["models"]

    def shown(text: str, run_id: str) -> str:
        # The counts line says where the answers came from; the rest is the same text.
        return "\n".join(
            line.replace(run_id, "RUN")
            .replace(str(tmp_path / "1"), "OUT")
            .replace(str(tmp_path / "2"), "OUT")
            for line in text.splitlines()
            if " requests, " not in line
        )

    assert shown(runs[0].stdout, first["run_id"]) == shown(runs[1].stdout, second["run_id"])


def test_a_dry_run_reads_an_image_an_earlier_run_checked_from_its_remembered_check(
    tmp_path: Path,
) -> None:
    """``run --dry-run`` reuses the store's image checks, as the run it plans does."""
    data, _ = _data(tmp_path)
    db = tmp_path / "s.db"
    assert _run(data, db, tmp_path / "1").returncode == 0
    dry = lmmprobe("run", "--model", "first", "--data", data, "--db", db, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "first: 0 request(s) to send of 1; 1 answered in the store" in " ".join(
        dry.stdout.split()
    )
    # Made to remember another hash, the dry run keys the request by it (the file is neither
    # decoded nor hashed again), and finds no answer under that key: one to send, as the
    # run would send it (see the test above).
    with sqlite3.connect(db) as c:
        c.execute("UPDATE image_checks SET content_hash = ?", ("f" * 64,))
    dry = lmmprobe("run", "--model", "first", "--data", data, "--db", db, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "first: 1 request(s) to send of 1; 0 answered in the store" in " ".join(
        dry.stdout.split()
    )
