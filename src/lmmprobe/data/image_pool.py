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

import contextlib
import hashlib
import io
import logging
import os
import signal
import socket
import struct
import subprocess
import sys
import warnings
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import ModuleType

from PIL import Image, ImageFile

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
        raise ImageUnreadable(_unreadable(value, exc)) from exc
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    return Inspected(width, height, too_big, digest)


def _unreadable(value: str, exc: BaseException) -> str:
    """The row's message for the image file `value` whose check raised `exc`."""
    return f"unreadable image {value}: {unreadable_reason(exc) or type(exc).__name__}"


Task = tuple[str, str, int]
"""A file to check: (resolved path, the path as the row gave it, its size)."""


@dataclass(frozen=True, slots=True)
class Warned:
    """A warning a file's check raised in the worker (Pillow's about a damaged TIFF tag, say).

    Sent back with the check's result and raised again in the loading process
    (`ImagePool.receive`), where the check made there would have raised it: the same warning,
    from the same place, under that process's filters.
    """

    category: type[Warning]
    message: str
    filename: str
    lineno: int


def inspect_files(
    tasks: Sequence[Task], cap: int | None, warned: list[tuple[Warned, ...]] | None = None
) -> list[Inspected | str]:
    """`inspect_image_file` for each task under the decoding cap `cap`: its result or its reason.

    The worker's entry point. `cap` is the loading process's cap, read once for its load
    (`lmmprobe.schema.image.pixel_cap_read_once`), so both processes judge by the same one.
    With `warned` (the worker's), the warnings each check raises are kept there, one tuple per
    task, instead of shown (a worker's stderr goes nowhere), to be raised again by the process
    the results go to.
    """
    found: list[Inspected | str] = []
    with pixel_cap_fixed(cap):
        for path, value, size in tasks:
            with _recorded(warned):
                try:
                    found.append(inspect_image_file(path, value, size))
                except ImageUnreadable as exc:
                    found.append(exc.reason)
    return found


@contextlib.contextmanager
def _recorded(warned: list[tuple[Warned, ...]] | None) -> Iterator[None]:
    """Every warning raised inside appended to `warned` as one tuple (None: left alone)."""
    if warned is None:
        yield
        return
    with warnings.catch_warnings(record=True) as caught:
        # Every one is sent: the loading process's own filters decide what is shown.
        warnings.simplefilter("always")
        yield
    warned.append(tuple(Warned(w.category, str(w.message), w.filename, w.lineno) for w in caught))


def _raised_again(
    task: Task, found: Inspected | str, warned: tuple[Warned, ...]
) -> Inspected | str:
    """`found`, once the worker's warnings about the file are raised here as the check raises them.

    Each is raised from where it was raised in the worker (file, line, module), through that
    module's registry of warnings shown, so this process's filters (``-W``, ``once``,
    ``ignore``) treat it as a warning of a check made here. A filter that makes it an error
    makes the file unreadable, as it does to a check made here.
    """
    for w in warned:
        module = _module_of(w.filename)
        registry = None if module is None else vars(module).setdefault("__warningregistry__", {})
        try:
            warnings.warn_explicit(
                w.message,
                w.category,
                w.filename,
                w.lineno,
                module=None if module is None else module.__name__,
                registry=registry,
            )
        except Warning as exc:
            return _unreadable(task[1], exc)
    return found


