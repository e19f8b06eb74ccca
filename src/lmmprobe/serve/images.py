"""``/images/{run}/{sample}/{index}``: a sample's images, by the references the store recorded.

A client names an image only by run, sample and position; the file, data or recipe comes from
the samples table (`lmmprobe.store.Store.put_samples`; bytes from its ``images`` table, by
content hash), never from anything the client sends,
so no request can read a file the runs did not use. A PNG, JPEG, GIF or WebP file (recognised
by Pillow from its content, never by its name) within the decoding cap is sent as it is;
anything else (a recipe, another format) is drawn or decoded and sent as PNG.

A recorded file may have changed since the run: it is read only when it is still a regular
file no larger than `max_image_file_bytes` (a FIFO would hold the request's worker forever,
a link to ``/dev/zero`` would fill the server's memory); otherwise the client gets a 404
saying the image cannot be read now, and the server's log says why. A file whose content is
no longer the one the run's requests hashed (the ``sha256`` the store recorded) is a 404
saying it changed since the run: another picture is never shown as the one the model saw.

Image bytes in memory are bounded across the whole server, not per request: a request holds
its file's size (and a decoding's) from `READS` until its answer is sent, and waits while
other requests hold `max_image_file_bytes` between them (one request alone always goes on);
past `ReadBudget.wait_s`, or with `ReadBudget.max_waiting` requests already waiting, it gets
a 503 "busy, try again". Memory that runs out all the same is the 404 "cannot be read now",
never a 500.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response, StreamingResponse
from PIL import Image
from starlette.types import Receive, Scope, Send

from lmmprobe.data.files import FileTooLarge, UnreadableFile, open_regular, read_regular
from lmmprobe.schema import ImageRef
from lmmprobe.schema.image import max_image_file_bytes, open_image
from lmmprobe.serve import _pages
from lmmprobe.store import queries

__all__ = [
    "READS",
    "SENT_AS_IS",
    "ImageChanged",
    "ReadBudget",
    "Reservation",
    "ServerBusy",
    "file_hash",
    "image_bytes",
    "max_image_file_bytes",
    "register_renderers",
    "router",
]

log = logging.getLogger(__name__)

router = APIRouter()

SENT_AS_IS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""Pillow formats sent as the file's own bytes, with their media type."""

_CACHE = "private, max-age=3600"


class ImageChanged(OSError):
    """A recorded image file whose content is not the one the run's requests hashed."""


class ServerBusy(Exception):
    """Other requests hold the image bytes the server allows in memory at once."""


class ReadBudget:
    """Image bytes the server holds in memory at once, shared by all requests.

    Each request's `Reservation` takes what it is about to hold (a file's size, a decoding)
    and gives it all back once its answer is sent. A request waits while the others hold more
    than `max_image_file_bytes` with its own; one request alone always goes on (the cap
    already bounds it), so no image within the cap is refused for its size.
    """

    wait_s = 10.0
    """How long a request waits for the others to send their images before its 503."""

    max_waiting = 16
    """Requests that may wait at once; another is answered 503 at once (a waiting request
    holds one of the server's worker threads, which pages need too)."""

    def __init__(self) -> None:
        """An empty budget."""
        self._cond = threading.Condition()
        self._used = 0
        self._waiting = 0

    def take(self, holder: Reservation, size: int) -> None:
        """Add `size` bytes to `holder`'s share, waiting while others hold the budget.

        Raises:
            ServerBusy: The others still held it after `wait_s`, or too many wait already.

        """
        total = max_image_file_bytes()

        def fits() -> bool:
            return self._used == holder.held or self._used + size <= total

        with self._cond:
            if not fits():
                if self._waiting >= self.max_waiting:
                    raise ServerBusy
                self._waiting += 1
                try:
                    if not self._cond.wait_for(fits, timeout=self.wait_s):
                        raise ServerBusy
                finally:
                    self._waiting -= 1
            self._used += size
            holder.held += size

    def give_back(self, holder: Reservation) -> None:
        """Return all of `holder`'s share (a second call returns nothing)."""
        with self._cond:
            self._used -= holder.held
            holder.held = 0
            self._cond.notify_all()


