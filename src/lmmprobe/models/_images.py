"""Encoding images for APIs: data URLs, downscaled to a pixel budget, originals kept when small.

Images over the decoding cap (`lmmprobe.schema.image.max_image_pixels`) are refused before
they are decoded, and a request's images together are bounded as a sample's are
(`images_problem`: how many, and their pixels together), from their headers, before any is
decoded. Within a request, a picture listed again is decoded once (`image_key`), and what a
request carries (each listing, base64-encoded) is capped before anything is encoded (`data_urls`).
"""

from __future__ import annotations

import base64
import io
import math
import os
import stat
from collections.abc import Sequence

from PIL import Image

from lmmprobe._file_kind import file_kind, kernel_file, not_regular_message
from lmmprobe.schema import ImageRef
from lmmprobe.schema.image import (
    MAX_IMAGES_PER_SAMPLE,
    image_file_problem,
    max_image_file_bytes,
    open_image,
    sample_bytes_problem,
    sample_images_problem,
)

_MIME = {"PNG": "image/png", "JPEG": "image/jpeg"}


def _fit(size: tuple[int, int], max_pixels: int) -> tuple[int, int] | None:
    """The size scaled (aspect kept) to at most `max_pixels`, or None when it already fits."""
    w, h = size
    if w * h <= max_pixels:
        return None
    scale = math.sqrt(max_pixels / (w * h))
    return max(1, int(w * scale)), max(1, int(h * scale))


def encode_image(
    ref: ImageRef, *, max_pixels: int, fmt: str = "PNG", quality: int = 90
) -> tuple[str, bytes]:
    """Return (mime type, bytes) for sending `ref` to an API.

    A PNG or JPEG file (or base64 payload) within the pixel budget is sent byte for byte;
    anything else is decoded, downscaled to `max_pixels` if needed and re-encoded as `fmt`.
    A JPEG over the budget is decoded at a reduced scale (never below the size sent).

    Raises:
        ImageTooLargeError: The image is over the decoding cap (`max_image_pixels`): the
            message names the file, the limit and how to raise it.
        OSError: The image cannot be read.

    """
    fmt = fmt.upper()
    raw: bytes | None = None
    if ref.path is not None:
        with open(ref.path, "rb") as f:
            raw = _read_bounded(f, ref.path)
    elif ref.data_b64 is not None:
        raw = base64.b64decode(ref.data_b64)
    target: tuple[int, int] | None = None
    if raw is not None:
        name = ref.path if ref.path is not None else "(base64 data)"
        with open_image(io.BytesIO(raw), name) as probe:  # the header only: size and format
            original_fmt = probe.format or ""
            target = _fit(probe.size, max_pixels)
        if original_fmt in _MIME and target is None:
            return _MIME[original_fmt], raw
    image = ref.load(reduce_to=target)
    target = _fit(image.size, max_pixels) if target is None else target
    if target is not None and image.size != target:
        image = image.resize(target, Image.Resampling.LANCZOS)
    if fmt == "JPEG" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    elif image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    buf = io.BytesIO()
    # PNG at compress_level 1: a few percent larger than the default, several times faster,
    # and encoding is the client's main CPU cost per request.
    extra = {"quality": quality} if fmt == "JPEG" else {"compress_level": 1}
    image.save(buf, format=fmt, **extra)
    return _MIME[fmt], buf.getvalue()


class PayloadTooLargeError(ValueError):
    """A request's images, as sent, are more bytes than one request may carry."""


