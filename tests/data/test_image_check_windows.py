"""A run's loader resolves and looks up its image files in bulk, with the plain check's results.

Inside `remembered_images` a file's folder is resolved once per load and the file costs one
``lstat``; the store's remembered checks are read a window of paths at a time. Both must give
exactly what the plain check (`check_image` outside any store) gives: the same resolved path
and content hash for every kind of path a row may name, and the same refusal for a bad one.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.data.base import load_source
from lmmprobe.data.rows import READ_WHOLE, RowError, check_image, remembered_images
from lmmprobe.store import Store


def _images(root: Path, n: int) -> list[str]:
    (root / "img").mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(n):
        name = f"img/p{i:04d}.png"
        Image.new("RGB", (4, 3), (i % 256, i // 256, 7)).save(root / name)
        names.append(name)
    return names


def _write(data: Path, names: list[str]) -> None:
    rows = [
        {"id": f"q{i}", "images": [name], "question": "Which?", "choices": ["a", "b"],
         "answer": i % 2}
        for i, name in enumerate(names)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _checked(base: Path, value: str) -> tuple[str, str] | tuple[str | None, str]:
    """What `check_image` makes of `value`: (path, content hash), or (field, refusal)."""
    try:
        ref = check_image(base, value, "images[0]")
    except RowError as exc:
        return exc.field, exc.reason
    return str(ref.path), ref.content_hash()


def test_the_quick_resolution_and_the_remembered_checks_agree_with_the_plain_check(
    tmp_path: Path,
) -> None:
    base = tmp_path / "data"
    names = _images(base, 3)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Image.new("RGB", (5, 5), (1, 2, 3)).save(outside / "o.png")
    (base / "link.png").symlink_to(base / names[1])  # a link to a file: resolved to it
    (base / "linked").symlink_to(outside)  # a linked folder
    (base / "loop").symlink_to(base / "loop")
    (base / "sub").mkdir()
    (base / "not.png").write_bytes(b"not a picture")
    os.mkfifo(base / "fifo.png")
    values = [
        *names, "./img/p0000.png", "img//p0001.png", "sub/../img/p0002.png", "link.png",
        "linked/o.png", "linked/../data/img/p0000.png", str(base / names[2]), "img/missing.png",
        "img/", "img/.", "sub/..", "not.png", "fifo.png", "loop", "loop/x.png", "nul\0.png",
    ]  # fmt: skip
    plain = {v: _checked(base, v) for v in values}
    assert plain[names[0]][1] == hashlib.sha256((base / names[0]).read_bytes()).hexdigest()
    assert plain["link.png"] == plain[names[1]]
    with Store(tmp_path / "s.db") as store:
        with remembered_images(store):  # a store that remembers none: every file is checked
            assert {v: _checked(base, v) for v in values} == plain
        with remembered_images(store):  # now remembered: read back, not decoded
            assert {v: _checked(base, v) for v in values} == plain
        # Looked up in any order (windows shrink and grow), each path still finds its check.
        shuffled = values * 3
        random.Random(0).shuffle(shuffled)
        with remembered_images(store):
            assert [_checked(base, v) for v in shuffled] == [plain[v] for v in shuffled]


def _select_count(store: Store) -> list[str]:
    seen: list[str] = []
    store.conn.set_trace_callback(
        lambda sql: seen.append(sql) if "FROM image_checks" in sql else None
    )
    return seen


def test_a_re_run_reads_the_remembered_checks_a_window_at_a_time(tmp_path: Path) -> None:
    base = tmp_path / "data"
    names = _images(base, 600)
    data = base / "q.jsonl"
    _write(data, names)
    with Store(tmp_path / "s.db") as store:
        with remembered_images(store):
            first = load_source(str(data))
        queries = _select_count(store)
        with remembered_images(store):
            again = load_source(str(data))
        # One query a window (64 paths, then 256, 1,024...), not one a file.
        assert 0 < len(queries) <= 5, len(queries)
        assert [s.model_dump_json() for s in again.samples] == [
            s.model_dump_json() for s in first.samples
        ]
        assert [i.content_hash() for s in again.samples for i in s.images] == [
            i.content_hash() for s in first.samples for i in s.images
        ]


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_a_cached_re_run_finds_every_remembered_file_in_any_order(
    tmp_path: Path, order: str
) -> None:
    base = tmp_path / "data"
    names = _images(base, 150)
    if order == "shuffled":
        random.Random(1).shuffle(names)
    data = base / "q.jsonl"
    _write(data, [*names, names[3]])  # one file named twice, by two rows
    db = tmp_path / "s.db"
    run: list[Any] = ["run", "-m", "first", "-d", data, "--db", db, "--bootstrap", "0", "-q"]
    assert (done := lmmprobe(*run, "--out", tmp_path / "1")).returncode == 0, done.stderr
    # Every remembered hash changed in the store: only a remembered check (found in its
    # window, whatever the order) takes the changed hash, which keys the request anew and is
    # what the run records (a fresh check would hash the file and find the first run's).
    with sqlite3.connect(db) as c:
        c.execute("UPDATE image_checks SET content_hash = substr(content_hash, 2) || '0'")
        remembered = dict(c.execute("SELECT path, content_hash FROM image_checks"))
    assert len(remembered) == 150
    assert (done := lmmprobe(*run, "--out", tmp_path / "2")).returncode == 0, done.stderr
    results = [json.loads((tmp_path / o / "results.json").read_text()) for o in ("1", "2")]
    stats = results[1]["models"]["first"]["stats"]
    # Every request asked anew (the two rows naming one file ask the same thing: one request).
    assert (stats["requests"], stats["cached"], stats["called"]) == (150, 0, 150)
    assert results[1]["models"]["first"]["metrics"] == results[0]["models"]["first"]["metrics"]
    with sqlite3.connect(db) as c:
        runs = [r[0] for r in c.execute("SELECT id FROM runs ORDER BY created_at")]
        (last,) = runs[1:]
        samples = [json.loads(r[0]) for r in c.execute(
            "SELECT sample FROM samples WHERE run_id = ?", (last,))]  # fmt: skip
    assert len(samples) == 151
    assert all(i["sha256"] == remembered[i["path"]] for s in samples for i in s["images"])


def test_a_file_read_whole_and_one_verified_from_disk_are_checked_and_hashed_alike(
    tmp_path: Path,
) -> None:
    # A file of at most READ_WHOLE bytes is read once (hashed and checked from memory); a
    # larger one is judged from its header and verified from the file. Either way the
    # reference carries the hash of the file's bytes, and a broken file is refused alike.
    base = tmp_path / "data"
    base.mkdir()
    rng = random.Random(0)
    small, large = base / "small.png", base / "large.png"
    Image.new("RGB", (8, 8), (9, 8, 7)).save(small)
    side = 800  # noise does not compress: the PNG is well over READ_WHOLE
    Image.frombytes("RGB", (side, side), rng.randbytes(3 * side * side)).save(large)
    assert small.stat().st_size <= READ_WHOLE < large.stat().st_size
    for name, cut in (("small", small), ("large", large)):
        (base / f"{name}-cut.png").write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
        (base / f"{name}-text.png").write_bytes(b"x" * (cut.stat().st_size))
    values = ["small.png", "large.png", "small-cut.png", "large-cut.png", "small-text.png",
              "large-text.png"]  # fmt: skip
    plain = {v: _checked(base, v) for v in values}
    for picture in (small, large):
        digest = hashlib.sha256(picture.read_bytes()).hexdigest()
        assert plain[picture.name] == (str(picture), digest)
    for name in ("small", "large"):
        assert plain[f"{name}-cut.png"][0] == "images[0]"
        assert plain[f"{name}-cut.png"][1].startswith(f"unreadable image {name}-cut.png: ")
        assert plain[f"{name}-text.png"] == (
            "images[0]",
            f"unreadable image {name}-text.png: not an image Pillow can read",
        )
    with Store(tmp_path / "s.db") as store:
        for _ in range(2):  # checked, then remembered
            with remembered_images(store):
                assert {v: _checked(base, v) for v in values} == plain
