"""Row validation every file-based source shares.

One invalid row is a `RowError`, reported with the file and position it came from; the rest of
the file still loads.

A source turns each raw row (a JSON line, a ReForm-Eval entry, a dataset row) into a `Sample`
with a parse function that raises `RowError(field, reason)`, and hands the rows to
`stream_rows` (one at a time) or `collect_rows` (into a list), which apply ``limit``, record
problems (or raise in strict mode) and drop repeated ids (`FirstSeen`: bounded memory).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
import stat
import sys
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from pydantic import ValidationError

from lmmprobe._file_kind import kernel_file, not_regular_file
from lmmprobe._secrets import redact_urls
from lmmprobe.data.base import LoadResult, SampleProblem, SampleStream
from lmmprobe.data.image_pool import (
    READ_WHOLE,
    ImagePool,
    ImageUnreadable,
    Inspected,
    Task,
    inspect_files,
    inspect_image_file,
    workers_wanted,
)
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.schema.image import (
    IMAGE_FILE_SLACK,
    image_file_problem,
    max_image_pixels,
    pixel_cap_read_once,
    sample_bytes_problem,
    sample_images_problem,
)
from lmmprobe.schema.text import MAX_NESTING as MAX_NESTING  # read from here by the readers
from lmmprobe.schema.text import deeper_than, shown_message

R = TypeVar("R")

log = logging.getLogger(__name__)


class RowError(Exception):
    """One input row is invalid: which field (None for the whole row) and why.

    Attributes:
        field: The field (or column) at fault, in the source's own naming.
        reason: What is wrong, for the person fixing the file.

    """

    def __init__(self, field: str | None, reason: str) -> None:
        """Describe the problem with `field` (None: the row as a whole).

        A reason quoting a long value from the file is cut in the middle (`shown_message`):
        every definition's message stays one readable line, whatever the row holds.
        """
        reason = shown_message(reason)
        super().__init__(reason)
        self.field = field
        self.reason = reason


def require_object(row: Any, required: Iterable[str]) -> dict[str, Any]:
    """The row as a JSON object holding every `required` field.

    Raises:
        RowError: The row is not an object, or lacks a required field (the first one named).

    """
    if not isinstance(row, dict):
        raise RowError(None, f"expected a JSON object, got {type(row).__name__}")
    missing = [f for f in required if f not in row]
    if missing:
        raise RowError(missing[0], "missing required field")
    return row


def check_image(base: Path, value: Any, field: str) -> ImageRef:
    """Reference an image file given relative to `base`, after checking Pillow can read it.

    Inside `remembered_images`, a file the store remembers with its size and modification
    time unchanged is not opened again: its remembered dimensions are held to today's pixel cap
    and its remembered content hash goes with the reference.

    Raises:
        RowError: `value` is not a path, the file is missing, or it is not a readable image.

    """
    checked = _CHECKED.get()
    if checked is not None and checked.row is not None:
        return checked.defer(base, [value], field, single=True)[0]
    return _checked_image(base, value, field)[0]


def outside_folder(value: str, folder: str) -> str | None:
    """Why an image path a dataset row gives leaves the dataset's folder, or None.

    A dataset's rows name images inside the dataset's own folder: an absolute path, or one
    whose ``..`` climbs out of the folder, would have a run read (and send to a model) any
    picture on the machine. The path is judged as written (links inside the folder are its own).

    Args:
        value: The path as the row wrote it.
        folder: How to name the folder in the message (``"the dataset's folder"``).

    """
    parts = Path(os.path.normpath(value)).parts
    if os.path.isabs(value) or (parts and parts[0] == ".."):
        return (
            f"image path {value!r} is outside {folder}; lmmprobe reads a dataset's images only "
            "from inside its own folder"
        )
    return None


def check_images(base: Path, values: list[Any], field: str = "images") -> list[ImageRef]:
    """Reference a sample's image files (`check_image`), each distinct file checked once.

    A file listed again is the same reference (it is read, hashed and encoded as one), and the
    list is bounded as one sample's images are (`lmmprobe.schema.image.sample_images_problem`:
    how many, and their pixels together, a repeated file counted each time, as a model is shown
    it each time; `sample_bytes_problem`: the files' bytes together, a repeated file counted
    once, as it is read once).

    Raises:
        RowError: An entry is not a readable image (naming ``images[i]``), or the list is
            over a bound (naming `field`).

    """
    checked = _CHECKED.get()
    if checked is not None and checked.row is not None:
        return checked.defer(base, values, field)
    seen: dict[Any, tuple[ImageRef, int, int]] = {}
    refs: list[ImageRef] = []
    pixels: list[int] = []
    sizes: list[int] = []
    for i, value in enumerate(values):
        known = seen.get(value) if isinstance(value, str) else None
        if known is None:
            known = _checked_image(base, value, f"{field}[{i}]")
            seen[value] = known
            sizes.append(known[2])  # read once, however often listed
        refs.append(known[0])
        pixels.append(known[1])
        # Checked as the list is read, so a long list stops at the bound, not after its end.
        problem = sample_images_problem(pixels, len(values)) or sample_bytes_problem(
            sizes, len(values)
        )
        if problem:
            raise RowError(field, problem)
    return refs


def _checked_image(base: Path, value: Any, field: str) -> tuple[ImageRef, int, int]:
    """`check_image`'s reference, the image's pixels (width x height) and the file's size."""
    checked = _CHECKED.get()
    path, info = _image_file(base, value, field)
    if checked is not None:
        known = _remembered_check(checked, value, field, path, info)
        if known is not None:
            checked.found(base, value, path, info)
            return (*known, info.st_size)
    return _settled(checked, base, value, field, path, info, None, None)


