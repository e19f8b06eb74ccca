"""A large data file read again with its images unchanged is given from the store's record of
its first read (`lmmprobe.data.remembered_loads`): the same figures as reading it in full, and
any change (a byte of the file, an image, where a folder leads, the settings, the record
itself) reads it in full again.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import grimp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import lmmprobe
import lmmprobe.run.runner as runner
from lmmprobe import evaluate
from lmmprobe.data import StreamedLoad, load_in_chunks
from lmmprobe.data.remembered_loads import reading_modules, remembered_load
from lmmprobe.data.rows import remembered_images
from lmmprobe.store import Store

N = 11
SIZE = 4  # samples a chunk holds: N rows are three chunks
RECORDS = "SELECT source, content, summary FROM load_checks"


def _rows(folder: Path, n: int = N, *, bad: int | None = None) -> Path:
    """`n` two-option questions, each with its own picture under ``pics/`` (a folder)."""
    pics = folder / "pics-a"
    pics.mkdir(parents=True, exist_ok=True)
    (folder / "pics").symlink_to("pics-a")
    lines = []
    for i in range(n):
        Image.new("RGB", (8, 8), (i * 9, 40, 200 - i)).save(pics / f"q{i}.png")
        row: dict[str, Any] = {"id": f"q{i}", "images": [f"pics/q{i}.png"],
                               "question": f"Which is item {i}?", "choices": ["cat", "dog"],
                               "answer": i % 2, "metadata": {"task": f"t{i % 3}"}}  # fmt: skip
        if i == bad:
            del row["question"]
        lines.append(json.dumps(row) + "\n")
    path = folder / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _read(data: Path, db: Path, **kw: Any) -> StreamedLoad | Any:
    """The run's first read of `data`: remembered in (or given from) the store at `db`."""
    with Store(db) as store, remembered_images(store):
        return remembered_load(str(data), store, size=SIZE, **kw)


def _plain(data: Path, **kw: Any) -> Any:
    """The same read, in full, with no store."""
    return load_in_chunks(str(data), **{"size": SIZE, **kw})


