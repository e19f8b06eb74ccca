"""`image_ref`: one image value from a benchmark row, checked; `image_refs`: a list of them.

Hub datasets store an ``Image`` column as ``{"bytes": ..., "path": ...}`` (read undecoded),
VLMEvalKit's TSV files as base64 text, release archives as paths relative to the copy's folder.
Each is checked with Pillow (within lmmprobe's pixel cap) when the row is read, so a bad image
is a problem with its row's position, not a failure in the middle of a run.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmmprobe._file_kind import not_regular_file
from lmmprobe.data.benchmarks.base import RowContext
from lmmprobe.data.rows import RowError, check_image, is_url, outside_folder, url_problem
from lmmprobe.schema import ImageRef
from lmmprobe.schema.image import open_image, sample_images_problem, unreadable_reason

HUB_PATH = (
    "an image given as a path in a row from the hub cache: lmmprobe reads a hub dataset's "
    "images only from the bytes in its rows"
)
"""Why a row from the hub cache (no copy's folder) may not name an image file."""

# A path is short; base64 image data is never shorter than a few hundred characters.
_MAX_PATH_CHARS = 1024


def _from_bytes(data: bytes, field: str) -> ImageRef:
    try:
        with open_image(io.BytesIO(data), field) as im:
            im.verify()  # reads everything: catches truncated and non-image data
    except Exception as exc:
        raise RowError(field, f"unreadable image data: {unreadable_reason(exc)}") from exc
    return ImageRef.from_base64(base64.b64encode(data).decode("ascii"))


def _from_text(text: str, root: Path | None, field: str) -> ImageRef:
    # A path is read only inside the copy's folder; rows from the hub cache have none, so a
    # path there is refused (it would name a file of this machine's, not of the dataset).
    short = len(text) <= _MAX_PATH_CHARS
    escapes = outside_folder(text, f"the copy's folder {root}") if root is not None else HUB_PATH
    if short and not escapes and root is not None and (root / text).is_file():
        return check_image(root, text, field)
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        if short and root is not None and is_url(text):  # no file of the copy's: say so
            raise RowError(field, url_problem(text, "the copy's folder")) from None
        if short and escapes:
            raise RowError(field, escapes) from None
        base = root if root is not None else Path.cwd()
        if short:
            unreadable = not_regular_file(base / text, "images", shown=text)
            found = unreadable or f"image file not found: {text} (looked in {base})"
            raise RowError(field, found) from None
        raise RowError(field, "neither an image path nor base64 image data") from None
    return _from_bytes(data, field)


def image_ref(value: Any, ctx: RowContext, field: str = "image") -> ImageRef:
    """The image a row holds, checked.

    Args:
        value: A datasets ``Image`` value (``{"bytes", "path"}``, read undecoded), raw bytes,
            base64 text, or a path inside ``ctx.root`` (an absolute path, one leaving the
            folder, or any path in a row from the hub cache is refused).
        ctx: The row's context (its ``root`` resolves relative paths).
        field: The row's field name, for the error.

    Raises:
        RowError: No image (null), a missing file, or data Pillow cannot read.

    """
    if isinstance(value, dict):
        data, path = value.get("bytes"), value.get("path")
        if data:
            return _from_bytes(bytes(data), field)
        value = path
    if value is None or value == "":
        raise RowError(field, "no image (null)")
    if isinstance(value, bytes | bytearray):
        return _from_bytes(bytes(value), field)
    if isinstance(value, str):
        return _from_text(value, ctx.root, field)
    raise RowError(
        field, f"expected image bytes, a path or base64 text, got {type(value).__name__}"
    )


def image_refs(values: Sequence[Any], ctx: RowContext, field: str) -> list[ImageRef]:
    """A multi-image row's images (`image_ref` each, named ``FIELD[i]``), their number bounded.

    A row listing more images than one sample may (`lmmprobe.schema.image.MAX_IMAGES_PER_SAMPLE`,
    as `lmmprobe.data.rows.check_images` bounds a data file's rows) is refused before any is
    checked: 200,000 paths would otherwise each be looked up and held.

    Raises:
        RowError: Too many images (naming `field`), or one is not a readable image.

    """
    too_many = sample_images_problem([], len(values))
    if too_many:
        raise RowError(field, too_many)
    return [image_ref(value, ctx, f"{field}[{i}]") for i, value in enumerate(values)]