def _image_file(base: Path, value: Any, field: str) -> tuple[str, os.stat_result]:
    """The regular file an image path leads to, and its ``stat``, from the name alone (no read).

    Raises:
        RowError: `value` is no path, leads to no regular file, or to one larger than any
            picture within the decoding cap.

    """
    if not isinstance(value, str) or not value:
        raise RowError(field, f"expected a file path, got {value!r}")
    path, info = located_image(base, value, field)
    if info is None and value[:5].lower() == "data:":
        # Only files are read: a data: URL was looked for as a file of that name.
        raise RowError(field, data_url_problem(value))
    if info is None and is_url(value):
        # So was an http(s) URL: "image file not found" sent the user looking for a file.
        raise RowError(field, url_problem(value))
    if info is None or not stat.S_ISREG(info.st_mode) or kernel_file(info):
        unreadable = not_regular_file(base / value, "images", shown=value)
        raise RowError(field, unreadable or f"image file not found: {value} (looked for {path})")
    # A file larger than any picture within the decoding cap is refused unread (a sparse
    # file may claim gigabytes that cost nothing on disk, and verify reads a chunk whole).
    too_big = image_file_problem(info.st_size)
    if too_big:
        raise RowError(field, f"image {value}: {too_big}")
    return path, info


def _remembered_check(
    checked: _CheckedImages, value: str, field: str, path: str, info: os.stat_result
) -> tuple[ImageRef, int] | None:
    """The store's remembered check of an unchanged file (reference, pixels), else None.

    Raises:
        RowError: The remembered picture is larger than its file may be under today's rules.

    """
    known = checked.known(path, info)
    if known is not None:
        too_big = image_file_problem(info.st_size, known[1])  # remembered before this rule
        if too_big:
            raise RowError(field, f"image {value}: {too_big}")
    return known


def _settled(
    checked: _CheckedImages | None,
    base: Path,
    value: str,
    field: str,
    path: str,
    info: os.stat_result,
    found: Inspected | str | None,
    ref: ImageRef | None,
) -> tuple[ImageRef, int, int]:
    """A new file's check (`found`: made elsewhere; None: made now), remembered and noted.

    Args:
        checked: The load's remembered checks, told of this one (None: outside them).
        base: The folder `value` is relative to.
        value: The path as the row gave it.
        field: The row's field, for messages (``images[2]``).
        path: The file it leads to (resolved).
        info: That file's ``stat``.
        found: The check made elsewhere (`image_pool`), or None to make it now.
        ref: The reference a deferred row already holds (given its hash here), else None.

    Raises:
        RowError: The check found the file unreadable, or larger than its picture may be.

    """
    if found is None:
        try:
            found = inspect_image_file(path, value, info.st_size)
        except ImageUnreadable as exc:
            raise RowError(field, exc.reason) from exc.__cause__
    if isinstance(found, str):
        raise RowError(field, found)
    if found.too_big:
        raise RowError(field, f"image {value}: {found.too_big}")
    if ref is None:
        ref = ImageRef.from_path(path, content_hash=found.digest)
    elif found.digest is not None:
        ref.remember_hash(found.digest)
    if checked is not None:
        checked.add(path, info, found.width, found.height, ref)
        checked.found(base, value, path, info)
    return ref, found.width * found.height, info.st_size


DATA_URL_SHOWN = 40
"""Characters of a data: URL an error shows (one may hold megabytes of base64)."""


