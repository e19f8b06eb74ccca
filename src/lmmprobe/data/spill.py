"""Chunks kept on disk while a run reads its data: the first read's samples, served again.

A run of more than one chunk reads its data once to count, check and fingerprint it
(`lmmprobe.data.base.load_in_chunks`), then needs the same samples again a chunk at a time,
for each model and the judging step. Reading the source again means parsing and validating
every row and looking up every image's check again: about 1.2 s of CPU per 30,000 rows with
images, each time (measured 2026-12-01: a one-model first run about 4% faster, each further
model or judging pass saving as much again; `benchmarks/vs_lmms_eval.py`). A
`ChunkSpill` keeps each chunk of the first read instead, pickled and compressed, in an
anonymous temporary file, and gives it back a chunk at a time: memory holds one chunk, the
disk ~70 bytes a sample.

The file is made by `tempfile.TemporaryFile`: on POSIX it is unlinked as soon as it is made,
so no other process can find it by name, swap it or read it, and it goes when it is closed
or the process ends. It holds only what this process wrote (never outside data), so reading
it back with `pickle` trusts nothing new; the caller checks every chunk read back against the
first read's fingerprint anyway.

A spill has a budget (`MAX_SPILL_BYTES`, and at most a tenth of the space free where the file
is): a chunk that would take it past raises `SpillFull`, and the caller drops the spill and
reads the source again, as it did before there was one. A sample's picture made in memory (a
plugin or synth source) or given as base64 is pickled with its bytes, about a quarter of its
raw pixels: a large source of those would otherwise fill the temporary folder that other
processes share.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
import threading
import weakref
import zlib
from typing import Generic, TypeVar

__all__ = ["MAX_SPILL_BYTES", "SPILL_ERRORS", "ChunkSpill", "SpillFull"]

T = TypeVar("T")

_LEVEL = 1
"""zlib level: 10k samples compress in ~16 ms to a quarter of their pickle (higher levels
cost several times that for a few percent)."""

MAX_SPILL_BYTES = 1 << 30
"""The most a spill writes (compressed), 1 GiB: ~15 million samples of text and file paths, or
a few thousand pictures held in memory (lowered to a tenth of the free space where it is)."""

_FREE_SHARE = 10
"""A spill takes at most 1/this of the space free on its file system when it is made."""


class SpillFull(Exception):
    """A chunk would take the spill past its budget: drop it, and read the source again."""


SPILL_ERRORS: tuple[type[BaseException], ...] = (
    SpillFull,
    OSError,  # the file cannot be made, written or read (a full disk, no temporary folder)
    ValueError,  # the file was closed (`ChunkSpill.close`) while a chunk was still wanted
    zlib.error,
    pickle.PickleError,  # a value this process made that pickle cannot take (a plugin's)
    TypeError,  # "cannot pickle '...' object"
    AttributeError,  # "Can't pickle local object ..."
    EOFError,
    RecursionError,
)
"""What writing or reading a spill may raise: each means "read the source instead"."""


class ChunkSpill(Generic[T]):
    """Lists (chunks) written one after another to an anonymous temporary file, read by index.

    Each chunk is pickled and compressed on `add`, its place (offset, length) kept; `get`
    reads one back. Reads and writes hold a lock, so two readers in two threads do not move
    each other's file position. Closed by `close`, or when the spill is garbage (never left
    open behind a dropped load).
    """

    def __init__(self, budget: int | None = None) -> None:
        """Make the file.

        Args:
            budget: The most bytes it writes (`MAX_SPILL_BYTES` when None); at most a tenth
                of the space free on the temporary folder's file system now, whichever is less.

        Raises:
            OSError: It cannot be made (no writable temporary folder).

        """
        # Held open for the spill's life, closed by `close` or the finalizer below.
        self._file = tempfile.TemporaryFile(prefix="lmmprobe-chunks-")  # noqa: SIM115
        self._close = weakref.finalize(self, self._file.close)
        most = MAX_SPILL_BYTES if budget is None else budget
        # Without statvfs (Windows) or where it fails, the fixed budget alone.
        with contextlib.suppress(OSError, AttributeError):
            fs = os.fstatvfs(self._file.fileno())
            most = min(most, fs.f_bavail * fs.f_frsize // _FREE_SHARE)
        self.budget = most
        """The most bytes this spill writes."""
        self._places: list[tuple[int, int]] = []
        self._end = 0
        self._lock = threading.Lock()

    def add(self, chunk: list[T]) -> None:
        """Write `chunk` after the others.

        Raises:
            SpillFull: The chunk would take it past its `budget` (nothing written).
            OSError: The write failed (a full disk); the spill should be dropped.
            pickle.PickleError, TypeError, AttributeError, RecursionError: A value in
                `chunk` cannot be pickled.
            ValueError: The spill is closed.

        """
        blob = zlib.compress(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL), _LEVEL)
        with self._lock:
            if self._end + len(blob) > self.budget:
                raise SpillFull(
                    f"chunk {len(self._places) + 1} ({len(blob):,} bytes) would take the spill "
                    f"past its budget of {self.budget:,} bytes (it holds {self._end:,})"
                )
            self._file.seek(self._end)
            self._file.write(blob)
            self._places.append((self._end, len(blob)))
            self._end += len(blob)

    def __len__(self) -> int:
        """How many chunks it holds."""
        return len(self._places)

    def get(self, index: int) -> list[T]:
        """The chunk added `index`-th (0 first).

        Raises:
            IndexError: No such chunk.
            Any of `SPILL_ERRORS`: It cannot be read back (closed, a read error, cut short).

        """
        offset, length = self._places[index]
        with self._lock:
            self._file.seek(offset)
            blob = self._file.read(length)
        if len(blob) != length:
            raise EOFError(f"chunk {index} of the spill is cut short")
        chunk: list[T] = pickle.loads(zlib.decompress(blob))
        return chunk

    @property
    def closed(self) -> bool:
        """Whether the file is closed (by `close`, or never to be read again)."""
        return not self._close.alive

    def close(self) -> None:
        """Close (and so remove) the file; closing again does nothing."""
        self._close()
