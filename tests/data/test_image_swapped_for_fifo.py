"""An image file swapped for a FIFO after its check's ``stat`` is refused, never waited on.

Re-test 14: the image check opened the file with a plain ``open`` after ``stat`` said it was a
regular file; a file replaced by a FIFO in between blocked that open (and the whole load)
until someone wrote to the FIFO. The open is now non-blocking and checks what it opened.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmmprobe.data.rows import RowError, check_image


def test_an_image_swapped_for_a_fifo_after_its_stat_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = tmp_path / "a.png"
    Image.new("RGB", (4, 4), (1, 2, 3)).save(image)
    real_stat = os.stat
    target, flag = str(image.resolve()), tmp_path / "swapped"

    def stat_then_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        # The race, made certain: the file is a regular one when looked at, a FIFO when opened.
        info = real_stat(path, *args, **kwargs)
        if isinstance(path, str) and path == target and not os.path.lexists(flag):
            flag.touch()
            os.unlink(target)
            os.mkfifo(target)
        return info

    monkeypatch.setattr(os, "stat", stat_then_swap)
    outcome: list[BaseException | None] = []

    def check() -> None:
        try:
            check_image(tmp_path, "a.png", "image")
            outcome.append(None)
        except BaseException as exc:  # handed to the test's thread
            outcome.append(exc)

    worker = threading.Thread(target=check, daemon=True)
    worker.start()
    worker.join(timeout=30)
    blocked = worker.is_alive()
    if blocked:  # let the blocked open return (a writer appears, then leaves) before failing
        os.close(os.open(image, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=10)
    assert not blocked, "the image check blocked on a FIFO"
    assert flag.exists()
    (problem,) = outcome
    assert isinstance(problem, RowError), problem
    assert problem.field == "image"
    assert "a.png: a FIFO, not a regular file" in problem.reason, problem.reason
