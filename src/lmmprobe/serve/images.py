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
saying the image cannot be read now, and the server's log says why.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from PIL import Image

from lmmprobe.data.files import UnreadableFile, read_regular
from lmmprobe.schema import ImageRef
from lmmprobe.schema.image import max_image_pixels, open_image
from lmmprobe.serve import _pages
from lmmprobe.store import queries

__all__ = ["SENT_AS_IS", "image_bytes", "max_image_file_bytes", "register_renderers", "router"]

log = logging.getLogger(__name__)

router = APIRouter()

SENT_AS_IS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""Pillow formats sent as the file's own bytes, with their media type."""

_CACHE = "private, max-age=3600"


def max_image_file_bytes() -> int:
    """The largest image file read: four bytes a pixel at the decoding cap, and 16 MiB more.

    No picture within the pixel cap (`lmmprobe.schema.image.max_image_pixels`) takes more in
    a web format or as an uncompressed RGBA bitmap, so a larger file is refused unread.
    """
    return 4 * max_image_pixels() + (16 << 20)


def _read_regular(path: str) -> bytes:
    """The bytes of `path`, when it is a regular file within `max_image_file_bytes`.

    Raises:
        OSError: It is missing or unreadable, not a regular file, or too large.

    """
    try:
        return read_regular(Path(path), max_image_file_bytes(), what="an image")
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


def _encoded(raw: bytes, name: str) -> tuple[bytes, str]:
    """Image bytes as sent: the bytes themselves for a web format, else a PNG of them."""
    with open_image(io.BytesIO(raw), name) as im:
        fmt = im.format
        if fmt in SENT_AS_IS:
            im.verify()  # a truncated or forged file is refused, not sent on
            return raw, SENT_AS_IS[fmt]
        im.load()
        return _png(im), "image/png"


def image_bytes(ref: dict[str, Any], stored: bytes | None = None) -> tuple[bytes, str]:
    """The bytes and media type of one recorded image reference.

    Args:
        ref: The reference as the samples table records it.
        stored: The bytes the store keeps for ``ref["image"]`` (a content hash), if any.

    Raises:
        OSError: The file is missing or unreadable, not a regular file, larger than
            `max_image_file_bytes`, or not an image, or over the pixel cap.
        ValueError: The reference names nothing that can be drawn.

    """
    if isinstance(ref.get("image"), str):
        if stored is None:
            raise ValueError(f"the store keeps no bytes for image {ref['image']}")
        return _encoded(stored, "(stored image)")
    if isinstance(ref.get("path"), str):
        path = ref["path"]
        return _encoded(_read_regular(path), path)
    if isinstance(ref.get("renderer"), str) and isinstance(ref.get("recipe"), dict):
        register_renderers()
        image = ImageRef(renderer=ref["renderer"], recipe=ref["recipe"])
        try:
            return _png(image.load()), "image/png"
        except KeyError as exc:
            raise ValueError(f"no image renderer named {ref['renderer']!r}") from exc
    raise ValueError("the recorded image reference names no file, data or recipe")


@router.get("/images/{run_id}/{sample_id:path}/{index}", include_in_schema=False)
def image(request: Request, run_id: str, sample_id: str, index: str) -> Response:
    """Image `index` of a sample as the run recorded it; 404 when there is no such image."""
    if not index.isdigit() or len(index) > 6:
        raise _pages.not_found("no such image")
    with _pages.connection(request) as conn:
        ref = queries.image_ref(conn, run_id, sample_id, int(index))
        digest = None if ref is None else ref.get("image")
        stored = queries.image_data(conn, digest) if isinstance(digest, str) else None
    if ref is None:
        raise _pages.not_found("no such image")
    try:
        data, media = image_bytes(ref, stored)
    except (OSError, ValueError) as exc:
        # The run recorded it but it cannot be shown now (moved, deleted, damaged): say so.
        # The reason (which may name a file) goes to the server's log, not to the client.
        log.warning("image %s/%s/%s cannot be shown: %s", run_id, sample_id, index, exc)
        raise _pages.not_found(
            "the run recorded this image but it cannot be read now (moved, deleted or "
            "damaged); the server's log says why"
        ) from None
    return Response(data, media_type=media, headers={"Cache-Control": _CACHE})
