"""Hostile re-test of the image worker (`lmmprobe.data.image_pool`, deferred rows in `rows`).

Each test here found a way the pooled path differs from ``$LMMPROBE_IMAGE_WORKERS=0`` (or
hangs, or leaks): it compares both where the promise is "the same", and says what a user sees.
The thresholds are lowered as in ``test_image_pool.py`` so small files reach the worker.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageFile
from tests.data.test_image_pool import _load, _picture, _workers

from lmmprobe.data import base as base_module
from lmmprobe.data import rows as rows_module
from lmmprobe.data.base import LoadResult, iter_source
from lmmprobe.data.image_pool import WORKERS_ENV, ImagePool, workers_wanted
from lmmprobe.data.jsonl import parse_row
from lmmprobe.data.rows import remembered_images, stream_rows
from lmmprobe.store import Store

pytestmark = pytest.mark.skipif(not workers_wanted(), reason="one core: no image worker starts")


def _row(i: int, images: list[Any], **extra: Any) -> dict[str, Any]:
    return {"id": f"q{i}", "images": images, "question": "Which?", "choices": ["a", "b"],
            "answer": 0, **extra}  # fmt: skip


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _all_workers() -> list[int]:
    """The image workers among this process's children, whichever thread started them."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        with suppress(OSError):
            for child in (task / "children").read_text().split():
                with suppress(OSError):
                    if b"lmmprobe.data.image_pool" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(int(child))
    return found


# -- 1. a row refused for its image, whose parse then raised: the load ends there, silently ---