class Reservation:
    """One request's share of a `ReadBudget` (what it holds until its answer is sent)."""

    def __init__(self, budget: ReadBudget) -> None:
        """A share of nothing yet in `budget`."""
        self.budget = budget
        self.held = 0

    def take(self, size: int) -> None:
        """Hold `size` bytes more (see `ReadBudget.take`)."""
        self.budget.take(self, max(0, size))

    def release(self) -> None:
        """Give back everything held."""
        self.budget.give_back(self)


READS = ReadBudget()
"""The server's budget for image bytes in memory (one per process: requests share it)."""


def _stat_key(path: str, st: os.stat_result) -> tuple[Any, ...]:
    # A file rewritten in place changes its size, mtime or at least its ctime (which no
    # program can set back), so a hash is remembered only for the very same state.
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


_HASHES: OrderedDict[tuple[Any, ...], str] = OrderedDict()
_HASHES_LOCK = threading.Lock()
_HASHES_KEPT = 4096


def file_hash(path: str) -> str:
    """Hex SHA-256 of the file at `path` now, as `ImageRef.content_hash` computes it.

    Read as `_read_regular` reads (a regular file within `max_image_file_bytes`), in pieces,
    and remembered by the file's state (size, times, inode), so a page shown again does not
    read its images again.

    Raises:
        OSError: It is missing or unreadable, not a regular file, or too large.

    """
    cap = max_image_file_bytes()
    try:
        with open_regular(Path(path), what="an image") as f:
            st = os.fstat(f.fileno())
            if st.st_size > cap:
                raise FileTooLarge(f"{path}: larger than {cap:,} bytes, the most read for an image")
            key = _stat_key(path, st)
            with _HASHES_LOCK:
                known = _HASHES.get(key)
            if known is not None:
                return known
            h, left = hashlib.sha256(), cap + 1
            while left > 0 and (chunk := f.read(min(left, 1 << 20))):
                h.update(chunk)
                left -= len(chunk)
            if left <= 0:
                raise FileTooLarge(f"{path}: larger than {cap:,} bytes, the most read for an image")
    except UnreadableFile as exc:
        raise OSError(str(exc)) from None
    digest = h.hexdigest()
    with _HASHES_LOCK:
        _HASHES[key] = digest
        while len(_HASHES) > _HASHES_KEPT:
            _HASHES.popitem(last=False)
    return digest


def _read_regular(path: str, held: Reservation | None = None) -> bytes:
    """The bytes of `path`, when it is a regular file within `max_image_file_bytes`.

    With `held`, its size is taken from the server's budget before it is read.

    Raises:
        OSError: It is missing or unreadable, not a regular file, or too large.
        ServerBusy: `held` could not take its size in time.

    """
    cap = max_image_file_bytes()
    if held is not None:
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0  # read_regular says why
        held.take(min(size, cap))  # a larger file is refused unread
    try:
        return read_regular(Path(path), cap, what="an image")
    except UnreadableFile as exc:  # the caller answers any OSError with "cannot be read now"
        raise OSError(str(exc)) from None


def register_renderers() -> None:
    """Register the image renderers recipes name (their modules register them on import)."""
    import lmmprobe.imaging.procedural
    import lmmprobe.imaging.shapes
    import lmmprobe.synth.scenarios  # noqa: F401


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def _encoded(raw: bytes, name: str, held: Reservation | None = None) -> tuple[bytes, str]:
    """Image bytes as sent: the bytes themselves for a web format, else a PNG of them.

    A decoding takes its pixels (four bytes each) and as much again for the PNG from `held`.
    """
    with open_image(io.BytesIO(raw), name) as im:
        fmt = im.format
        if fmt in SENT_AS_IS:
            im.verify()  # a truncated or forged file is refused, not sent on
            return raw, SENT_AS_IS[fmt]
        if held is not None:
            held.take(8 * im.width * im.height)
        im.load()
        return _png(im), "image/png"


