"""The exit's wait for Arrow's threads to drop the Python files they hold (issue 34).

A file `datasets` opened for pyarrow (``with open(file) as f: make_fragment(f)``) is closed on
Python's side while an Arrow object, which a thread of Arrow's may drop last, still holds it.
Here a thread of the test drops that object, as one of Arrow's would.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data import arrow_files
from lmmprobe.data.arrow_files import held_natively, wait_for_arrow_files, watch_arrow_files

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pads = pytest.importorskip("pyarrow.dataset")


def _fragment_over_a_closed_file(tmp_path: Path) -> tuple[list[Any], weakref.ref[Any]]:
    """A parquet fragment (in a box) made as `datasets` makes one, and its closed file."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), path)
    with path.open("rb") as fh:
        box = [pads.ParquetFileFormat().make_fragment(fh)]
    return box, weakref.ref(fh)


@contextlib.contextmanager
def _later(seconds: float, action: Callable[[], None]) -> Iterator[None]:
    """Within the block, another thread runs `action` after `seconds`."""

    def later() -> None:
        time.sleep(seconds)
        action()

    thread = threading.Thread(target=later)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def test_the_wait_lasts_until_another_thread_drops_the_file_arrow_held(tmp_path: Path) -> None:
    box, fh = _fragment_over_a_closed_file(tmp_path)
    assert fh() is not None and fh() in [ref() for ref in held_natively()]
    with _later(0.2, box.clear):  # the fragment, and so the file, dropped by that thread
        assert wait_for_arrow_files(max_wait_s=30) is True
        assert fh() is None  # gone when the wait returned, not later
    assert held_natively() == []


def test_the_wait_gives_up_at_its_cap_while_arrow_still_holds_the_file(tmp_path: Path) -> None:
    box, fh = _fragment_over_a_closed_file(tmp_path)
    assert wait_for_arrow_files(max_wait_s=0.05) is False
    assert fh() is not None  # still held: the exit goes on regardless
    box.clear()
    assert fh() is None


def test_nothing_pending_returns_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A closed file Python still refers to, or an open one Arrow reads, is not waited for.
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    closed = path.open("rb")
    closed.close()
    with path.open("rb") as reading:
        fragment = pads.ParquetFileFormat().make_fragment(reading)
        assert all(ref() not in (closed, reading) for ref in held_natively())

        def no_sleep(seconds: float) -> None:
            raise AssertionError("the wait slept with nothing pending")

        monkeypatch.setattr(time, "sleep", no_sleep)  # the module's `time.sleep`
        assert wait_for_arrow_files() is True
    del fragment


def test_the_wait_is_registered_once_where_datasets_is_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("datasets")  # imported first: it registers exit hooks of its own
    from lmmprobe.data.hf_dataset import import_datasets

    registered: list[Callable[..., Any]] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(arrow_files, "_watching", False)
    import_datasets()
    import_datasets()
    watch_arrow_files()
    assert [f for f in registered if f is wait_for_arrow_files] == [wait_for_arrow_files]