def _module_of(filename: str) -> ModuleType | None:
    """The loaded module whose source is `filename` (Pillow's plugin that warned), if any."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None


def workers_wanted() -> bool:
    """Whether a worker may check images: a second core, and not ``$LMMPROBE_IMAGE_WORKERS=0``."""
    if os.environ.get(WORKERS_ENV, "").strip() == "0":
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores >= 2


def pillow_state() -> tuple[object, ...]:
    """What decides how Pillow reads a file in this process: its openers, decoders and settings.

    Every format Pillow ships is loaded (``Image.init``) so that two processes compare alike
    however many images each has opened; a plugin's own format (``pillow-heif``'s opener, say)
    or a changed setting (``ImageFile.LOAD_TRUNCATED_IMAGES``) makes the state differ.
    """
    Image.init()
    return (
        tuple(sorted((name, _qualified(f), _qualified(a)) for name, (f, a) in Image.OPEN.items())),
        tuple(sorted((name, _qualified(d)) for name, d in Image.DECODERS.items())),
        bool(ImageFile.LOAD_TRUNCATED_IMAGES),
        Image.MAX_IMAGE_PIXELS,
    )


def _qualified(thing: object) -> str:
    if thing is None:
        return ""
    module = getattr(thing, "__module__", type(thing).__module__)
    name = getattr(thing, "__qualname__", type(thing).__qualname__)
    return f"{module}.{name}"


class ImagePool:
    """One worker process checking image files (`inspect_files`) while the caller goes on.

    The worker is a fresh interpreter started on this module (`_START`, given this process's
    ``sys.path`` in its first message; not multiprocessing's spawn, which would run the
    caller's own ``__main__`` script again in the child, and which a daemonic process may not
    use), talking over a socket pair: the caller
    `send`s a batch of files, then `receive`s its results, one batch at a time, in order. A
    batch is sent only when the worker has nothing left to send back, so neither side can
    block the other on a full pipe. Close it (or let it be collected) when the load ends; the
    worker also ends when its pipe closes.
    """

    def __init__(self, silence: float = 120.0) -> None:
        """Start the worker; `silence`: the longest one read or write on its pipe may wait.

        A worker stopped (SIGSTOP, a debugger, a frozen cgroup) halfway through sending an
        answer larger than the pipe's buffer has made `receive`'s ``poll`` true, and one
        that takes nothing more blocks `send`: the kernel's own timeouts bound every read
        and write, which then raise an `OSError`.
        """
        ours, theirs = socket.socketpair()
        wait = struct.pack("ll", int(silence), int(silence % 1 * 1e6))
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, wait)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, wait)
        try:
            self._proc = subprocess.Popen(
                # -P: the working folder is not put first on the worker's path, so a
                # hashlib.py (or PIL/) where lmmprobe is run from is neither run nor used.
                [sys.executable, "-P", "-c", _START, __name__, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        # The worker finds lmmprobe (and Pillow's plugins) where this process does: its path
        # sent whole, not joined into $PYTHONPATH, which a folder whose name holds the
        # separator (":") would split into two that do not exist.
        with contextlib.suppress(OSError):  # a worker that died at once: `ready` says None
            self._conn.send([p for p in sys.path if p])
        self._sent: deque[list[Task]] = deque()  # each batch sent and not yet received
        self._started: bool | None = False
        self._state: object = None  # the worker's `pillow_state`, sent with its "ready"
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, self._conn, os.getpid())

    def ready(self) -> bool | None:
        """True once the worker has started, False while it starts, None if it could not."""
        if self._started is False:
            self._started = self._first_word(0)
        return self._started

    def wait(self, timeout: float = 60.0) -> None:
        """Wait (at most `timeout` seconds) until the worker has started or failed to."""
        if self._started is False:
            self._started = self._first_word(timeout)

    def _first_word(self, timeout: float) -> bool | None:
        try:
            if not self._conn.poll(timeout):
                return False
            word = self._conn.recv()
        except (EOFError, OSError):
            return None
        if not (isinstance(word, tuple) and len(word) == 2 and word[0] == "ready"):
            return None
        self._state = word[1]
        if word[1] != pillow_state():
            # A plugin registered an image format (or changed a reader's setting) in this
            # process: the worker, a fresh interpreter, would judge such files otherwise.
            log.debug("this process reads images the worker would not: they are checked here")
            return None
        return True

    def agrees(self) -> bool:
        """Whether the worker still reads images as this process does (`pillow_state`).

        Asked before each batch: a plugin may register its opener in this process only when
        it first meets such a file, after the worker started.
        """
        return self._state == pillow_state()

    def send(self, tasks: Sequence[Task], cap: int | None) -> None:
        """Have the worker check `tasks` under the decoding cap `cap` (`receive` the results).

        Raises:
            OSError: The worker is gone, or took nothing for `silence` seconds.

        """
        self._conn.send((list(tasks), cap))
        self._sent.append(list(tasks))

    def receive(self, timeout: float) -> list[Inspected | str]:
        """The results of the batch sent first among those not yet received, one per task.

        Args:
            timeout: Seconds to wait for them (a worker stopped, not ended, never answers).

        Raises:
            EOFError: The worker ended before answering.
            TimeoutError: It said nothing within `timeout`.
            OSError: Its pipe failed, or the rest of its answer did not come within `silence`.

        """
        if not self._conn.poll(timeout):
            raise TimeoutError(f"the image worker said nothing for {timeout:g} s")
        answer = self._conn.recv()
        tasks = self._sent.popleft() if self._sent else []
        if not (isinstance(answer, tuple) and len(answer) == 2):
            raise EOFError(f"the image worker answered {type(answer).__name__}")
        found, warned = answer
        if not (isinstance(found, list) and isinstance(warned, list)):
            raise EOFError("the image worker answered no list of results")
        if len(found) != len(tasks) or len(warned) != len(tasks):
            return found  # the caller refuses a count that does not match its files
        # The warnings its checks raised, raised here (`_raised_again`), as the checks made
        # here raise them: a file's, when its result is taken.
        return [_raised_again(*each) for each in zip(tasks, found, warned, strict=True)]

    def close(self) -> None:
        """Stop the worker (asked, then killed if it does not end within a second)."""
        self._finalizer()


def _shutdown(proc: subprocess.Popen[bytes], conn: Connection, owner: int) -> None:
    """End a worker: told to stop, its pipe closed, killed if it has not ended within a second.

    Closing the pipe at once also ends a worker still sending results nobody will read (a
    load stopped at its limit), which would otherwise wait on a full pipe.
    """
    if owner != os.getpid():
        return  # a forked copy: the worker is the parent's
    with contextlib.suppress(OSError):
        conn.send(None)
    conn.close()
    try:
        proc.wait(1.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def serve(conn: Connection) -> None:
    """The worker's loop: say it is ready, then check each batch sent until told to stop."""
    # Ctrl-C in the terminal reaches the whole process group: the loading process decides.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn.send(("ready", pillow_state()))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return  # the loading process is gone
        if job is None:
            return
        tasks, cap = job
        warned: list[tuple[Warned, ...]] = []
        found = inspect_files(tasks, cap, warned)
        conn.send((found, warned))


_START = """\
import importlib, sys
from multiprocessing.connection import Connection
conn = Connection(int(sys.argv[2]))
sys.path[:0] = conn.recv()
importlib.import_module(sys.argv[1]).serve(conn)
"""
"""The worker's start (``python -P -c _START MODULE FD``): the path the loading process sends
first, then `serve` through the module's own name, so that the results it sends are pickled as
``lmmprobe.data.image_pool.Inspected``, which the loading process knows."""