def data_url_problem(value: str) -> str:
    """Why an image given as a ``data:`` URL is not read, and how to give the image instead."""
    shown = value if len(value) <= DATA_URL_SHOWN else f"{value[:DATA_URL_SHOWN]}…"
    return (
        f"{shown!r} is a data: URL; lmmprobe does not read data: URLs as images: save the "
        "picture as a file and give its path, relative to the data file's folder"
    )


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""A path that starts as a URL does (``https://``, ``s3://``): no file, though one could be
named so (a folder ``https:``), which is why a file of that name is looked for first."""


def is_url(value: str) -> bool:
    """Whether an image path a row gives is a URL (``https://...``, ``s3://...``)."""
    return _URL.match(value) is not None


URL_SHOWN = 80
"""Characters of a URL an error shows (a signed URL's query runs to hundreds)."""


def url_problem(value: str, folder: str = "the data file's folder") -> str:
    """Why an image given as a URL (``https://...``) is not read, and what to do instead.

    `folder` is what a path given instead is relative to. The URL is shown with its secrets taken out (a password, a signed URL's signature or
    token) and cut to `URL_SHOWN` characters.
    """
    shown = redact_urls(value)
    shown = shown if len(shown) <= URL_SHOWN else f"{shown[:URL_SHOWN]}…"
    return (
        f"{shown!r} is a URL; lmmprobe reads images from local files only, never from the "
        f"network: download the picture first and give its path, relative to {folder}"
    )


def located_image(base: Path, value: str, field: str) -> tuple[str, os.stat_result | None]:
    """Where an image path a row gives leads (resolved), and that file's ``stat`` (None: none).

    Inside `remembered_images` each folder is resolved once per load (`_CheckedImages.resolved`);
    otherwise, or for a name the quick way does not take, the path is resolved whole.

    Raises:
        RowError: The path cannot be resolved (a loop of links; a NUL in the name).

    """
    checked = _CHECKED.get()
    quick = None if checked is None else checked.resolved(base, value)
    if quick is not None:
        return quick
    try:
        path = str((base / value).resolve())
    except (RuntimeError, ValueError) as exc:  # a loop of links; a NUL in the name
        raise RowError(field, f"image file not found: {value!r} ({exc})") from exc
    try:
        return path, os.stat(path)
    except (OSError, ValueError):
        return path, None


assert READ_WHOLE <= IMAGE_FILE_SLACK  # such a file is never refused for its size alone


_REMEMBER_AT_ONCE = 10_000
"""Checked images kept in memory before they are written to the store in one transaction."""


CheckRow = tuple[str, int, int, int, int, str]
"""A checked image file: (resolved path, size, ctime_ns, width, height, content hash)."""


class ImageCheckStore(Protocol):
    """Where image checks are remembered: `lmmprobe.store.Store`.

    Named here by its methods alone, so that the readers other packages use (the tools' own
    collections read through `lmmprobe.data.hf_dataset`) do not bring the store with them.
    """

    def has_image_checks(self) -> bool:
        """Whether any check is remembered."""
        ...

    def image_checks_from(self, path: str, limit: int) -> list[CheckRow]:
        """The first `limit` checks remembered for paths from `path` on, in path order."""
        ...

    def put_image_checks(self, rows: Sequence[CheckRow]) -> None:
        """Remember checks, replacing those of the same paths."""
        ...


_WINDOW_FIRST = 64
_WINDOW_MOST = 4_096
"""How many remembered checks one read of the store brings (first, and at most): a dataset
names its files mostly in order, so the next rows' files are in the same read."""
_FOLDERS_KEPT = 4_096
"""Resolved folders kept while loading (a dataset's images sit in a few folders)."""


_POOL_AFTER = 1_024
"""New image files a load checks itself before it starts a worker for the rest (`image_pool`):
a small load never starts one."""
_WINDOW_ROWS = 2_048
"""Rows parsed while the worker checks their new image files; then settled, in order (fewer,
larger windows: each one sent wakes the executor's threads, which take turns with this one)."""
_WINDOW_FILES = 2_048
"""New files that end a window early (a row may list a thousand images)."""
_WORKER_SILENCE = 120.0
"""Seconds the worker may take over a window before its files are checked here instead (it
was stopped, not ended; a window of 2,048 files of a MiB takes a few seconds)."""
_WAIT_FOR_START = False
"""Wait for the worker to start instead of checking files here meanwhile (for tests, whose
small files would be read before it starts)."""


@dataclass(slots=True, eq=False)
class _Listed:
    """An image file a deferred row lists: where it leads, and its pixels once known."""

    value: str
    field: str
    path: str
    info: os.stat_result
    ref: ImageRef
    pixels: int | None  # None: a new file, its check awaited
    noted: bool = False  # its check settled, remembered and noted (a file listed again once)


@dataclass(slots=True)
class _DeferredCall:
    """One `check_images` (or `check_image`) call of a row parsed while its checks are away."""

    base: Path
    field: str
    listed: int
    single: bool
    files: list[_Listed]
    stopped: RowError | None = None  # an entry refused from its name alone: the call ends there
    cut: str | None = None  # a bound already met, pictures not yet known counted as empty


_Parsed = tuple[int, object, list[_DeferredCall]]
"""A deferred row: its position, what parsing it gave (a sample, a `RowError`, or an
exception to raise in its turn) and its image calls."""


@dataclass(slots=True)
class _Sent:
    """A window of deferred rows and its new files, sent to the worker (`sent`) or not."""

    window: list[_Parsed]
    tasks: list[Task]
    sent: bool


class _Raise:
    """An exception parsing a row raised that is not a `RowError`: raised when its row settles."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


class _CheckedImages:
    """The store's remembered image checks, and those made now (written as they add up).

    The remembered checks are read a window at a time, in path order: every path between the
    window's first and last is either in it or not remembered, so a run over files named in
    order costs one query per window, not one per file. A window that served few lookups
    (files named out of order) makes the next one smaller, down to a single row.
    """

    def __init__(self, store: ImageCheckStore) -> None:
        self.store = store
        self.new: list[CheckRow] = []
        # A store that remembers none (a first run) is not asked about each file.
        self.remembers = store.has_image_checks()
        self.window: dict[str, CheckRow] = {}
        self.low = ""  # the window covers low..high (high None: to the end)
        self.high: str | None = None
        self.size = _WINDOW_FIRST
        self.used = 0
        self.folders: dict[tuple[Path, str], str] = {}
        self.note: Callable[[Path, str, str, os.stat_result], None] | None = None
        """Told of each image path a row gives that leads to a readable file (`noting_images`)."""
        self.added = 0  # new files checked in this load
        self.pool: ImagePool | None = None
        self.pool_failed = False
        self.row: list[_DeferredCall] | None = None
        """While a row is parsed with its new files' checks deferred: its image calls."""
        self.tasks: dict[Task, None] = {}  # the window's new files, for the worker

    def found(self, base: Path, value: str, path: str, info: os.stat_result) -> None:
        """`value` (relative to `base`) led to the readable file `path`: tell `note`, if set."""
        if self.note is not None:
            self.note(base, value, path, info)

    def resolved(self, base: Path, value: str) -> tuple[str, os.stat_result] | None:
        """`value`'s resolved path and ``stat``, when the quick way finds them, else None.

        The folder part is resolved once per load (as ``Path.resolve`` does it); the file
        itself costs one ``lstat``. A name that is a link, or one the quick way does not
        take (``.``, ``..``, a trailing separator, a missing file), gives None: the caller
        resolves it the plain way, so every message and refusal stays the plain way's.
        """
        head, sep, name = value.rpartition("/")
        if name in ("", ".", "..") or "\0" in value:
            return None
        if sep and not head:
            head = "/"
        key = (base, head)
        folder = self.folders.get(key)
        if folder is None:
            try:
                folder = str((base / head).resolve() if head else base.resolve())
            except (OSError, ValueError, RuntimeError):
                return None
            if len(self.folders) >= _FOLDERS_KEPT:
                self.folders.clear()
            self.folders[key] = folder
        full = os.path.join(folder, name)
        try:
            info = os.lstat(full)
        except (OSError, ValueError):
            return None
        # Not a link: the resolved path is the file itself, and lstat is its stat.
        return None if stat.S_ISLNK(info.st_mode) else (full, info)

    def known(self, path: str, info: os.stat_result) -> tuple[ImageRef, int] | None:
        """The reference and pixels of a file checked before and unchanged since, else None."""
        key = _key(path) if self.remembers else None
        row = None if key is None else self._remembered(key)
        if row is None or (row[1], row[2]) != (info.st_size, info.st_ctime_ns):
            return None
        try:
            over = row[3] * row[4] > max_image_pixels()
        except ValueError:
            return None  # a cap that cannot be read: the full check says so, as for any file
        if over:
            return None  # the cap was lowered since: checked again, refused with its message
        return ImageRef.from_path(path, content_hash=row[5]), row[3] * row[4]

    def _remembered(self, key: str) -> CheckRow | None:
        """The check the store remembers for `key`, read a window at a time."""
        # Resolved paths are absolute, never "": low == "" means no window is read.
        if self.low and self.low <= key and (self.high is None or key <= self.high):
            row = self.window.get(key)
            self.used += row is not None
            return row
        if self.low:  # files read in order keep the windows large; out of order, small
            wide = self.used * 2 >= max(len(self.window), 1)
            self.size = min(self.size * 4, _WINDOW_MOST) if wide else max(self.size // 4, 1)
        rows = self.store.image_checks_from(key, self.size)
        self.window = {r[0]: r for r in rows}
        # Fewer rows than asked for: none is remembered past the last one read.
        self.low, self.high = key, (rows[-1][0] if len(rows) >= self.size else None)
        row = self.window.get(key)
        self.used = int(row is not None)
        return row

    def add(self, path: str, info: os.stat_result, width: int, height: int, ref: ImageRef) -> None:
        """Remember a file found readable (hashing it now: a request's key needs it anyway)."""
        self.added += 1
        key = _key(path)
        if key is None:
            return
        self.new.append((key, info.st_size, info.st_ctime_ns, width, height, ref.content_hash()))
        if len(self.new) >= _REMEMBER_AT_ONCE:
            self.flush()

    def flush(self) -> None:
        """Write the checks made so far to the store."""
        self.store.put_image_checks(self.new)
        self.new = []
        self.low = ""  # read again: the store may now hold what was just written

    def close(self) -> None:
        """Stop the image worker, if one was started."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    # -- rows parsed while their new files are checked in a worker (`image_pool`) ----------

    def parse_rows(
        self, rows: Iterable[tuple[int, R]], parse: Callable[[int, R], Sample]
    ) -> Generator[tuple[int, Sample | RowError], None, None]:
        """`(position, sample or RowError)` for each row, as parsing them one by one gives.

        Once this load has checked `_POOL_AFTER` new files itself, a worker process checks
        the rest: a window of rows is parsed with each new file's check deferred (its reference
        made, its check sent), and the window is settled, row by row in order, when its checks
        come back, while the next window is parsed. Settling replays each row's image list as
        `check_images` reads it, so every row gets the verdict, the message and the bounds it
        would have got, and the store and `noting_images` hear of its files in the same order.
        A row whose parsing raised after its images is refused for an image problem first,
        as it would have been.
        """
        window: list[_Parsed] = []
        waiting: _Sent | None = None  # the window the worker is checking
        try:
            for position, raw in rows:
                if not self._deferring():
                    # Rows deferred before (the worker gone since) are settled first, in order.
                    if waiting is not None or window:
                        rest, waiting, window = (waiting, window), None, []
                        yield from self._settle_rest(*rest)
                    try:
                        yield position, parse(position, raw)
                    except RowError as exc:
                        yield position, exc
                    continue
                self.row = []
                outcome: object
                try:
                    outcome = parse(position, raw)
                except RowError as exc:
                    outcome = exc
                except Exception as exc:
                    outcome = _Raise(exc)
                finally:
                    calls, self.row = self.row, None
                window.append((position, outcome, calls))
                raised = isinstance(outcome, _Raise)
                if raised or len(window) >= _WINDOW_ROWS or len(self.tasks) >= _WINDOW_FILES:
                    # The worker's results for the last window are taken before this one is
                    # sent (so it never waits to send while this process waits to send), and
                    # that window is settled while the worker checks this one.
                    last = None if waiting is None else (waiting, self._results(waiting))
                    waiting, window = self._send(window), []
                    if last is not None:
                        yield from self._settle(*last)
                    if raised:
                        # Settled at once: its exception is raised now, as parsing it one by
                        # one would, unless an image of its row is refused first; then the
                        # load goes on with the next row.
                        done_now, waiting = (waiting, self._results(waiting)), None
                        yield from self._settle(*done_now)
            rest, waiting, window = (waiting, window), None, []
            yield from self._settle_rest(*rest)
        finally:
            if waiting is not None and waiting.sent and self.pool is not None:
                # Stopped early (at a limit, or by an error): the worker's answer for the
                # window it has is taken and dropped, so the next read does not take it.
                try:
                    self.pool.receive(_WORKER_SILENCE)
                except (EOFError, OSError):
                    self.close()

    def _settle_rest(
        self, waiting: _Sent | None, window: list[_Parsed]
    ) -> Iterator[tuple[int, Sample | RowError]]:
        """The window with the worker, then the rows deferred since (sent now), in order."""
        if waiting is not None:
            yield from self._settle(waiting, self._results(waiting))
        if window:
            sent = self._send(window)
            yield from self._settle(sent, self._results(sent))

    def _deferring(self) -> bool:
        """Whether to defer new files' checks from here: the worker has started.

        It is started once this load has checked `_POOL_AFTER` new files itself, and files
        are checked here until it is ready, so its start costs this process nothing.
        """
        if self.pool is None:
            if not self.pool_failed and self.added >= _POOL_AFTER:
                self.pool_failed = True  # one try per load
                if workers_wanted():
                    try:
                        self.pool = ImagePool(silence=_WORKER_SILENCE)
                    except OSError as exc:
                        log.debug("no image worker (%s): images are checked here", exc)
            return False
        if _WAIT_FOR_START:
            self.pool.wait()
        ready = self.pool.ready()
        if ready is None:
            log.debug("the image worker did not start: images are checked here")
            self.close()
        return bool(ready)

    def _send(self, window: list[_Parsed]) -> _Sent:
        """Send the window's new files to the worker, if it is there to take them."""
        tasks = list(self.tasks)
        self.tasks = {}
        sent = False
        if tasks and self.pool is not None and not self.pool.agrees():
            # Pillow here changed since the worker started (a plugin's opener registered
            # when a reader met its first such file): the worker would judge these otherwise.
            log.debug("this process reads images the worker would not: they are checked here")
            self.close()
        if tasks and self.pool is not None:
            try:
                self.pool.send(tasks, _fixed_cap())
                sent = True
            except OSError as exc:  # its process gone
                log.debug("the image worker takes no more files (%s): checked here", exc)
                self.close()
        return _Sent(window, tasks, sent)

    def _results(self, sent: _Sent) -> dict[Task, Inspected | str]:
        """The checks of a sent window's new files: the worker's, else made here.

        A worker that died (killed, out of memory) is no verdict on any file: its files are
        checked in this process with the same function, and so are the rest of the load's.
        """
        found: list[Inspected | str] | None = None
        if sent.sent and self.pool is not None:
            try:
                found = self.pool.receive(_WORKER_SILENCE)
            except (EOFError, OSError) as exc:  # TimeoutError is an OSError
                log.debug("the image worker failed (%s): its files are checked here", exc)
            if found is not None and len(found) != len(sent.tasks):
                log.debug(
                    "the image worker gave %d results for %d files", len(found), len(sent.tasks)
                )
                found = None
            if found is None:
                self.close()
        if found is None:
            found = inspect_files(sent.tasks, _fixed_cap())
        return dict(zip(sent.tasks, found, strict=True))

    def _settle(
        self, sent: _Sent, results: Mapping[Task, Inspected | str]
    ) -> Iterator[tuple[int, Sample | RowError]]:
        """Each row of a window, in order, with its new files' checks."""
        for position, outcome, calls in sent.window:
            try:
                for call in calls:
                    self._replay(call, results)
            except RowError as exc:
                yield position, exc
                continue
            if isinstance(outcome, _Raise):
                raise outcome.exc
            yield position, cast("Sample | RowError", outcome)

    def defer(
        self, base: Path, values: list[Any], field: str, *, single: bool = False
    ) -> list[ImageRef]:
        """`check_images` (`single`: `check_image`) for a row whose new files are checked later.

        Each file is found from its name now (a missing one, a remembered check); a new one's
        check is queued for the worker, its reference returned without its hash yet. Nothing
        is refused here: `_replay` says what the row's list gives, in order.
        """
        call = _DeferredCall(base, field, len(values), single, [])
        assert self.row is not None
        self.row.append(call)
        firsts: dict[str, _Listed] = {}
        pixels: list[int] = []
        sizes: list[int] = []
        for i, value in enumerate(values):
            listed = firsts.get(value) if isinstance(value, str) else None
            if listed is None:
                name = field if single else f"{field}[{i}]"
                try:
                    path, info = _image_file(base, value, name)
                    known = _remembered_check(self, value, name, path, info)
                except RowError as exc:
                    call.stopped = exc
                    break
                if known is None:
                    listed = _Listed(value, name, path, info, ImageRef.from_path(path), None)
                    if info.st_size <= READ_WHOLE:  # a larger one is checked here, on settling
                        self.tasks[(path, value, info.st_size)] = None
                else:
                    listed = _Listed(value, name, path, info, known[0], known[1])
                firsts[value] = listed
                sizes.append(info.st_size)
            call.files.append(listed)
            pixels.append(listed.pixels or 0)
            if not single:
                # A long list stops at a bound here too (pictures not known yet counted as
                # empty): the replay, knowing them, stops at this file or before.
                call.cut = sample_images_problem(pixels, len(values)) or sample_bytes_problem(
                    sizes, len(values)
                )
                if call.cut:
                    break
        return [listed.ref for listed in call.files]

    def _replay(self, call: _DeferredCall, results: Mapping[Task, Inspected | str]) -> None:
        """Settle one deferred call as `check_images` would have read its list.

        Raises:
            RowError: What reading the list would have raised first.

        """
        pixels: list[int] = []
        sizes: list[int] = []
        for listed in call.files:
            if not listed.noted:
                listed.noted = True
                if listed.pixels is None:
                    key = (listed.path, listed.value, listed.info.st_size)
                    listed.pixels = _settled(
                        self, call.base, listed.value, listed.field, listed.path, listed.info,
                        results.get(key), listed.ref,
                    )[1]  # fmt: skip
                else:
                    self.found(call.base, listed.value, listed.path, listed.info)
                sizes.append(listed.info.st_size)
            pixels.append(listed.pixels or 0)
            if not call.single:
                problem = sample_images_problem(pixels, call.listed) or sample_bytes_problem(
                    sizes, call.listed
                )
                if problem:
                    raise RowError(call.field, problem)
        if call.stopped is not None:
            raise call.stopped
        if call.cut is not None:  # not reached: the known pictures only add to the count
            raise RowError(call.field, call.cut)


def _fixed_cap() -> int | None:
    """The decoding cap this load judges by.

    None: a setting that cannot be read, which each check then reports as it would here.
    """
    try:
        return max_image_pixels()
    except ValueError:
        return None


def _key(path: str) -> str | None:
    """`path` as the store keeps it; None for a name that is not UTF-8 (never remembered)."""
    text = path
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return text


_CHECKED: ContextVar[_CheckedImages | None] = ContextVar("lmmprobe_checked_images", default=None)


@contextlib.contextmanager
def remembered_images(store: ImageCheckStore) -> Iterator[None]:
    """Within the block, `check_image` reuses the checks `store` remembers, and adds its own.

    An image file whose resolved path, size and modification time (ns) are those of a file
    checked before is neither decoded nor hashed again; a changed or new file is checked and
    remembered. The checks are written to the store as they add up and when the block ends
    without an error. Only this thread's loading uses them (a context variable).

    Args:
        store: The run's store (migrated: it has the ``image_checks`` table).

    """
    checked = _CheckedImages(store)
    token = _CHECKED.set(checked)
    try:
        with pixel_cap_read_once():  # one setting for the whole load
            yield
    finally:
        _CHECKED.reset(token)
        checked.close()
    checked.flush()


@contextlib.contextmanager
def noting_images(note: Callable[[Path, str, str, os.stat_result], None]) -> Iterator[bool]:
    """Within the block, tell `note` of each image path a row gives that leads to a readable file.

    `note` gets the folder the path is relative to, the path as the row gave it, the resolved
    file and its ``stat`` (what `lmmprobe.data.remembered_loads` keeps of a read). Only inside
    `remembered_images`; the block yields whether it is (False: `note` is told nothing).
    """
    checked = _CHECKED.get()
    if checked is None:
        yield False
        return
    checked.note = note
    try:
        yield True
    finally:
        checked.note = None


_PATH_PARTS = 3


class _LongInt:
    """Stands in for an integer too long to convert (found again by `find_value`)."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))


def find_value(value: Any, hit: Callable[[Any], bool]) -> tuple[str | None, Any] | None:
    """The path (`value_path`) and value of the first part of a decoded row `hit` picks.

    Object keys are searched as well as values. Iterative: the row may nest deeply.
    """
    stack: list[tuple[Any, str | None]] = [(value, None)]
    while stack:
        item, path = stack.pop()
        if hit(item):
            return path, item
        if isinstance(item, dict):
            for k, v in reversed(list(item.items())):
                if hit(k):
                    return value_path(path, k), k
                stack.append((v, value_path(path, k)))
        elif isinstance(item, list):
            stack.extend((v, value_path(path, i)) for i, v in reversed(list(enumerate(item))))
    return None


def _int_or_marker(digits: str) -> int | _LongInt:
    try:
        return int(digits)
    except ValueError:  # past sys.get_int_max_str_digits()
        return _LongInt(digits)


def too_long_int(text: str, start: int | None = None) -> RowError | None:
    """The field holding an integer too long for Python to read, if that is what failed.

    `text` is JSON that `json.loads` refused (with `start`: the one value starting there,
    what follows it left unread, as a stream's buffer holds it); the error names the field
    and the digit count, the one wording of every reader of outside JSON (Python's own
    message ends in advice to call ``sys.set_int_max_str_digits()``, no advice to a user).
    None when the JSON is not whole or fails for another reason.
    """
    try:
        if start is None:
            row = json.loads(text, parse_int=_int_or_marker)
        else:
            row, _ = json.JSONDecoder(parse_int=_int_or_marker).raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    found = find_value(row, lambda v: isinstance(v, _LongInt))
    if found is None:
        return None
    limit = sys.get_int_max_str_digits()
    return RowError(
        found[0], f"an integer of {found[1].digits} digits is too long (at most {limit})"
    )


def value_path(parent: str | None, key: object) -> str:
    """Name a value inside a row: ``metadata.x`` for an object key, ``images[0]`` for a list."""
    if isinstance(key, int):
        return f"{parent or ''}[{key}]"
    return str(key) if parent is None else f"{parent}.{key}"


def too_deep(value: Any, limit: int = MAX_NESTING) -> str | None:
    """The path of the first value nested more than `limit` levels deep, or None.

    Iterative, so a value nested far beyond Python's recursion limit is measured safely.
    The top level is level 0; the path (built with `value_path`) names the first
    `_PATH_PARTS` levels and ends in ``...`` when it goes deeper.
    """
    # Every row of every file is measured and almost none is too deep: a walk that follows
    # containers only and names nothing answers those; paths are built only for a hit.
    return _deep_path(value, limit) if deeper_than(value, limit) else None


def _deep_path(value: Any, limit: int) -> str | None:
    """`too_deep` measured the plain way: every container visited with its path."""
    stack: list[tuple[Any, str | None, int]] = [(value, None, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[tuple[object, Any]] = item.items()
        elif isinstance(item, list | tuple):
            children = enumerate(item)
        else:
            continue
        if depth > limit:
            return path
        if depth < _PATH_PARTS:
            stack.extend((v, value_path(path, k), depth + 1) for k, v in children)
        else:  # a path hundreds of levels long would drown the message
            tail = path if depth > _PATH_PARTS else f"{path}..."
            stack.extend((v, tail, depth + 1) for _, v in children)
    return None


def too_deep_text(text: str, start: int = 0) -> tuple[bool, str | None]:
    """Whether JSON `text` (from `start`) nests more than `MAX_NESTING` levels, and where.

    For a value too deep for the decoder itself (it stops at Python's recursion limit, about
    1,000 levels): a scan of the text, not a decode. The place is the top-level object's key
    whose value the scan was in when the nesting passed the limit (None for an array, or a
    deep value at the top). Stops where the limit is passed.
    """
    depth, key, last = 0, None, None
    in_string = escaped = False
    begin = start
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                last = text[begin:i] if depth == 1 else None
        elif ch == '"':
            in_string, begin = True, i + 1
        elif ch == ":" and depth == 1:
            key = last  # the string just closed at the top level was a key
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return True, key
        elif ch in "]}":
            depth -= 1
            if depth <= 0:
                break
    return False, None


def nesting_reason() -> str:
    """What is wrong with a value nested too deep (the one wording every reader gives)."""
    return f"nested more than {MAX_NESTING} levels deep; flatten it"


def _field_of(err: Mapping[str, Any]) -> tuple[str | None, str]:
    loc = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    if not loc and ": " in msg:  # sample-level checks name their field first ("answer: ...")
        head, rest = msg.split(": ", 1)
        # ``metadata.prompt_template: ...`` names a key inside a field.
        if all(part.isidentifier() for part in head.split(".")):
            return head, rest
    return (loc or None), msg


def to_sample(data: dict[str, Any], names: Mapping[str, str | None] | None = None) -> Sample:
    """Validate sample fields into a `Sample`, naming a rejected field as the source does.

    Args:
        data: `Sample` fields.
        names: The source's name for a `Sample` field (``{"id": "sample_id"}``); the first
            part of a dotted location is renamed (``choices.1`` -> ``answer_options.1``).

    Raises:
        RowError: The fields do not make a valid sample (the first problem pydantic finds).

    """
    deep = too_deep(data.get("metadata"))
    if deep is not None:
        where = "metadata" + ("" if deep.startswith("[") else ".") + deep
        raise RowError(where, nesting_reason())
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        field, reason = _field_of(dict(exc.errors()[0]))
        if field is not None and names:
            head, dot, rest = field.partition(".")
            renamed = names.get(head)
            if renamed:
                field = renamed + dot + rest
        raise RowError(field, reason) from exc


class FirstSeen:
    """Where each sample id was first seen, without holding a million ids in memory.

    Up to `IDS_IN_MEMORY` ids sit in a dict (a run's load is fast as before); past that they
    move to a private temporary SQLite table, whose pages spill to disk, so a streamed load of
    any size holds a bounded set. Close it (or use it as a context manager) when done.
    """

    def __init__(self) -> None:
        """An empty set."""
        self._memory: dict[str, int | str] = {}
        self._db: sqlite3.Connection | None = None

    def __enter__(self) -> FirstSeen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the ids (the table's file goes with it)."""
        self._memory = {}
        if self._db is not None:
            self._db.close()
            self._db = None

    def first(self, key: str, where: int | str) -> int | str | None:
        """Record `key` as seen at `where`; if it was seen before, where it was first seen."""
        if self._db is None:
            seen = self._memory.get(key)
            if seen is not None:
                return seen
            self._memory[key] = where
            if len(self._memory) > IDS_IN_MEMORY:
                self._spill()
            return None
        added = self._db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?)", (key, where))
        if added.rowcount:
            return None
        row = self._db.execute("SELECT at FROM seen WHERE id = ?", (key,)).fetchone()
        return cast("int | str", row[0])

    def _spill(self) -> None:
        # "" opens a private on-disk database that SQLite deletes when it is closed.
        db = sqlite3.connect("")
        # `at` has no type: a line number stays an int, a place ("FILE[split]:3") a string.
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
            "CREATE TABLE seen (id TEXT PRIMARY KEY, at) WITHOUT ROWID;"
        )
        db.executemany("INSERT INTO seen VALUES (?, ?)", self._memory.items())
        self._db, self._memory = db, {}


IDS_IN_MEMORY = 100_000
"""Sample ids `FirstSeen` keeps in a dict before moving them to SQLite (about 10 MiB)."""


@contextlib.contextmanager
def release_rows(rows: Iterable[Any]) -> Iterator[None]:
    """Close `rows` (a generator reading a file) when the block ends, however it ends.

    A load that stops early (its limit, a strict error, a reader's failure) otherwise leaves
    the reader suspended: its open file, or its Arrow reader over a dataset, stays alive for
    as long as anything holds the generator. A strict error's traceback holds the frame that
    holds it, in a reference cycle, so that was the interpreter's final teardown (suspected in
    a rare abort at exit, "terminate called without an active exception", issue 34). An
    iterator without ``close`` (a list's) is left alone.
    """
    try:
        yield
    finally:
        close = getattr(rows, "close", None)
        if callable(close):
            close()


def stream_rows(
    report: LoadResult | SampleStream,
    rows: Iterable[tuple[int, R]],
    parse: Callable[[int, R], Sample],
    *,
    strict: bool,
    limit: int | None,
    id_field: str = "id",
    unit: str = "line",
) -> Iterator[Sample]:
    """Parse positioned rows into samples, one at a time: problems recorded, repeated ids dropped.

    Args:
        report: Where problems go (its ``source`` names the file in problems).
        rows: ``(position, raw row)`` pairs; the position is what problems report. A
            generator is closed when the stream stops, early or not (`release_rows`).
        parse: ``(position, raw row)`` to sample; raises `RowError` for an invalid row.
        strict: Raise `DataError` on the first problem instead of recording it.
        limit: Stop after this many valid samples.
        id_field: The source's name of the id field, for duplicate-id problems.
        unit: What a position counts ("line", "entry", "row"), for duplicate-id messages.

    Yields:
        The valid samples. The first sample with an id is kept; later ones are problems.

    """
    given = 0
    checked = _CHECKED.get()
    parsed = _parsed(rows, parse) if checked is None else checked.parse_rows(rows, parse)
    with FirstSeen() as first, release_rows(rows), contextlib.closing(parsed):
        # Asked one at a time, so that no row past the limit is parsed (deferred checks
        # parse a window ahead, but settle only the rows asked for).
        while limit is None or given < limit:
            item = next(parsed, None)
            if item is None:
                break
            position, sample = item
            if isinstance(sample, RowError):
                report.add_problem(
                    SampleProblem(report.source, position, sample.field, sample.reason), strict
                )
                continue
            seen = first.first(sample.id, position)
            if seen is not None:
                reason = f"duplicate {id_field} {sample.id!r} (first at {unit} {seen})"
                report.add_problem(SampleProblem(report.source, position, id_field, reason), strict)
                continue
            given += 1
            yield sample


def _parsed(
    rows: Iterable[tuple[int, R]], parse: Callable[[int, R], Sample]
) -> Generator[tuple[int, Sample | RowError], None, None]:
    """`(position, sample or RowError)` for each row, parsed one at a time."""
    for position, raw in rows:
        try:
            yield position, parse(position, raw)
        except RowError as exc:
            yield position, exc


def collect_rows(
    result: LoadResult,
    rows: Iterable[tuple[int, R]],
    parse: Callable[[int, R], Sample],
    *,
    strict: bool,
    limit: int | None,
    id_field: str = "id",
    unit: str = "line",
) -> LoadResult:
    """`stream_rows` into `result`: its samples appended, its problems recorded.

    Returns:
        `result`, filled.

    """
    result.samples.extend(
        stream_rows(result, rows, parse, strict=strict, limit=limit, id_field=id_field, unit=unit)
    )
    return result
