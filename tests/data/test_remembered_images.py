"""A run checks an image file once: later runs on the same store reuse the check while the file
is unchanged (its resolved path, size and modification time), and check a changed one again.
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

CHECKS = "SELECT path, size, mtime_ns, width, height, content_hash FROM image_checks"


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
        (str(image.resolve()), before.st_size, before.st_mtime_ns, 16, 12, digest)
    ]
    # Other bytes, the same size and modification time: the remembered check holds (nothing is
    # decoded, so the run takes the file), and its remembered hash keys the request: the answer
    # is read back, not asked again.
    image.write_bytes(b"\0" * before.st_size)
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    second = _run(data, db, tmp_path / "2")
    assert second.returncode == 0, second.stderr
    assert (
        _model(tmp_path / "2")["stats"]["cached"],
        _model(tmp_path / "2")["stats"]["called"],
    ) == (1, 0)
    assert _model(tmp_path / "2")["metrics"] == _model(tmp_path / "1")["metrics"]
    # A lower pixel cap than the one it was checked under: checked again (and refused: the
    # file is no image now), not waved through.
    capped = _run(data, db, tmp_path / "3", LMMPROBE_MAX_IMAGE_PIXELS="100")
    assert capped.returncode != 0 and "unreadable image img/a.png" in capped.stderr
    # Modified (its mtime moves): checked again, and refused naming the file.
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    changed = _run(data, db, tmp_path / "4")
    assert changed.returncode != 0
    assert "unreadable image img/a.png" in changed.stderr
    # Made readable again: checked, and remembered as it is now.
    Image.new("RGB", (8, 8), (30, 30, 200)).save(image)
    again = _run(data, db, tmp_path / "5")
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db) as c:
        ((_, size, mtime_ns, width, height, content_hash),) = c.execute(CHECKS).fetchall()
    now = image.stat()
    assert (size, mtime_ns, width, height) == (now.st_size, now.st_mtime_ns, 8, 8)
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
            "11",
        )
        assert len(c.execute(CHECKS).fetchall()) == 1