def image_bytes(
    ref: dict[str, Any], stored: bytes | None = None, held: Reservation | None = None
) -> tuple[bytes, str]:
    """The bytes and media type of one recorded image reference.

    Args:
        ref: The reference as the samples table records it.
        stored: The bytes the store keeps for ``ref["image"]`` (a content hash), if any.
        held: The request's share of the server's image budget (`READS`), which takes the
            bytes read and decoded; None reads without one.

    Raises:
        ImageChanged: The file's content is not the one the run recorded (``ref["sha256"]``).
        OSError: The file is missing or unreadable, not a regular file, larger than
            `max_image_file_bytes`, or not an image, or over the pixel cap.
        ValueError: The reference names nothing that can be drawn.
        ServerBusy: `held` could not take what the image needs in time.

    """
    if isinstance(ref.get("image"), str):
        if stored is None:
            raise ValueError(f"the store keeps no bytes for image {ref['image']}")
        if held is not None:
            held.take(len(stored))
        return _encoded(stored, "(stored image)", held)
    if isinstance(ref.get("path"), str):
        path = ref["path"]
        raw = _read_regular(path, held)
        recorded = ref.get("sha256")
        # The bytes sent are the bytes compared (no window for the file to change between).
        if isinstance(recorded, str) and hashlib.sha256(raw).hexdigest() != recorded:
            raise ImageChanged(f"{path}: its content is not the one the run recorded")
        return _encoded(raw, path, held)
    if isinstance(ref.get("renderer"), str) and isinstance(ref.get("recipe"), dict):
        register_renderers()
        image = ImageRef(renderer=ref["renderer"], recipe=ref["recipe"])
        try:
            return _png(image.load()), "image/png"
        except KeyError as exc:
            raise ValueError(f"no image renderer named {ref['renderer']!r}") from exc
    raise ValueError("the recorded image reference names no file, data or recipe")


_CHUNK = 1 << 18
"""Bytes handed to the server's socket at a time: the server waits for a slow client to take
each, so the image stays in the budget until it is sent (one ``send`` of the whole body
would be copied into the socket's buffer at once, and the budget given back while that copy
still waits for the client)."""


async def _pieces(data: bytes) -> AsyncIterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(data), _CHUNK):
        yield bytes(view[start : start + _CHUNK])


class _HeldResponse(StreamingResponse):
    """An image's bytes, sent piece by piece; its request's budget is given back once sent."""

    def __init__(self, content: bytes, media_type: str, held: Reservation) -> None:
        headers = {"Cache-Control": _CACHE, "Content-Length": str(len(content))}
        super().__init__(_pieces(content), media_type=media_type, headers=headers)
        # Given back when the response is dropped unsent too (a client gone, an error).
        self._give_back = weakref.finalize(self, held.release)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._give_back()


_BUSY = (
    "the server is reading other large images; try again in a moment "
    "(it holds a bounded amount of image data in memory at once)"
)


@router.get("/images/{run_id}/{sample_id:path}/{index}", include_in_schema=False)
def image(request: Request, run_id: str, sample_id: str, index: str) -> Response:
    """Image `index` of a sample as the run recorded it; 404 when there is no such image."""
    if not (index.isascii() and index.isdigit()) or len(index) > 6:  # int() refuses "²"
        raise _pages.not_found("no such image")
    with _pages.connection(request) as conn:
        ref = queries.image_ref(conn, run_id, sample_id, int(index))
        digest = None if ref is None else ref.get("image")
        stored = queries.image_data(conn, digest) if isinstance(digest, str) else None
    if ref is None:
        raise _pages.not_found("no such image")
    held = Reservation(READS)
    try:
        data, media = image_bytes(ref, stored, held)
    except ServerBusy:
        held.release()
        log.warning("image %s/%s/%s: server busy reading other images", run_id, sample_id, index)
        raise HTTPException(503, _BUSY, headers={"Retry-After": "5"}) from None
    except ImageChanged as exc:
        held.release()
        log.warning("image %s/%s/%s is not shown: %s", run_id, sample_id, index, exc)
        raise _pages.not_found(
            "the image file changed since the run: it is not the picture the model saw, so it "
            "is not shown"
        ) from None
    except (OSError, ValueError, MemoryError) as exc:
        held.release()
        # The run recorded it but it cannot be shown now (moved, deleted, damaged, or no
        # memory left for it): say so. The reason (which may name a file) goes to the
        # server's log, not to the client.
        why = "not enough memory to read it now" if isinstance(exc, MemoryError) else exc
        log.warning("image %s/%s/%s cannot be shown: %s", run_id, sample_id, index, why)
        raise _pages.not_found(
            "the run recorded this image but it cannot be read now (moved, deleted or "
            "damaged); the server's log says why"
        ) from None
    except BaseException:
        held.release()
        raise
    return _HeldResponse(data, media, held)
