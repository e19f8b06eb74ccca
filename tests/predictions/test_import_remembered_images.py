"""An import checks a benchmark's image files once, as a run does: a later import (or run) on
the same store reuses the check while a file is unchanged, and checks a replaced one again.
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
STORED = "SELECT sample FROM samples ORDER BY rowid DESC LIMIT 1"


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    image = tmp_path / "img" / "a.png"
    image.parent.mkdir()
    Image.new("RGB", (16, 12), (200, 30, 30)).save(image)
    data = tmp_path / "q.jsonl"
    row = {"id": "q1", "images": ["img/a.png"], "question": "What colour?",
           "choices": ["red", "blue"], "answer": 0}  # fmt: skip
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"qid": "q1", "pred": "A"}) + "\n", encoding="utf-8")
    return data, preds, image


def _import(preds: Path, data: Path, db: Path, out: Path) -> Any:
    return lmmprobe("import", preds, "--benchmark", data, "--field", "id=qid,prediction=pred",
                    "--model", "m", "--db", db, "--out", out)  # fmt: skip


def _stored_sample(db: Path) -> str:
    with sqlite3.connect(db) as c:
        text: str = c.execute(STORED).fetchone()[0]
    return text


def test_an_import_reuses_the_stores_image_checks_and_checks_a_replaced_file_again(
    tmp_path: Path,
) -> None:
    data, preds, image = _files(tmp_path)
    db = tmp_path / "s.db"
    first = _import(preds, data, db, tmp_path / "1")
    assert first.returncode == 0, first.stderr
    # The import remembers its check, as a run does.
    before = image.stat()
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    with sqlite3.connect(db) as c:
        assert c.execute(CHECKS).fetchall() == [
            (str(image.resolve()), before.st_size, before.st_ctime_ns, 16, 12, digest)
        ]
    assert digest in _stored_sample(db)
    # Unchanged: the second import takes the remembered check as it is. Made to remember
    # another hash, it records that one: the file was neither decoded nor hashed again.
    with sqlite3.connect(db) as c:
        c.execute("UPDATE image_checks SET content_hash = ?", ("f" * 64,))
    second = _import(preds, data, db, tmp_path / "2")
    assert second.returncode == 0, second.stderr
    assert "f" * 64 in _stored_sample(db)
    # Another picture of the same byte size, its modification time set back (as `cp -p` or an
    # untar leave a replaced file): its ctime moved, so it is checked and remembered anew.
    blue = tmp_path / "blue.png"
    Image.new("RGB", (16, 12), (30, 30, 200)).save(blue)
    assert blue.stat().st_size == before.st_size  # a flat picture: the same size in PNG
    image.write_bytes(blue.read_bytes())
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    third = _import(preds, data, db, tmp_path / "3")
    assert third.returncode == 0, third.stderr
    blue_digest = hashlib.sha256(blue.read_bytes()).hexdigest()
    assert blue_digest in _stored_sample(db)
    with sqlite3.connect(db) as c:
        ((_, size, ctime_ns, width, height, remembered),) = c.execute(CHECKS).fetchall()
    now = image.stat()
    assert (size, ctime_ns, width, height, remembered) == (
        now.st_size, now.st_ctime_ns, 16, 12, blue_digest,
    )  # fmt: skip


def test_a_file_that_is_no_image_now_is_refused_by_the_import_not_waved_through(
    tmp_path: Path,
) -> None:
    data, preds, image = _files(tmp_path)
    db = tmp_path / "s.db"
    assert _import(preds, data, db, tmp_path / "1").returncode == 0
    before = image.stat()
    image.write_bytes(b"\0" * before.st_size)
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = _import(preds, data, db, tmp_path / "2")
    # The benchmark's row is invalid now (its image is unreadable), so no prediction joins.
    assert again.returncode != 0
    assert "'q1' is not a sample of" in again.stderr