def _records(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as c:
        return c.execute(RECORDS).fetchall()


def _mark(db: Path) -> None:
    """Make the remembered fingerprint one no read gives: a load carrying it was not read."""
    with sqlite3.connect(db) as c:
        (summary,) = c.execute("SELECT summary FROM load_checks").fetchone()
        doc = json.loads(summary)
        doc["fingerprint"] = "f" * 64
        c.execute("UPDATE load_checks SET summary = ?", (json.dumps(doc),))


def test_a_file_read_again_unchanged_is_given_from_the_store_with_the_same_figures(
    tmp_path: Path,
) -> None:
    data, db = _rows(tmp_path), tmp_path / "s.db"
    first = _read(data, db)
    assert isinstance(first, StreamedLoad) and first == _plain(data)
    assert len(_records(db)) == 1
    again = _read(data, db)
    assert again == first  # count, fingerprints, places, kinds: field by field
    # The second read came from the record, not the file (it carries the record's mark).
    _mark(db)
    assert _read(data, db).fingerprint == "f" * 64
    # Chunks read again are held to the record's fingerprints, as a read's would be.
    assert [s.id for chunk in again.chunks() for s in chunk] == [f"q{i}" for i in range(N)]


def test_a_changed_byte_of_the_file_reads_it_in_full_and_replaces_the_record(
    tmp_path: Path,
) -> None:
    data, db = _rows(tmp_path), tmp_path / "s.db"
    _read(data, db)
    _mark(db)
    data.write_text(data.read_text().replace("item 3?", "item 3!"), encoding="utf-8")
    changed = _read(data, db)
    assert changed == _plain(data) and changed.fingerprint != "f" * 64
    assert len(_records(db)) == 1  # one record a source: the new read's
    assert _read(data, db) == changed


def test_a_changed_image_or_a_folder_leading_elsewhere_reads_the_file_in_full(
    tmp_path: Path,
) -> None:
    data, db = _rows(tmp_path), tmp_path / "s.db"
    first = _read(data, db)
    # Other bytes of the same size, the modification time set back: its ctime moved.
    image = tmp_path / "pics-a" / "q5.png"
    before = image.stat()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(image)
    os.utime(image, ns=(before.st_atime_ns, before.st_mtime_ns))
    _mark(db)
    changed = _read(data, db)
    assert changed == _plain(data) and changed.fingerprint not in (first.fingerprint, "f" * 64)
    # The same pictures in another folder, the link pointed there: the same fingerprint (the
    # pictures' bytes) but other places, found by reading in full.
    (tmp_path / "pics-b").mkdir()
    for f in (tmp_path / "pics-a").iterdir():
        (tmp_path / "pics-b" / f.name).write_bytes(f.read_bytes())
    (tmp_path / "pics").unlink()
    (tmp_path / "pics").symlink_to("pics-b")
    _mark(db)
    moved = _read(data, db)
    assert moved == _plain(data) and moved.fingerprint == changed.fingerprint
    assert moved.places != changed.places


def test_other_settings_are_other_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, db = _rows(tmp_path), tmp_path / "s.db"
    _read(data, db)
    _mark(db)
    assert _read(data, db, limit=9) == _plain(data, limit=9)
    assert _read(data, db, strict=True) == _plain(data, strict=True)
    monkeypatch.setenv("LMMPROBE_MAX_IMAGE_PIXELS", "1000000")
    assert _read(data, db).fingerprint != "f" * 64
    assert len(_records(db)) == 4


def test_a_read_with_a_rejected_row_or_of_one_chunk_or_outside_a_store_is_not_remembered(
    tmp_path: Path,
) -> None:
    bad = _rows(tmp_path / "bad", bad=6)
    db = tmp_path / "s.db"
    read = _read(bad, db)
    assert read == _plain(bad) and read.invalid == 1
    small = _rows(tmp_path / "small", n=SIZE)
    assert _read(small, db) == _plain(small)
    assert _records(db) == []
    with Store(db) as store:  # not inside remembered_images: nothing noted, nothing kept
        assert remembered_load(str(small), store, size=2) == _plain(small, size=2)
    assert _records(db) == []


@given(st.binary(max_size=300), st.text(max_size=80))
@settings(max_examples=60, deadline=None)
def test_a_damaged_record_is_never_trusted(blob: bytes, summary: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data, db = _rows(Path(tmp)), Path(tmp) / "s.db"
        first = _read(data, db)
        with sqlite3.connect(db) as c:
            c.execute("UPDATE load_checks SET images = ?", (blob,))
        assert _read(data, db) == first
        with sqlite3.connect(db) as c:
            c.execute("UPDATE load_checks SET summary = ?", (summary,))
        assert _read(data, db) == first


def test_a_rerun_of_many_chunks_copies_the_same_rows_from_a_remembered_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _rows(tmp_path)
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", SIZE)
    db = tmp_path / "s.db"
    spec = dict(models=["first"], data=str(data), db=str(db), bootstrap=0)
    first = evaluate(**spec, out=str(tmp_path / "1"))
    again = evaluate(**spec, out=str(tmp_path / "2"))
    assert again.outcome.reused_from == first.run_id
    assert again.outcome.manifest["data"] == first.outcome.manifest["data"]
    assert _figures(again.results_json) == _figures(first.results_json)
    # Another model on the same data: its samples are read again chunk by chunk, and agree.
    other = evaluate(**{**spec, "models": ["random"]}, out=str(tmp_path / "3"))
    assert other.outcome.reused_from is None
    assert other.outcome.manifest["data"] == first.outcome.manifest["data"]


def _figures(results: Path) -> dict[str, Any]:
    """Every model's figures in a results.json, not how its answers were fetched."""
    models = json.loads(results.read_text(encoding="utf-8"))["models"]
    return {m: {k: v for k, v in doc.items() if k != "stats"} for m, doc in models.items()}


def test_a_store_of_schema_13_gains_the_table_in_place(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    with sqlite3.connect(db) as c:  # as schema 13 left it: no such table
        c.execute("DROP TABLE load_checks")
        c.execute("UPDATE meta SET value = '13' WHERE key = 'schema_version'")
    data = _rows(tmp_path)
    assert _read(data, db) == _plain(data)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "14",
        )
    assert len(_records(db)) == 1


@pytest.mark.parametrize("column", ["summary", "images"])
def test_a_record_nested_past_the_recursion_limit_is_read_in_full(
    tmp_path: Path, column: str
) -> None:
    """Re-test 17: a summary or image-log line of JSON nested 60,000 deep raised RecursionError
    out of the run (a traceback, on every run of that data) instead of reading the file."""
    import zlib

    data, db = _rows(tmp_path), tmp_path / "s.db"
    first = _read(data, db)
    deep = "[" * 60_000
    value: str | bytes = deep if column == "summary" else zlib.compress(deep.encode() + b"\n")
    with sqlite3.connect(db) as c:
        c.execute(f"UPDATE load_checks SET {column} = ?", (value,))
    assert _read(data, db) == first
    assert _records(db)[0][2] != deep  # and the record is replaced by the full read's


def _rules_of(src: Path) -> str:
    """`reading_rules()` as a fresh process importing lmmprobe from `src` computes it."""
    done = subprocess.run(
        [sys.executable, "-c",
         "from lmmprobe.data.remembered_loads import reading_rules; print(reading_rules())"],
        capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "PYTHONPATH": str(src)}, cwd=src,
    )  # fmt: skip
    return done.stdout.strip()


def test_an_edit_to_a_module_the_readers_import_changes_the_reading_rules(
    tmp_path: Path,
) -> None:
    """Re-test 17: only `lmmprobe.data` and `lmmprobe.schema` were hashed, so an edit to
    `lmmprobe.spec` (`parse_spec`), `lmmprobe._file_kind` or `lmmprobe._secrets`, which the
    readers use, kept a remembered read in a checkout without a version bump."""
    src = tmp_path / "src"
    package = Path(lmmprobe.__file__).parent
    shutil.copytree(package, src / "lmmprobe", ignore=shutil.ignore_patterns("__pycache__"))
    before = _rules_of(src)
    # A module no reader imports leaves the rules as they were: the hash is not of everything.
    with (src / "lmmprobe" / "report" / "__init__.py").open("a") as f:
        f.write("\n# edited\n")
    assert _rules_of(src) == before
    for module in ("spec.py", "_file_kind.py", "_secrets.py"):
        with (src / "lmmprobe" / module).open("a") as f:
            f.write("\n# edited\n")
        after = _rules_of(src)
        assert after != before, module
        before = after


def test_every_module_the_readers_import_is_hashed_in_the_reading_rules() -> None:
    """The modules hashed are found from the readers' imports; grimp (import-linter's graph,
    imports inside functions included) finds the same ones or fewer, so none can drift out."""
    graph = grimp.build_graph("lmmprobe", cache_dir=None)
    hashed = {_module_name(path) for path in reading_modules()}
    for reader in ("lmmprobe.data.jsonl", "lmmprobe.data.remembered_loads"):
        imported = graph.find_upstream_modules(reader) | {reader}
        assert imported - {"lmmprobe"} <= hashed, sorted(imported - hashed)
    assert {"lmmprobe.spec", "lmmprobe._file_kind", "lmmprobe._secrets"} <= hashed


def _module_name(path: Path) -> str:
    parts = path.relative_to(Path(lmmprobe.__file__).parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
