"""Encoding images for APIs: data URLs, downscaled to a pixel budget, originals kept when small.

Images over the decoding cap (`lmmprobe.schema.image.max_image_pixels`) are refused before
they are decoded, and a request's images together are bounded as a sample's are
(`images_problem`: how many, and their pixels together), from their headers, before any is
decoded. Within a request, a picture listed again is decoded once (`image_key`).
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


def data_url(ref: ImageRef, *, max_pixels: int, fmt: str = "PNG") -> str:
    """The image as a ``data:`` URL."""
    mime, data = encode_image(ref, max_pixels=max_pixels, fmt=fmt)
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_key(ref: ImageRef) -> str:
    """What names `ref`'s picture within one request: its path, else its content hash.

    Two references to one file (a sample listing it twice) have one key, so the picture is
    decoded and encoded once; within one request the file is the same file.
    """
    return f"path:{ref.path}" if ref.path is not None else ref.content_hash()


def images_problem(images: Sequence[ImageRef]) -> str | None:
    """Why a request's images are more than one request may show, or None when they fit.

    The bounds are a sample's (`lmmprobe.schema.image.sample_images_problem`), a picture listed
    again counted each time. Sizes come from the files' headers, each distinct picture's once;
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
        pixels.append(sizes[key][0])
        nbytes.append(sizes[key][1])
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
