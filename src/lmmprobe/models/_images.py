"""Encoding images for APIs: data URLs, downscaled to a pixel budget, originals kept when small."""

from __future__ import annotations

import base64
import io
import math

from PIL import Image

from lmmprobe.schema import ImageRef

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

    Raises:
        OSError: The image cannot be read.

    """
    fmt = fmt.upper()
    raw: bytes | None = None
    if ref.path is not None:
        with open(ref.path, "rb") as f:
            raw = f.read()
    elif ref.data_b64 is not None:
        raw = base64.b64decode(ref.data_b64)
    if raw is not None:
        with Image.open(io.BytesIO(raw)) as probe:
            original_fmt = probe.format or ""
            size = probe.size
        if original_fmt in _MIME and _fit(size, max_pixels) is None:
            return _MIME[original_fmt], raw
    image = ref.load()
    target = _fit(image.size, max_pixels)
    if target is not None:
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