def test_a_row_refused_for_its_image_does_not_end_the_load_when_its_parse_raised_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain: the row's image is refused first (check_images raises inside the parse), the
    load goes on. Pooled: the image check is deferred, the parse goes on to a non-RowError
    (here check_video's DataError for a missing PyAV), `parse_rows` stops parsing at it, then
    the replay turns the row into an image problem and the generator ends: every later row
    is dropped, with no error and no problem recorded."""
    img = tmp_path / "img"
    img.mkdir()
    rows = []
    for i in range(30):
        _picture(img / f"g{i}.png", (4, 3), i)
    (img / "broken.png").write_bytes(b"not a picture")
    (tmp_path / "clip.mp4").write_bytes(b"\0" * 64)  # never opened: PyAV is missing first
    for i in range(12):  # past the (lowered) threshold: the worker starts
        rows.append(_row(i, [f"img/g{i}.png"]))
    rows.append(_row(12, ["img/broken.png"], video="clip.mp4"))
    for i in range(13, 30):
        rows.append(_row(i, [f"img/g{i}.png"]))
    data = _write(tmp_path / "q.jsonl", rows)
    monkeypatch.setitem(sys.modules, "av", None)  # PyAV not installed
    with _workers(monkeypatch, on=False):
        plain = _load(data, tmp_path / "plain.db")
    with _workers(monkeypatch, on=True):
        pooled = _load(data, tmp_path / "pooled.db")
    assert len(plain["samples"]) == 29  # only the broken row is refused
    assert pooled["workers"] == 1
    assert [s[0] for s in pooled["samples"]] == [s[0] for s in plain["samples"]]
    assert pooled["problems"] == plain["problems"]


# -- 2. a load stopped early leaves a window in flight: the next load gets its results -------


@contextmanager
def _small_windows(monkeypatch: pytest.MonkeyPatch, on: bool) -> Iterator[None]:
    with monkeypatch.context() as m:
        m.setenv(WORKERS_ENV, "1" if on else "0")
        m.setattr(rows_module, "_POOL_AFTER", 1)
        m.setattr(rows_module, "_WINDOW_ROWS", 2)
        m.setattr(rows_module, "_WINDOW_FILES", 100)
        m.setattr(rows_module, "_WAIT_FOR_START", True)
        m.setattr(base_module, "MAX_PROBLEMS_SHOWN", 1_000)
        yield


def _two_reads(first: Path, second: Path, db: Path, limit: int) -> dict[str, Any]:
    """Two reads inside one `remembered_images` block, as the runner reads a streamed load
    once per model (and the dry run its first read and each chunk read again)."""
    with Store(db) as store, remembered_images(store):
        for _ in iter_source(str(first), limit=limit):
            pass
        stream = iter_source(str(second))
        samples = [(s.id, [r.content_hash() for r in s.images]) for s in stream]
        problems = [(p.line, p.field, p.reason) for p in stream.problems]
    return {"samples": samples, "problems": problems}


def test_a_read_stopped_at_its_limit_leaves_no_results_for_the_next_read_to_take(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first read stops at its limit (stream_rows closes parse_rows) while a window is
    with the worker; its results stay in the pipe, and the next read in the same block takes
    them for its own first window (same number of files): its files get other files'
    hashes, and a broken file is accepted. Every later window is one behind."""
    img = tmp_path / "img"
    img.mkdir()
    for i in range(8):
        _picture(img / f"a{i}.png", (4, 3), i)
        _picture(img / f"b{i}.png", (5, 2), 100 + i)
    (img / "b1.png").write_bytes(b"broken")  # in the second read's first window
    first = _write(tmp_path / "a.jsonl", [_row(i, [f"img/a{i}.png"]) for i in range(8)])
    second = _write(tmp_path / "b.jsonl", [_row(i, [f"img/b{i}.png"]) for i in range(8)])
    with _small_windows(monkeypatch, on=False):
        plain = _two_reads(first, second, tmp_path / "plain.db", limit=4)
    with _small_windows(monkeypatch, on=True):
        pooled = _two_reads(first, second, tmp_path / "pooled.db", limit=4)
    assert [line for line, _, _ in plain["problems"]] == [2]
    assert pooled == plain


# -- 3. a stopped (not dead) worker: the load waits for it forever ----------------------------


def test_a_stopped_worker_does_not_hang_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGSTOP (a debugger, a job-control slip, a cgroup freezer, the OOM-killer's stall) on
    the worker mid-load: `_results` waits in a plain ``recv`` with no deadline, so the load
    never ends. Run in a thread here; the worker is killed after 60 s so the test ends."""
    img = tmp_path / "img"
    img.mkdir()
    for i in range(40):
        _picture(img / f"g{i}.png", (4, 3), i)
    data = _write(tmp_path / "q.jsonl", [_row(i, [f"img/g{i}.png"]) for i in range(40)])
    with _workers(monkeypatch, on=False):
        plain = _load(data, tmp_path / "plain.db")
    stopped: list[int] = []
    original = rows_module._CheckedImages.found
    noted = [0]

    def stop_the_worker_once(self: Any, *args: Any) -> None:
        noted[0] += 1
        if noted[0] == 15:  # deferred rows by now, a window with the worker
            for pid in _all_workers():
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        original(self, *args)

    got: dict[str, Any] = {}
    with _workers(monkeypatch, on=True):
        # The deadline a fix gives the worker's answer, lowered here (absent today).
        monkeypatch.setattr(rows_module, "_WORKER_SILENCE", 2.0, raising=False)
        monkeypatch.setattr(rows_module._CheckedImages, "found", stop_the_worker_once)
        loading = threading.Thread(target=lambda: got.update(_load(data, tmp_path / "w.db")))
        loading.start()
        loading.join(60)
        hung = loading.is_alive()
        left = [pid for pid in stopped if pid in _all_workers()]  # the load ended it
        for pid in stopped:  # let the test end either way
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        loading.join(30)
    assert stopped
    assert not hung, "the load waited on a stopped worker for 60 s"
    assert not left
    for what in ("samples", "problems", "notes", "checks"):
        assert got[what] == plain[what], what


# -- 4. the worker imports modules from the loading process's working folder first -----------


def test_the_worker_runs_no_module_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -m`` puts the working folder first on the worker's sys.path (the console
    script's process does not have it at all): a ``hashlib.py`` (``socket.py``, ``PIL/``...)
    in the folder a user runs ``lmmprobe`` from is executed by the worker, or shadows the
    module the check uses."""
    marker = tmp_path / "ran"
    (tmp_path / "hashlib.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise ImportError('not the real hashlib')\n"
    )
    monkeypatch.chdir(tmp_path)
    pool = ImagePool()
    try:
        pool.wait(30)
    finally:
        pool.close()
    assert not marker.exists(), "the worker ran hashlib.py from the working folder"


# -- 5. Pillow's state in the loading process (a plugin's registered opener) is not the worker's


class _Toy(ImageFile.ImageFile):
    """A made-up format, as a plugin registers one (pillow-heif's ``register_heif_opener``)."""

    format = "LMMTOY"
    format_description = "test format"

    def _open(self) -> None:
        head = self.fp.read(8)
        if head[:4] != b"LMMT":
            raise SyntaxError("not a toy image")
        width, height = struct.unpack(">HH", head[4:])
        self._mode = "L"
        self._size = (width, height)
        self.tile = [ImageFile._Tile("raw", (0, 0, width, height), 8, ("L", 0, 1))]


def test_an_image_format_a_plugin_registered_is_read_by_the_worker_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin (a source or model module of `lmmprobe.sources`/`lmmprobe.models`, loaded in
    the run's process before its data) registers an opener, as ``pillow_heif`` does for
    HEIC photos. The plain check reads those files; the worker, a fresh interpreter, refuses
    them as "not an image Pillow can read": the same rows are refused or kept depending on
    whether the worker ran."""
    monkeypatch.setattr(Image, "OPEN", dict(Image.OPEN))
    monkeypatch.setattr(Image, "ID", list(Image.ID))
    Image.register_open(_Toy.format, _Toy, lambda prefix: prefix[:4] == b"LMMT")
    img = tmp_path / "img"
    img.mkdir()
    rows = []
    for i in range(30):
        (img / f"t{i}.toy").write_bytes(b"LMMT" + struct.pack(">HH", 4, 3) + bytes([i] * 12))
        rows.append(_row(i, [f"img/t{i}.toy"]))
    data = _write(tmp_path / "q.jsonl", rows)
    with _workers(monkeypatch, on=False):
        plain = _load(data, tmp_path / "plain.db")
    with _workers(monkeypatch, on=True):
        pooled = _load(data, tmp_path / "pooled.db")
    assert len(plain["samples"]) == 30 and not plain["problems"]
    assert pooled["problems"] == plain["problems"]
    assert pooled["samples"] == plain["samples"]


# -- 6. a worker stopped halfway through sending its answer: poll says "ready", recv hangs ----


def test_a_worker_stopped_halfway_through_its_answer_does_not_hang_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer larger than the socket's buffer (a window of refusals naming long paths) is
    sent in pieces. A worker stopped after the first piece has made ``poll`` true, so a
    deadline checked with ``poll`` before ``recv`` is passed, and ``recv`` then waits for
    the rest for ever. The deadline must hold for every read of the answer."""
    img = tmp_path / "img"
    deep = img.joinpath(*["d" * 200] * 14)  # a value of about 2,900 characters
    deep.mkdir(parents=True)
    rows = []
    for i in range(12):  # past the (lowered) threshold: the worker starts
        _picture(img / f"g{i}.png", (4, 3), i)
        rows.append(_row(i, [f"img/g{i}.png"]))
    for i in range(12, 612):
        if i % 2:  # a refusal naming its long path: 150 of them make a window's answer ~450 KB
            (deep / f"n{i}.png").write_bytes(b"not a picture")
            rows.append(_row(i, [str((deep / f"n{i}.png").relative_to(tmp_path))]))
        else:
            _picture(img / f"g{i}.png", (4, 3), i)
            rows.append(_row(i, [f"img/g{i}.png"]))
    data = _write(tmp_path / "q.jsonl", rows)
    stopped: list[int] = []
    original = rows_module._CheckedImages.found
    noted = [0]

    def stop_the_worker_while_it_sends(self: Any, *args: Any) -> None:
        noted[0] += 1
        if noted[0] == 40:  # settling a window while the worker sends the next one's answer
            time.sleep(1.0)  # it has checked its files, filled the pipe and waits to send more
            for pid in _all_workers():
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        original(self, *args)

    def load(on: bool, into: dict[str, Any], db: str) -> None:
        into.update(_load(data, tmp_path / db))

    with _workers(monkeypatch, on=False):
        monkeypatch.setattr(rows_module, "_WINDOW_ROWS", 300)
        monkeypatch.setattr(rows_module, "_WINDOW_FILES", 300)
        plain: dict[str, Any] = {}
        load(False, plain, "plain.db")
    got: dict[str, Any] = {}
    with _workers(monkeypatch, on=True):
        monkeypatch.setattr(rows_module, "_WINDOW_ROWS", 300)
        monkeypatch.setattr(rows_module, "_WINDOW_FILES", 300)
        monkeypatch.setattr(rows_module, "_WORKER_SILENCE", 2.0, raising=False)
        monkeypatch.setattr(rows_module._CheckedImages, "found", stop_the_worker_while_it_sends)
        loading = threading.Thread(target=load, args=(True, got, "w.db"))
        loading.start()
        loading.join(60)
        hung = loading.is_alive()
        for pid in stopped:  # let the test end either way
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        loading.join(30)
    assert stopped
    assert not hung, "the load waited for the rest of a stopped worker's answer for 60 s"
    for what in ("samples", "problems", "notes", "checks"):
        assert got[what] == plain[what], what


# -- 7. an opener a plugin reader registers when it meets its first such file, mid-load -------


def test_an_opener_a_reader_registers_mid_load_is_honoured_for_the_rows_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin source (its own `stream_rows` parse, as lmmprobe's readers write theirs)
    registers its Pillow opener when it first meets such a file, as ``pillow_heif`` is often
    imported lazily. The worker started (its Pillow compared to this process's) before that:
    comparing once, when the worker says it is ready, misses the change, and the rows after
    are refused by the worker though this process reads their files."""
    monkeypatch.setattr(Image, "OPEN", dict(Image.OPEN))
    monkeypatch.setattr(Image, "ID", list(Image.ID))
    img = tmp_path / "img"
    img.mkdir()
    rows = []
    for i in range(12):  # plain pictures: past the threshold, the worker starts and is ready
        _picture(img / f"g{i}.png", (4, 3), i)
        rows.append(_row(i, [f"img/g{i}.png"]))
    for i in range(12, 30):
        (img / f"t{i}.toy").write_bytes(b"LMMT" + struct.pack(">HH", 4, 3) + bytes([i] * 12))
        rows.append(_row(i, [f"img/t{i}.toy"]))

    def parse(_: int, row: dict[str, Any]) -> Any:
        if any(str(v).endswith(".toy") for v in row["images"]) and "LMMTOY" not in Image.OPEN:
            Image.register_open(_Toy.format, _Toy, lambda prefix: prefix[:4] == b"LMMT")
        return parse_row(row, tmp_path)

    def load(db: str) -> tuple[list[Any], list[Any]]:
        Image.OPEN.pop("LMMTOY", None)  # each load starts without the plugin's opener
        with suppress(ValueError):
            Image.ID.remove("LMMTOY")
        result = LoadResult([], "plugin.jsonl")
        with Store(tmp_path / db) as store, remembered_images(store):
            got = list(stream_rows(result, enumerate(rows, 1), parse, strict=False, limit=None))
        samples = [(s.id, [r.content_hash() for r in s.images]) for s in got]
        return samples, [(p.line, p.field, p.reason) for p in result.problems]

    with _workers(monkeypatch, on=False):
        plain = load("plain.db")
    with _workers(monkeypatch, on=True):
        pooled = load("pooled.db")
    assert len(plain[0]) == 30 and not plain[1]
    assert pooled == plain


# -- 8. a stopped worker that takes no more: sending it a large window waits for ever --------


def test_a_window_sent_to_a_stopped_worker_does_not_hang_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker answered its window, then was stopped. The next window (files named by long
    paths: far more than the socket's buffer) is written to a worker that reads nothing, so
    ``send`` waits for ever; a deadline on ``receive`` alone is never reached."""
    img = tmp_path / "img"
    deep = img.joinpath(*["d" * 200] * 14)  # a value of about 2,900 characters
    deep.mkdir(parents=True)
    rows = []
    for i in range(12):  # past the (lowered) threshold: the worker starts
        _picture(img / f"g{i}.png", (4, 3), i)
        rows.append(_row(i, [f"img/g{i}.png"]))
    for i in range(12, 1200):
        _picture(deep / f"p{i}.png", (4, 3), i)
        rows.append(_row(i, [str((deep / f"p{i}.png").relative_to(tmp_path))]))
    data = _write(tmp_path / "q.jsonl", rows)
    stopped: list[int] = []
    original = rows_module._CheckedImages.found
    noted = [0]

    def stop_the_worker_once_it_answered(self: Any, *args: Any) -> None:
        noted[0] += 1
        if noted[0] == 40:  # settling a window while the worker checks (and answers) the next
            time.sleep(1.0)  # its answer, a few KB, is all in the pipe by now
            for pid in _all_workers():
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        original(self, *args)

    got: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    with _workers(monkeypatch, on=False):
        monkeypatch.setattr(rows_module, "_WINDOW_ROWS", 300)
        monkeypatch.setattr(rows_module, "_WINDOW_FILES", 300)
        plain.update(_load(data, tmp_path / "plain.db"))
    with _workers(monkeypatch, on=True):
        monkeypatch.setattr(rows_module, "_WINDOW_ROWS", 300)
        monkeypatch.setattr(rows_module, "_WINDOW_FILES", 300)
        monkeypatch.setattr(rows_module, "_WORKER_SILENCE", 2.0, raising=False)
        monkeypatch.setattr(rows_module._CheckedImages, "found", stop_the_worker_once_it_answered)
        loading = threading.Thread(target=lambda: got.update(_load(data, tmp_path / "w.db")))
        loading.start()
        loading.join(60)
        hung = loading.is_alive()
        for pid in stopped:  # let the test end either way
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        loading.join(30)
    assert stopped
    assert not hung, "the load waited for 60 s to send a window to a stopped worker"
    for what in ("samples", "problems", "notes", "checks"):
        assert got[what] == plain[what], what
