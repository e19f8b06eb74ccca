"""A load that stops early (a strict error, a limit) leaves no reader of an Arrow dataset alive.

A hub copy's row error under ``--strict`` once ended ``lmmprobe run`` in SIGABRT after its one
line ("terminate called without an active exception", exit -6 instead of 2): the row reader's
generators, suspended over `datasets`' batch iterator and its Arrow reader, were held by the
error's traceback in a reference cycle and freed only in the interpreter's final teardown. The
crash itself is a race (about 1 run in 100 under load, only when `datasets` had just converted
the copy), so these tests check what was left to that teardown: while the error (or the result)
is still held, no generator reading the dataset is left suspended.
"""

from __future__ import annotations

import gc
import os
import types
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.test_hemm_hostile import _winoground_image_at

from lmmprobe.data import DataError, load_source

_READERS = (f"datasets{os.sep}", f"pyarrow{os.sep}", f"lmmprobe{os.sep}")


def _is_generator(obj: object) -> bool:
    # pyarrow's own (ParquetFile.iter_batches) are Cython's generators, not Python's.
    return isinstance(obj, types.GeneratorType) or (
        type(obj).__name__ == "generator" and type(obj).__module__.startswith("_cython_")
    )


def _suspended_readers() -> list[str]:
    """The generators of `datasets`, pyarrow or lmmprobe still suspended (not run to the end)."""
    return sorted(
        f"{g.gi_code.co_filename}:{g.__qualname__}"
        for g in gc.get_objects()
        if _is_generator(g)
        and g.gi_frame is not None
        and any(part in g.gi_code.co_filename for part in _READERS)
    )


@pytest.fixture
def wino(tmp_path: Path) -> Path:
    """A Winoground hub snapshot whose row 0 names a FIFO as its image; rows 1 and 2 are good."""
    folder = tmp_path / "wino"
    folder.mkdir()
    os.mkfifo(folder / "pipe.png")
    _winoground_image_at(folder, "pipe.png", good_rows=2)
    return folder


def test_a_strict_error_in_a_hub_copy_leaves_no_reader_suspended(wino: Path) -> None:
    before = _suspended_readers()
    with pytest.raises(DataError, match=r"pipe\.png: a FIFO, not a regular file") as caught:
        load_source(f"hemm-winoground,path={wino}", strict=True)
    # The error, and the frames its traceback holds, are alive here as they are in the CLI
    # until it exits: the readers under them are not.
    assert caught.value.__traceback__ is not None
    assert _suspended_readers() == before


def test_a_limit_on_a_hub_copy_leaves_no_reader_suspended(wino: Path) -> None:
    before = _suspended_readers()
    loaded = load_source(f"hemm-winoground,path={wino},limit=2")
    assert [s.id for s in loaded.samples] == ["hemm-winoground/1#i0c0", "hemm-winoground/1#i0c1"]
    assert _suspended_readers() == before


@pytest.mark.parametrize("where", ["folder", "parquet file"])
def test_a_strict_error_in_an_hf_source_leaves_no_reader_suspended(wino: Path, where: str) -> None:
    target = wino if where == "folder" else next((wino / "data").glob("*.parquet"))
    spec = f"hf:{target},image=image_0,question=caption_0,answer=caption_1,id=id"
    before = _suspended_readers()
    with pytest.raises(DataError, match=r":0: image_0: ") as caught:
        load_source(spec, strict=True)
    assert caught.value.__traceback__ is not None
    assert _suspended_readers() == before
    loaded = load_source(spec, limit=1)  # row 0 is a problem; row 1 is the one sample
    assert [s.id for s in loaded.samples] == ["1"]
    assert _suspended_readers() == before


def test_the_cli_exits_2_after_a_hub_rows_strict_error(wino: Path) -> None:
    # The console script's own exit: one line and status 2 (the abort was -6).
    res = lmmprobe(
        "run", "-m", "first", "--data", f"hemm-winoground,path={wino}", "--db", wino.parent / "db",
        "--dry-run", "--strict",
    )  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert "terminate called" not in out and "Traceback" not in out, out
    assert [line for line in out.splitlines() if line.strip()] == [
        f"error: {wino}[test]:0: image_0: {wino}/pipe.png: a FIFO, not a regular file; "
        "lmmprobe reads an image from regular files only (copy the data into one)"
    ], out
