"""An image file's check (open, verify, hash), made here or in a second process.

A large load's first read spends most of its time checking image files it has not seen before:
opening each with Pillow, verifying it and hashing its bytes. That work depends on the file
alone, so `ImagePool` hands it to one worker process on another core while the loading process
parses the next rows (`lmmprobe.data.rows` sends a window of rows' files at a time and settles
each row, in order, when its window's checks come back). `inspect_image_file` is the one check
both sides make, so a file gets the same verdict and the same message wherever it is checked.

The worker is started only for a load that has already checked many new files itself
(`lmmprobe.data.rows`), on a machine with a second core, and never with
``$LMMPROBE_IMAGE_WORKERS=0``. A worker that cannot be started or that fails leaves its files
to be checked in the loading process, as without it.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import io
import logging
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from lmmprobe._file_kind import NotRegularFile, open_regular_file
from lmmprobe.schema.image import (
    image_file_problem,
    open_image,
    pixel_cap_fixed,
    unreadable_reason,
)

log = logging.getLogger(__name__)

READ_WHOLE = 1 << 20
"""An image file of at most this many bytes (1 MiB) is read whole once when it is checked (and
hashed from that read); a larger one is judged from its header, then verified from the file.
Only such files are sent to the worker: their check is one read and their answer is small."""

WORKERS_ENV = "LMMPROBE_IMAGE_WORKERS"
"""Set to 0 to check every image file in the loading process (no second process)."""


class ImageUnreadable(Exception):
    """`inspect_image_file` found the file unreadable: ``reason`` is the row's message for it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Inspected:
    """What checking an image file found.

    Attributes:
        width: The picture's width, from its header.
        height: Its height.
        too_big: Why the file is larger than its picture may be (``image_file_problem``), or
            None; such a file was not verified.
        digest: The hex SHA-256 of its bytes when it was read whole (at most `READ_WHOLE`),
            else None (hashed from the file when a request needs it).

    """

    width: int
    height: int
    too_big: str | None
    digest: str | None


def inspect_image_file(path: str, value: str, size: int) -> Inspected:
    """Open, verify and (when small) hash the image file at `path`, which ``stat`` gave `size`.

    Args:
        path: The resolved file.
        value: The path as the row gave it, for messages.
        size: The file's size from the caller's ``stat``.

    Raises:
        ImageUnreadable: The file is no regular file (swapped since its ``stat``), is not an
            image Pillow reads, is truncated, or is over the decoding cap; its ``reason`` is
            the row's message.

    """
    data: bytes | None = None
    try:
        # Opened as a regular file and checked again once open: a file swapped for a FIFO
        # since the caller's stat would otherwise block this open (and the load) forever.
        with open_regular_file(path, "images", shown=value) as f:
            if size <= READ_WHOLE:
                # Read once, then hashed (a request's key needs it) and checked from memory:
                # Pillow reading a small file from disk costs more than the read. So small a
                # file cannot carry other data past the bound below (`IMAGE_FILE_SLACK`).
                data = f.read(size + 1)
                if len(data) != size:  # changed since its stat: read as a large one
                    data = None
                    f.seek(0)
            # open_image refuses, from the header, an image over the decoding cap (with the
            # fix), so such a row is rejected with its file:line, not when a request is built.
            with open_image(f if data is None else io.BytesIO(data), value) as im:
                width, height = im.size
                # A small picture in a much larger file carries other data, which would be
                # read whole and sent to the model as it is: refused from the header's size.
                too_big = image_file_problem(size, width * height)
                if not too_big:
                    im.verify()  # reads the whole file; catches truncated and non-image files
    except NotRegularFile as exc:
        raise ImageUnreadable(str(exc)) from None
    except Exception as exc:
        reason = unreadable_reason(exc) or type(exc).__name__
        raise ImageUnreadable(f"unreadable image {value}: {reason}") from exc
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    return Inspected(width, height, too_big, digest)


Task = tuple[str, str, int]
"""A file to check: (resolved path, the path as the row gave it, its size)."""


def inspect_files(tasks: Sequence[Task], cap: int | None) -> list[Inspected | str]:
    """`inspect_image_file` for each task under the decoding cap `cap`: its result or its reason.

    The worker's entry point. `cap` is the loading process's cap, read once for its load
    (`lmmprobe.schema.image.pixel_cap_read_once`), so both processes judge by the same one.
    """
    found: list[Inspected | str] = []
    with pixel_cap_fixed(cap):
        for path, value, size in tasks:
            try:
                found.append(inspect_image_file(path, value, size))
            except ImageUnreadable as exc:
                found.append(exc.reason)
    return found


def workers_wanted() -> bool:
    """Whether a worker may check images: a second core, and not ``$LMMPROBE_IMAGE_WORKERS=0``."""
    if os.environ.get(WORKERS_ENV, "").strip() == "0":
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2


class ImagePool:
    """One worker process checking image files (`inspect_files`) while the caller goes on.

    Started with ``spawn``: a fresh interpreter, so no lock another thread of the loading
    process held is inherited. Close it (or use it as a context manager) when the load ends.
    """

    def __init__(self) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")
        )
        # The worker takes a while to start (a fresh interpreter importing Pillow): until this
        # first, empty task is back, the caller goes on checking files itself.
        self._started = self._pool.submit(inspect_files, [], None)

    def ready(self) -> bool | None:
        """True once the worker has started, False while it starts, None if it could not."""
        if not self._started.done():
            return False
        return self._started.exception() is None

    def wait(self) -> None:
        """Wait until the worker has started (or failed to)."""
        concurrent.futures.wait([self._started])

    def submit(self, tasks: Sequence[Task], cap: int | None) -> Future[list[Inspected | str]]:
        """Check `tasks` in the worker; the future gives one result per task, in order."""
        return self._pool.submit(inspect_files, list(tasks), cap)

    def close(self) -> None:
        """Stop the worker; checks not yet started are dropped."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def results_of(
    future: Future[list[Inspected | str]] | None, tasks: Sequence[Task], cap: int | None
) -> list[Inspected | str]:
    """The worker's results for `tasks`, or the same checks made here when it failed.

    A worker that died (killed, out of memory) or could not start is not a verdict on any
    file: its files are checked in this process, with the same function.
    """
    if future is not None:
        try:
            return future.result()
        except Exception as exc:  # the same checks made here give any verdict of its again
            log.debug("the image worker failed (%s): its files are checked here", exc)
    return inspect_files(tasks, cap)


@contextmanager
def image_pool() -> Iterator[ImagePool | None]:
    """An `ImagePool` closed on exit, or None where one cannot start (checks are then local)."""
    try:
        pool: ImagePool | None = ImagePool()
    except (OSError, RuntimeError, ImportError) as exc:
        log.debug("no image worker (%s): images are checked in this process", exc)
        pool = None
    try:
        yield pool
    finally:
        if pool is not None:
            pool.close()