def data_url_size(mime: str, nbytes: int) -> int:
    """The length of the ``data:`` URL (base64) that carries `nbytes` bytes of type `mime`."""
    return len(f"data:{mime};base64,") + 4 * ((nbytes + 2) // 3)


def data_urls(
    listed: Sequence[ImageRef], *, max_pixels: int, fmt: str, max_bytes: int
) -> dict[str, str]:
    """The ``data:`` URL of each distinct picture in `listed`, by `image_key`, within a byte cap.

    A chat request cannot point back at a picture it already carries, so every listing is
    sent and counts towards `max_bytes`; each distinct picture is still read and encoded once.
    The total is known from the encoded bytes before anything is base64-encoded, and reading
    stops at the first new picture past the cap: what is held stays within the cap and one
    picture, whatever a sample lists.

    Args:
        listed: The request's pictures in the order they are sent, each listing.
        max_pixels: Each picture's pixel budget (`encode_image`).
        fmt: The format a re-encoded picture is sent in.
        max_bytes: The most characters of image URLs one request may carry.

    Raises:
        PayloadTooLargeError: Over `max_bytes`; the message gives the size as sent and the cap.
        ImageTooLargeError: A picture is over the decoding cap.
        OSError: A picture cannot be read.

    """
    encoded: dict[str, tuple[str, bytes]] = {}
    total = counted = 0
    for ref in listed:
        key = image_key(ref)
        if key not in encoded:
            if total > max_bytes:
                break  # nothing more is read once over: the listings so far say enough
            encoded[key] = encode_image(ref, max_pixels=max_pixels, fmt=fmt)
        mime, raw = encoded[key]
        total += data_url_size(mime, len(raw))
        counted += 1
    if total > max_bytes:
        which = (
            f"its {len(listed):,} images"
            if counted == len(listed)
            else f"the first {counted:,} of its {len(listed):,} images"
        )
        raise PayloadTooLargeError(
            f"{which} are {total:,} bytes as sent, over the {max_bytes:,} one request may carry"
        )
    return {
        key: f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"
        for key, (mime, raw) in encoded.items()
    }


def image_key(ref: ImageRef) -> str:
    """What names `ref`'s picture within one request: its path, else its content hash.

    Two references to one file (a sample listing it twice) have one key, so the picture is
    decoded and encoded once; within one request the file is the same file.
    """
    return f"path:{ref.path}" if ref.path is not None else ref.content_hash()


def images_problem(images: Sequence[ImageRef]) -> str | None:
    """Why a request's images are more than one request may show, or None when they fit.

    The bounds are a sample's (`lmmprobe.schema.image.sample_images_problem`, a picture listed
    again counted each time; `sample_bytes_problem`, a file listed again counted once, as it is
    read once). Sizes come from the files' headers, each distinct picture's once;
    pictures drawn by a registered renderer count no pixels (their size is the recipe's own).

    Raises:
        ImageTooLargeError: An image is over the decoding cap.
        OSError: An image cannot be read.

    """
    if len(images) > MAX_IMAGES_PER_SAMPLE:
        return sample_images_problem([], len(images))
    sizes: dict[str, tuple[int, int]] = {}
    pixels: list[int] = []
    nbytes: list[int] = []
    for ref in images:
        key = image_key(ref)
        if key not in sizes:
            sizes[key] = _measured(ref)
            nbytes.append(sizes[key][1])  # a file listed again is read once
        pixels.append(sizes[key][0])
        problem = sample_images_problem(pixels, len(images)) or sample_bytes_problem(
            nbytes, len(images)
        )
        if problem:
            return problem
    return None


def _read_bounded(f: io.BufferedReader, name: str) -> bytes:
    """The whole of an image file, refused (OSError) when larger than any picture may be."""
    raw = f.read(max_image_file_bytes() + 1)
    problem = image_file_problem(len(raw))
    if problem:
        raise OSError(f"image {name}: {problem}")
    return raw


def _measured(ref: ImageRef) -> tuple[int, int]:
    """`ref`'s pixels and the bytes it is sent as when sent as it is (0 when drawn).

    Raises:
        OSError: The file is larger than its picture may be (`image_file_problem`).

    """
    size = 0
    if ref.path is not None:
        info = os.stat(ref.path)
        size = info.st_size
        # A FIFO, a device or a kernel file (/proc/kmsg) would block the header's read forever.
        if not stat.S_ISREG(info.st_mode) or kernel_file(info):
            raise OSError(not_regular_message(ref.path, file_kind(info.st_mode, info), "images"))
    elif ref.data_b64 is not None:
        size = len(ref.data_b64) * 3 // 4
    pixels = _pixels(ref)
    if ref.path is not None or ref.data_b64 is not None:
        problem = image_file_problem(size, pixels)
        if problem:
            raise OSError(f"image {ref.path or '(base64 data)'}: {problem}")
    return pixels, size


def _pixels(ref: ImageRef) -> int:
    """Width x height of `ref`'s picture, read from its header (0 for a recipe)."""
    source: str | io.BytesIO | None = ref.path
    if ref.data_b64 is not None:
        source = io.BytesIO(base64.b64decode(ref.data_b64))
    if source is not None:
        with open_image(source, ref.path or "(base64 data)") as probe:
            width, height = probe.size
        return width * height
    if ref.kind == "memory":
        width, height = ref.load().size  # the picture itself: nothing is decoded
        return width * height
    return 0
