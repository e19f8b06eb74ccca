"""A large load checks its new image files in a worker process, with the plain check's results.

Past `_POOL_AFTER` new files, `lmmprobe.data.rows` parses a window of rows while one worker
(`lmmprobe.data.image_pool`) opens, verifies and hashes their new files, then settles the rows
in order. Every row must come out as checking its files one by one gives: the same samples and
content hashes, the same refusal (field and words) for each bad row, the same bounds, the
same order of what the store and a remembered load are told. These tests lower the thresholds
so a small file crosses them, and compare against ``$LMMPROBE_IMAGE_WORKERS=0`` (no worker).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmmprobe.data import base as base_module
from lmmprobe.data import rows as rows_module
from lmmprobe.data.base import DataError, iter_source
from lmmprobe.data.image_pool import (
    READ_WHOLE,
    WORKERS_ENV,
    ImagePool,
    inspect_files,
    workers_wanted,
)
from lmmprobe.data.rows import noting_images, remembered_images
from lmmprobe.store import Store

pytestmark = pytest.mark.skipif(not workers_wanted(), reason="one core: no image worker starts")


def _picture(path: Path, size: tuple[int, int], seed: int) -> None:
    Image.new("RGB", size, (seed % 256, seed // 256 % 256, 7)).save(path)


def _hostile_set(root: Path) -> Path:
    """A JSONL whose rows cover every way a row's images can settle, good rows between them."""
    img = root / "img"
    img.mkdir(parents=True)
    good = []
    for i in range(60):
        _picture(img / f"g{i:03d}.png", (4, 3), i)
        good.append(f"img/g{i:03d}.png")
    _picture(img / "wide.png", (10, 10), 1)  # 100 pixels: over the cap the tests set (64)
    whole = (img / "g000.png").read_bytes()
    (img / "trunc.png").write_bytes(whole[: len(whole) // 2])
    (img / "not.png").write_bytes(b"not a picture at all")
    (img / "dir.png").mkdir()
    os.mkfifo(img / "fifo.png")
    big = Image.frombytes("RGB", (6, 6), os.urandom(108))
    big.save(img / "big.png")
    with (img / "big.png").open("ab") as f:  # a small picture carrying more than a MiB
        f.write(os.urandom(READ_WHOLE + 10))
    rows: list[dict[str, Any]] = []

    def row(images: list[Any], **extra: Any) -> None:
        rows.append(
            {"id": f"q{len(rows)}", "images": images, "question": "Which?",
             "choices": ["a", "b"], "answer": 0, **extra}
        )  # fmt: skip

    for name in good[:12]:  # past the (lowered) threshold: the worker starts
        row([name])
    row([good[12], "img/trunc.png"])  # a new good file, then a truncated one
    row(["img/trunc.png", "img/missing.png"])  # the awaited check's refusal comes first
    row(["img/missing.png", "img/trunc.png"])  # refused from its name: first
    row([good[13], good[13], good[14]])  # a file listed again: one check, counted twice
    row(["img/trunc.png"], colour="red")  # an unknown field is refused before the images
    row(["img/not.png"], choices="ab")  # the image's refusal comes before the choices'
    row([good[15]], choices="ab")  # a good image: the choices' refusal
    row(["img/wide.png"])  # over the decoding cap, judged in the worker by the loader's cap
    row([good[16]] * 60)  # 60 x 12 pixels: over a sample's 640 (10 x the cap)
    row([good[17], "img/dir.png"])
    row(["img/fifo.png", good[18]])
    row(["img/big.png"])  # over a MiB: checked in the loading process, in its turn (kept)
    row([good[19], 7])  # not a path
    row([good[20]])
    rows.append(dict(rows[-1]))  # a repeated id, after its first
    for name in good[21:]:
        row([name, good[0]])  # new files beside one remembered from the first rows
    data = root / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


@contextmanager
def _workers(monkeypatch: pytest.MonkeyPatch, on: bool) -> Iterator[None]:
    with monkeypatch.context() as m:
        m.setenv(WORKERS_ENV, "1" if on else "0")
        m.setenv("LMMPROBE_MAX_IMAGE_PIXELS", "64")
        m.setattr(rows_module, "_POOL_AFTER", 4)  # the 66-row file crosses it
        m.setattr(rows_module, "_WINDOW_ROWS", 3)
        m.setattr(rows_module, "_WINDOW_FILES", 2)  # and windows ended by their files
        m.setattr(rows_module, "_WAIT_FOR_START", True)  # every file past the threshold
        m.setattr(base_module, "MAX_PROBLEMS_SHOWN", 1_000)  # every refusal compared
        yield


def _load(data: Path, db: Path, **options: Any) -> dict[str, Any]:
    """Everything a load gives and tells, with the largest number of worker processes seen."""
    notes: list[tuple[str, str, str]] = []
    children = [0]

    def note(base: Path, value: str, file: str, info: os.stat_result) -> None:
        notes.append((str(base), value, file))
        children[0] = max(children[0], len(_workers_of(os.getpid())))

    with Store(db) as store:
        with remembered_images(store), noting_images(note):
            stream = iter_source(str(data), **options)
            samples = [
                (s.id, s.model_dump(mode="json"), [r.content_hash() for r in s.images])
                for s in stream
            ]
        problems = [(p.line, p.field, p.reason) for p in stream.problems]
    left = len(_workers_of(os.getpid()))
    with sqlite3.connect(db) as conn:
        checks = sorted(conn.execute("SELECT * FROM image_checks").fetchall())
    return {"samples": samples, "problems": problems, "notes": notes, "checks": checks,
            "workers": children[0], "left": left}  # fmt: skip


def test_rows_settled_after_the_worker_checked_their_files_are_those_checked_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _hostile_set(tmp_path)
    with _workers(monkeypatch, on=False):
        plain = _load(data, tmp_path / "plain.db")
    with _workers(monkeypatch, on=True):
        pooled = _load(data, tmp_path / "pooled.db")
    assert plain["workers"] == 0
    assert pooled["workers"] == 1 and pooled["left"] == 0  # it ran, and it is gone
    for what in ("samples", "problems", "notes", "checks"):
        assert pooled[what] == plain[what], what
    problems = dict((line, (field, reason)) for line, field, reason in plain["problems"])
    assert problems[13][0] == "images[1]" and "unreadable image img/trunc.png" in problems[13][1]
    assert problems[14][0] == "images[0]" and "trunc.png" in problems[14][1]
    assert problems[15][0] == "images[0]" and "not found" in problems[15][1]
    assert problems[17][0] == "colour"
    assert problems[18][0] == "images[0]" and "not an image Pillow can read" in problems[18][1]
    assert problems[19][0] == "choices"
    assert "decoding limit" in problems[20][1]
    assert problems[21][0] == "images" and "MP" in problems[21][1]
    assert problems[22][0] == "images[1]" and "a folder" in problems[22][1]
    assert problems[23][0] == "images[0]" and "a FIFO" in problems[23][1]
    assert problems[25][0] == "images[1]" and "expected a file path" in problems[25][1]
    assert problems[27][0] == "id"
    kept = {sample_id: hashes for sample_id, _, hashes in plain["samples"]}
    big = (tmp_path / "img" / "big.png").read_bytes()  # over a MiB: checked in this process
    assert kept["q23"] == [hashlib.sha256(big).hexdigest()]
    assert kept["q15"] == [kept["q15"][0]] * 2 + [kept["q15"][2]]
    assert len(kept) == len(data.read_text().splitlines()) - len(problems)


def test_a_limit_or_strict_load_stops_where_the_plain_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _hostile_set(tmp_path)
    for i, options in enumerate([{"limit": 14}, {"limit": 40}]):
        with _workers(monkeypatch, on=False):
            plain = _load(data, tmp_path / f"p{i}.db", **options)
        with _workers(monkeypatch, on=True):
            pooled = _load(data, tmp_path / f"w{i}.db", **options)
        for what in ("samples", "problems", "notes", "checks"):
            assert pooled[what] == plain[what], (options, what)
    errors = []
    for on in (False, True):
        with _workers(monkeypatch, on=on), pytest.raises(DataError) as raised:
            _load(data, tmp_path / f"strict{on}.db", strict=True)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "trunc.png" in errors[0]


def test_a_worker_killed_mid_load_leaves_its_files_to_the_loading_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _hostile_set(tmp_path)
    with _workers(monkeypatch, on=False):
        plain = _load(data, tmp_path / "plain.db")
    killed: list[int] = []
    original = rows_module._CheckedImages.found
    noted = [0]

    def kill_the_worker_once(self: Any, *args: Any) -> None:
        noted[0] += 1
        if noted[0] == 20:  # rows past the threshold are deferred by now, windows in flight
            for pid in _workers_of(os.getpid()):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        original(self, *args)

    with _workers(monkeypatch, on=True):
        monkeypatch.setattr(rows_module._CheckedImages, "found", kill_the_worker_once)
        pooled = _load(data, tmp_path / "pooled.db")
    assert killed
    for what in ("samples", "problems", "notes", "checks"):
        assert pooled[what] == plain[what], what


def test_the_worker_judges_a_file_as_the_loading_process_does(tmp_path: Path) -> None:
    _picture(tmp_path / "a.png", (10, 10), 3)
    (tmp_path / "b.png").write_bytes(b"GIF89a-broken")
    tasks = [(str(tmp_path / "a.png"), "a.png", (tmp_path / "a.png").stat().st_size),
             (str(tmp_path / "b.png"), "b.png", 13)]  # fmt: skip
    here = inspect_files(tasks, 1_000)
    assert inspect_files(tasks, 50)[0] != here[0]  # the cap given, not the setting, judges
    pool = ImagePool()
    try:
        pool.wait()
        assert pool.ready() is True
        pool.send(tasks, 1_000)
        assert pool.receive(60) == here
        pool.send(tasks, 50)
        assert pool.receive(60) == inspect_files(tasks, 50)
    finally:
        pool.close()
    assert not _workers_of(os.getpid())


def _workers_of(pid: int) -> list[int]:
    """The image workers among `pid`'s child processes (from /proc)."""
    found = []
    with suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with suppress(OSError):
                if b"lmmprobe.data.image_pool" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return found


def test_a_run_over_thousands_of_new_images_gives_the_figures_of_one_without_the_worker(
    tmp_path: Path,
) -> None:
    img = tmp_path / "img"
    img.mkdir()
    rows = []
    for i in range(3_000):  # past the real threshold (1,024 new files) by far
        _picture(img / f"p{i}.png", (4, 3), i)
        rows.append({"id": f"q{i}", "images": [f"img/p{i}.png"], "question": "Which?",
                     "choices": ["a", "b", "c"], "answer": i % 3})  # fmt: skip
    (img / "p7.png").write_bytes(b"broken")
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    results = []
    for on in ("0", "1"):
        out = tmp_path / f"out{on}"
        command = [
            str(Path(sys.executable).with_name("lmmprobe")), "run", "-m", "first", "-d",
            str(data), "--db", str(tmp_path / f"{on}.db"), "--out", str(out),
        ]  # fmt: skip
        env = {**os.environ, WORKERS_ENV: on, "COLUMNS": "160"}
        with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as run:
            spawned = _children_seen(run)
            stderr = run.stderr.read() if run.stderr else ""
        assert run.returncode == 0, stderr
        assert spawned == (on == "1")  # the worker is a child of the run's process
        assert "q.jsonl:8: images[0]: unreadable image img/p7.png: not an image" in stderr
        figures = json.loads((out / "results.json").read_text())
        models = figures["models"]  # each model's figures (its latency is the clock's)
        results.append(({m: models[m]["metrics"] for m in models}, figures.get("data")))
    assert results[0] == results[1]


def _children_seen(run: subprocess.Popen[str]) -> bool:
    """Whether `run` had an image worker while it ran (from /proc, until it ends)."""
    seen = False
    deadline = time.monotonic() + 300
    while run.poll() is None and time.monotonic() < deadline:
        seen = seen or bool(_workers_of(run.pid))
        time.sleep(0.01)
    if run.poll() is None:
        run.kill()
        pytest.fail("the run did not end in 300 s")
    return seen


def _warning_tiff(path: Path) -> None:
    """A TIFF Pillow opens and verifies, warning twice: its Software tag points past the end."""
    from PIL import TiffImagePlugin

    tags = TiffImagePlugin.ImageFileDirectory_v2()
    tags[305] = "x" * 40  # stored out of line: its offset is moved past the file's end
    Image.new("RGB", (4, 3), (1, 2, 3)).save(path, "TIFF", tiffinfo=tags)
    data = bytearray(path.read_bytes())
    (ifd,) = struct.unpack("<I", data[4:8])
    (count,) = struct.unpack("<H", data[ifd : ifd + 2])
    for i in range(count):
        at = ifd + 2 + 12 * i
        if struct.unpack("<H", data[at : at + 2])[0] == 305:
            data[at + 8 : at + 12] = struct.pack("<I", len(data) + 1000)
    path.write_bytes(bytes(data))


def _shown(caught: list[warnings.WarningMessage]) -> list[tuple[type[Warning], str, str, int]]:
    return [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def test_the_workers_warnings_are_raised_again_where_the_file_is_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 19 of issue 34: Pillow's warnings in the worker went to its stderr, which goes
    # nowhere; checked in the loading process, the same file showed them.
    _warning_tiff(tmp_path / "w.tif")
    _picture(tmp_path / "a.png", (10, 10), 3)
    tasks = [(str(tmp_path / name), name, (tmp_path / name).stat().st_size)
             for name in ("a.png", "w.tif")]  # fmt: skip
    with warnings.catch_warnings(record=True) as here_caught:
        warnings.simplefilter("always")
        here = inspect_files(tasks, 1_000)
    assert here_caught and all(w.category is UserWarning for w in here_caught)
    pool = ImagePool()
    try:
        pool.wait()
        assert pool.ready() is True
        pool.send(tasks, 1_000)
        with warnings.catch_warnings(record=True) as pooled_caught:
            warnings.simplefilter("always")
            assert pool.receive(60) == here
        assert _shown(pooled_caught) == _shown(here_caught)  # the same, from the same line
        # A filter making them errors makes the file unreadable, here as there.
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            strict = inspect_files(tasks, 1_000)
            pool.send(tasks, 1_000)
            assert pool.receive(60) == strict
        assert isinstance(strict[1], str) and strict[1].startswith("unreadable image w.tif: ")
    finally:
        pool.close()
    # Through a load: the rows past the threshold are settled with the worker's checks.
    rows = [{"id": f"q{i}", "images": [f"img/g{i}.png"], "question": "Which?",
             "choices": ["a", "b"], "answer": 0} for i in range(12)]  # fmt: skip
    (tmp_path / "img").mkdir()
    for i in range(12):
        _picture(tmp_path / "img" / f"g{i}.png", (4, 3), i)
    _warning_tiff(tmp_path / "img" / "w.tif")
    rows.append({**rows[0], "id": "warned", "images": ["img/w.tif"]})
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    shown = []
    for on in (False, True):
        with _workers(monkeypatch, on=on), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = _load(data, tmp_path / f"{on}.db")
        assert loaded["workers"] == (1 if on else 0)
        shown.append([w for w in _shown(caught) if w[0] is UserWarning])
    assert shown[0] and shown[1] == shown[0]


def test_a_path_entry_holding_the_separator_does_not_keep_the_worker_from_starting(
    tmp_path: Path,
) -> None:
    # Re-test 19 of issue 34: the worker's $PYTHONPATH was this process's sys.path joined with
    # ":", so an entry holding ":" (where lmmprobe was found) became two that do not exist,
    # and the worker could not start. Here lmmprobe is found only there: Python without its
    # site (no editable install), Pillow and the rest from the virtual environment's folder.
    import PIL

    import lmmprobe

    lib = tmp_path / "lib:dir"
    lib.mkdir()
    (lib / "lmmprobe").symlink_to(Path(lmmprobe.__file__).parent)
    site = Path(PIL.__file__).parent.parent
    code = (
        "import sys; sys.path[:0] = sys.argv[1:3]; import lmmprobe; "
        "from lmmprobe.data.image_pool import ImagePool; pool = ImagePool(); pool.wait(60); "
        "print(lmmprobe.__file__, pool.ready()); pool.close()"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base = os.path.realpath(sys.executable)  # not the environment's: its site is not read
    done = subprocess.run([base, "-S", "-c", code, str(lib), str(site)], env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(lib / "lmmprobe" / "__init__.py"), "True"]
