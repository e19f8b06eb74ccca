"""A video that is no regular file is named as what it is, and is never waited on.

Re-test 15 #8: the decoder looked at a video's size, then had FFmpeg open the path: a FIFO (size
0) was called "the file is empty (0 bytes)", so was a link to ``/dev/zero``, a folder was "not
a video FFmpeg can read (Is a directory)"; and a file swapped for a FIFO between the two
blocked the open until someone wrote to the FIFO. The video is now opened non-blocking,
checked once open (`lmmprobe._file_kind.open_regular_file`) and given to FFmpeg as opened.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe
from tests.videos import needs_av, write_video

from lmmprobe.data.rows import RowError
from lmmprobe.data.video import check_video

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def _zero(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "a character device"


def _folder(path: Path) -> str:
    path.mkdir()
    return "a folder"


@pytest.mark.parametrize("make", [_fifo, _zero, _folder], ids=["fifo", "zero", "folder"])
def test_a_video_that_is_no_regular_file_is_that_rows_one_line(
    make: Callable[[Path], str], tmp_path: Path
) -> None:
    needs_av()
    write_video(tmp_path / "good.mp4")
    kind = make(tmp_path / "odd.mp4")
    rows = [{"id": i, "video": v, "question": "Which way?", "choices": ["left", "right"],
             "answer": 0} for i, v in (("good", "good.mp4"), ("odd", "odd.mp4"))]  # fmt: skip
    data = tmp_path / "v.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    proc = lmmprobe("run", "-d", data, "-m", "random", "--frames", "2", "--db",
                    tmp_path / "s.db", "-q", timeout=120)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in said, said
    assert (
        f"v.jsonl:2: video: video {(tmp_path / 'odd.mp4').resolve()}: {kind}, not a regular file; lmmprobe reads videos from regular files only"
        in said
    ), said
    assert "is empty" not in said and "Is a directory" not in said, said


def test_a_video_swapped_for_a_fifo_before_it_is_opened_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_av()
    video = write_video(tmp_path / "a.mp4")
    target, flag = str(video.resolve()), tmp_path / "swapped"
    real_size, real_open = os.path.getsize, os.open

    def swap_once(path: Any) -> None:
        # The race, made certain: a regular file when last looked at (the decoder measured its
        # size), a FIFO when it is opened.
        if str(path) == target and not os.path.lexists(flag):
            flag.touch()
            os.unlink(target)
            os.mkfifo(target)

    def size_then_swap(path: Any) -> int:
        size = real_size(path)
        swap_once(path)
        return size

    def swap_then_open(path: Any, *args: Any, **kwargs: Any) -> int:
        swap_once(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "getsize", size_then_swap)
    monkeypatch.setattr(os, "open", swap_then_open)
    outcome: list[BaseException | None] = []

    def check() -> None:
        try:
            check_video(tmp_path, "a.mp4")
            outcome.append(None)
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(timeout=30)
    blocked = worker.is_alive()
    if blocked:  # let the blocked open return (a writer appears, then leaves) before failing
        os.close(real_open(target, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=10)
    assert not blocked, "the video's open blocked on a FIFO"
    assert flag.exists()
    (problem,) = outcome
    assert isinstance(problem, RowError), problem
    assert f"{target}: a FIFO, not a regular file" in problem.reason, problem.reason
