"""Image references: a path, base64 bytes, an in-memory picture, or a deterministic recipe.

Images are loaded lazily and identified by a content hash, so a cache key can name an image
without the image being held in memory. References are frozen, and a copy with changed fields is
a new, validated reference, so a remembered hash always belongs to the fields it was computed from.

Decoding a file or base64 image is capped at `max_image_pixels` (40 megapixels unless
``$LMMPROBE_MAX_IMAGE_PIXELS`` says otherwise): a larger picture is refused with
`ImageTooLargeError`, naming the file, its size, the limit and how to raise it, before any
pixel is decoded. Pillow's own decompression-bomb check is handled here rather than left to
warn.
"""

from __future__ import annotations

import base64 as _b64
import contextlib
import functools
import hashlib
import io
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from copy import deepcopy
from pathlib import Path
from typing import IO, Any, Self

import pydantic_core
from PIL import Image, UnidentifiedImageError
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

Renderer = Callable[[dict[str, Any]], Image.Image]

# Renderers for recipe images, registered by name (see `register_renderer`). A recipe image's
# pixels are a pure function of (renderer name, renderer version, recipe), so hashing those
# identifies the content without drawing it.
_RENDERERS: dict[str, tuple[str, Renderer]] = {}


def canonical_recipe(recipe: dict[str, Any]) -> dict[str, Any]:
    """`recipe` with the keys of every dict in it sorted (lists keep their order).

    `ImageRef` validation stores recipes in this form, so equal recipes hash equally whatever
    order their keys were written in.
    """
    out = _sorted_keys(recipe)
    assert isinstance(out, dict)
    return out


_CONTAINERS = (dict, list, tuple)


def _sorted_keys(value: Any) -> Any:
    """`value` with every dict in it rebuilt in key order; anything but a container as it is."""
    if not isinstance(value, _CONTAINERS):
        return value
    if isinstance(value, dict):
        # Ordered by the keys' text, so keys of mixed types (possible from Python) still sort.
        return {k: _sorted_keys(value[k]) for k in sorted(value, key=str)}
    items = [_sorted_keys(v) for v in value]
    return items if isinstance(value, list) else tuple(items)


MAX_PIXELS_ENV = "LMMPROBE_MAX_IMAGE_PIXELS"
"""Environment variable: the most pixels (width × height) lmmprobe decodes from one image."""
DEFAULT_MAX_PIXELS = 40_000_000


class FrameChanged(OSError):
    """A video frame decoded now is not the one sampling recorded (the file changed since)."""


class ImageTooLargeError(OSError):
    """An image has more pixels than lmmprobe decodes (`max_image_pixels`).

    An `OSError`, as every image that cannot be read is to the code that loads images.
    """


def max_image_pixels() -> int:
    """The decoding cap: ``$LMMPROBE_MAX_IMAGE_PIXELS`` when set, else 40,000,000.

    Raises:
        ValueError: The variable is set to something other than a positive whole number.

    """
    fixed = _FIXED_CAP.get()
    if fixed is not None:  # inside `pixel_cap_read_once`
        return fixed
    given = os.environ.get(MAX_PIXELS_ENV)
    # Asked several times for every image a run loads: each setting is parsed once.
    return DEFAULT_MAX_PIXELS if given is None else _pixels_cap(given)


_FIXED_CAP: ContextVar[int | None] = ContextVar("lmmprobe_fixed_pixel_cap", default=None)


@contextlib.contextmanager
def pixel_cap_read_once() -> Iterator[None]:
    """Within the block, `max_image_pixels` (and every bound made from it) reads the setting once.

    A load asks for the cap five times an image (the file's size, the remembered pixels, the
    sample's pixels and bytes); reading the environment each time was a tenth of a re-run's
    loading. A setting that cannot be read is left to raise where the cap is used, as outside
    the block. Only this thread's code sees the fixed value (a context variable).
    """
    try:
        cap: int | None = max_image_pixels()
    except ValueError:
        cap = None
    token = _FIXED_CAP.set(cap)
    try:
        yield
    finally:
        _FIXED_CAP.reset(token)


@contextlib.contextmanager
def pixel_cap_fixed(cap: int | None) -> Iterator[None]:
    """Within the block, `max_image_pixels` is `cap` (None: read from the setting as outside).

    For a process checking images for another (`lmmprobe.data.image_pool`): it judges by the
    cap the other read for its load (`pixel_cap_read_once`), not by its own reading of it.
    """
    token = _FIXED_CAP.set(cap)
    try:
        yield
    finally:
        _FIXED_CAP.reset(token)


@functools.lru_cache(maxsize=8)
def _pixels_cap(given: str) -> int:
    """`max_image_pixels` for ``$LMMPROBE_MAX_IMAGE_PIXELS`` set to `given` (a bad one raises)."""
    raw = given.strip().replace("_", "")
    if not raw:
        return DEFAULT_MAX_PIXELS
    # str.isdigit is true of '²' and other digits int() does not read: ASCII digits only.
    if not (raw.isascii() and raw.isdigit()) or int(raw) <= 0:
        raise ValueError(
            f"{MAX_PIXELS_ENV}={given!r} is not a positive number of "
            f"pixels: set it to e.g. {DEFAULT_MAX_PIXELS}, or unset it."
        )
    return int(raw)


MAX_IMAGES_PER_SAMPLE = 1_000
"""The most images one sample (one request) may list, a repeated one counted each time: far
above the largest multi-image benchmarks (MuirBench and MMIU show tens of images a question)."""
SAMPLE_PIXELS_FACTOR = 10
"""One sample's images may hold at most this many times `max_image_pixels` together."""


def max_sample_pixels() -> int:
    """The most pixels one sample's images may hold together: 400,000,000 by default.

    Each listing counts (an image listed twice is shown to the model twice), so the bound holds
    what a model is given; a file's bytes, read once, count once (`sample_bytes_problem`), and
    what a request carries is the backend's bound. It follows `max_image_pixels`
    (``$LMMPROBE_MAX_IMAGE_PIXELS``): `SAMPLE_PIXELS_FACTOR` images of the largest size decoded.
    """
    return SAMPLE_PIXELS_FACTOR * max_image_pixels()


def sample_images_problem(pixels: list[int], listed: int | None = None) -> str | None:
    """Why images of these sizes are too many for one sample, or None when they fit.

    Args:
        pixels: Width x height of each image the sample lists, in order, a repeated one each
            time it is listed (the first ones only, while a long list is being read).
        listed: How many images the sample lists (default: ``len(pixels)``).

    Returns:
        One line saying what is over which bound (`MAX_IMAGES_PER_SAMPLE`,
        `max_sample_pixels`) and what to do, or None.

    """
    listed = len(pixels) if listed is None else listed
    if listed > MAX_IMAGES_PER_SAMPLE:
        return (
            f"{listed:,} images; a sample may list at most {MAX_IMAGES_PER_SAMPLE:,} "
            "(a repeated one counted each time): split it into several samples"
        )
    total, cap = sum(pixels), max_sample_pixels()
    if total > cap:
        which = (
            f"its {listed:,} images"
            if len(pixels) == listed
            else f"the first {len(pixels):,} of its {listed:,} images"
        )
        return (
            f"{which} hold {total / 1e6:,.0f} MP together (a repeated one "
            f"counted each time), over the {cap / 1e6:,.0f} MP a sample may show: list fewer or "
            f"smaller images, or raise the per-image limit {MAX_PIXELS_ENV} (a sample may hold "
            f"{SAMPLE_PIXELS_FACTOR} times it)"
        )
    return None


IMAGE_FILE_SLACK = 16 << 20
"""Bytes an image file may hold beyond what its pixels need (metadata, ICC profiles, EXIF)."""


def max_image_file_bytes() -> int:
    """The largest image file read: four bytes a pixel at the decoding cap, and 16 MiB more.

    No picture within the pixel cap (`max_image_pixels`) takes more in a web format or as an
    uncompressed RGBA bitmap, so a larger file is refused unread.
    """
    return 4 * max_image_pixels() + IMAGE_FILE_SLACK


def image_file_problem(size: int, pixels: int | None = None) -> str | None:
    """Why an image file of `size` bytes is larger than a picture may be, or None.

    Args:
        size: The file's size in bytes.
        pixels: The picture's width x height from its header, when known: a file may hold
            at most eight bytes a pixel (16-bit RGBA, unpacked) and `IMAGE_FILE_SLACK` more,
            so a small picture carrying megabytes of other chunks is refused before it is
            read whole or sent.

    Returns:
        One line giving the size and the bound, or None when it fits.

    """
    cap = max_image_file_bytes()
    if size > cap:
        return (
            f"the file is {size:,} bytes, over the {cap:,} an image within the "
            f"{max_image_pixels() / 1e6:,.0f} MP decoding limit may take ({MAX_PIXELS_ENV} raises both)"
        )
    if pixels is not None and size > 8 * pixels + IMAGE_FILE_SLACK:
        return (
            f"the file is {size:,} bytes for a picture of {pixels:,} pixel{'' if pixels == 1 else 's'} (at most 8 bytes a "
            f"pixel and {IMAGE_FILE_SLACK >> 20} MiB more): it carries data that is not the "
            "picture; save the picture again"
        )
    return None


def max_sample_image_bytes() -> int:
    """The most image-file bytes one sample may read together: 1.6 GB by default.

    Four bytes a pixel over `max_sample_pixels`, and `IMAGE_FILE_SLACK` more. A file listed
    again is one reference, read once, so it counts once. What a request may *send* (each
    listing again) is the backend's own bound (the openai backend's ``max_request_image_bytes``).
    """
    return 4 * max_sample_pixels() + IMAGE_FILE_SLACK


def sample_bytes_problem(sizes: list[int], listed: int | None = None) -> str | None:
    """Why image files of these sizes are too large together for one sample, or None.

    Args:
        sizes: The size in bytes of each distinct image file the sample lists, in the order
            first listed, a file listed again counted once (the first ones only, while a list
            is being read).
        listed: How many images the sample lists (default: ``len(sizes)``).

    """
    listed = len(sizes) if listed is None else listed
    total, cap = sum(sizes), max_sample_image_bytes()
    if total <= cap:
        return None
    files = f"{len(sizes):,} image file{'' if len(sizes) == 1 else 's'}"
    which = f"its {files}" if len(sizes) == listed else f"{files} among its {listed:,} images"
    return (
        f"{which} are {total:,} bytes together (a file listed again counted once), over the "
        f"{cap:,} a sample may read: list fewer or smaller images"
    )


def _megapixels(pixels: int) -> str:
    return f"{pixels / 1e6:.3g} MP"


def _too_large(name: str, size: tuple[int, int] | None, pixels: int | None, cap: int) -> str:
    if pixels is None:  # Pillow refused it without saying its size
        return (
            f"image {name} is over the {_megapixels(cap)} decoding limit (and Pillow's own): "
            f"downscale the file, or raise the limit with {MAX_PIXELS_ENV}=PIXELS"
        )
    shown = f"{size[0]}×{size[1]} ({_megapixels(pixels)})" if size else _megapixels(pixels)
    return (
        f"image {name} is {shown}, over the {_megapixels(cap)} decoding limit: set "
        f"{MAX_PIXELS_ENV}={pixels} to allow it (about {pixels * 4 / 1e9:.2g} GB to decode), "
        "or downscale the file"
    )


# Pillow's decompression-bomb check runs inside Image.open (a warning above MAX_IMAGE_PIXELS,
# an error above twice that). Opening under this lock with the warning turned into an error
# keeps warnings.catch_warnings (which swaps process-wide state) from interleaving between
# threads; only the header is read under it.
_OPEN_LOCK = threading.Lock()
_PILLOW_PIXELS = re.compile(r"\((\d+) pixels\)")


def unreadable_reason(exc: BaseException) -> str:
    """Why Pillow could not read an image, in words that name no Python object.

    Pillow's "cannot identify image file <_io.BytesIO object at 0x...>" names the file object
    it was handed, not the data: it is said as "not an image Pillow can read"; any other
    error's own message is kept.
    """
    if isinstance(exc, UnidentifiedImageError):
        return "not an image Pillow can read"
    return str(exc)


def open_image(source: str | Path | IO[bytes], name: str | None = None) -> Image.Image:
    """Open an image file (header only) if it is within `max_image_pixels`.

    Args:
        source: A path or a binary file object.
        name: How to name the image in messages (default: the path).

    Returns:
        The opened, not yet decoded image; close it (or use it as a context manager).

    Raises:
        ImageTooLargeError: The image has more pixels than the cap (or than Pillow's own
            limit, which a raised cap raises too).
        OSError: The file is missing or is not an image Pillow can read.

    """
    cap = max_image_pixels()
    label = name or str(source)
    with _OPEN_LOCK, warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        pillow_cap = Image.MAX_IMAGE_PIXELS
        try:
            if pillow_cap is not None and cap > pillow_cap:
                # The user asked for bigger images than Pillow's default allows: Pillow follows
                # for this open only (its check runs in Image.open), then gets its limit back.
                Image.MAX_IMAGE_PIXELS = cap
            image = Image.open(source)
        except (Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
            found = _PILLOW_PIXELS.search(str(exc))
            pixels = int(found.group(1)) if found else None
            raise ImageTooLargeError(_too_large(label, None, pixels, cap)) from None
        finally:
            Image.MAX_IMAGE_PIXELS = pillow_cap
    try:
        check_pixels(image.size, label)
    except ImageTooLargeError:
        image.close()
        raise
    return image


def check_pixels(size: tuple[int, int], name: str) -> None:
    """Refuse a picture of `size` (width, height) over `max_image_pixels`, before it is made.

    For code that builds a picture from others (resized, composed side by side): the decoding
    cap bounds what it makes as it bounds what is decoded.

    Args:
        size: The picture's width and height.
        name: How to name it in the message (a file, or what it is made of).

    Raises:
        ImageTooLargeError: It has more pixels than the cap.

    """
    cap = max_image_pixels()
    width, height = size
    if width * height > cap:
        raise ImageTooLargeError(_too_large(name, (width, height), width * height, cap))


def pixel_hash(image: Image.Image) -> str:
    """Hex SHA-256 of a picture's mode, size and pixels: an in-memory image's `content_hash`."""
    h = hashlib.sha256(f"pixels:{image.mode}:{image.size}:".encode())
    h.update(image.tobytes())
    return h.hexdigest()


def load_video_frames(
    video: str, refs: Sequence[ImageRef]
) -> list[Image.Image | OSError | ValueError]:
    """Each of `refs` (frames of `video`) as `ImageRef.load` gives it, or what it raises.

    The video is opened once and its frames decoded in one pass in time order
    (`OpenVideo.frames_in_order`), where loading each frame alone opens the video and seeks
    again. A frame the pass gives is kept only when its pixels hash to the one its reference
    recorded; any other (no recorded hash, another picture, or the pass failed at or before
    it) is loaded alone by `ImageRef.load`, so the result is the picture or the error loading
    it alone would give.

    Args:
        video: The video file or URL every one of `refs` is a frame of.
        refs: Frames of `video` (`ImageRef.from_video_frame`), in any order.

    Raises:
        ImportError: PyAV is not installed (with the command that installs it).

    """
    from lmmprobe.schema import _video_decode

    out: list[Image.Image | OSError | ValueError | None] = [None] * len(refs)
    order = sorted(
        (k for k, ref in enumerate(refs) if ref.video == video and ref.video_time is not None),
        key=lambda k: refs[k].video_time or 0.0,
    )
    try:
        with _video_decode.open_video(video, max_image_pixels()) as opened:
            times = [refs[k].video_time or 0.0 for k in order]
            for k, (_, image) in zip(order, opened.frames_in_order(times), strict=False):
                known = refs[k].__dict__.get("_content_hash")
                if known is not None and pixel_hash(image) == known:
                    out[k] = image
    except (OSError, ValueError):
        pass  # the frames not given yet are loaded alone below, which says why they fail
    for k, ref in enumerate(refs):
        if out[k] is None:
            try:
                out[k] = ref.load()
            except (OSError, ValueError) as exc:
                out[k] = exc
    return [got for got in out if got is not None]


def register_renderer(name: str, version: str, fn: Renderer) -> None:
    """Register a deterministic image renderer usable from `ImageRef.recipe`.

    Args:
        name: Renderer name stored in the recipe reference.
        version: Bumped whenever the renderer's output changes; part of the content hash.
        fn: Function drawing the image from its recipe dictionary.

    """
    _RENDERERS[name] = (version, fn)


class ImageRef(BaseModel):
    """A lazily loaded image with a stable content hash.

    Exactly one of `path`, `data_b64`, `renderer` (with `recipe`) is set for a serializable
    reference; an in-memory picture made with `ImageRef.from_pil` sets none of them.

    A reference is frozen: its fields cannot be reassigned, and `model_copy` with ``update``
    gives a new validated reference whose content hash is computed afresh. A recipe is a dict,
    so its items could still be changed in place; the content hash follows such a change (see
    `content_hash`), but copying is the clearer way to describe another image.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: str | None = Field(
        default=None,
        description="Filesystem path. Data sources resolve paths relative to the dataset file.",
    )
    data_b64: str | None = Field(
        default=None, description="Encoded image bytes (PNG, JPEG...), base64."
    )
    renderer: str | None = Field(
        default=None,
        description="Name of a registered deterministic renderer that draws the image.",
    )
    recipe: dict[str, Any] | None = Field(
        default=None, description="Parameters passed to `renderer`; with it they fix every pixel."
    )
    # Left out of every dump when None, so other references serialize (and are stored) as
    # before video frames existed.
    video: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="A video file or URL this image is a frame of (with `video_time`).",
    )
    video_time: float | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The presentation time (seconds) of the frame of `video`.",
    )

    _image: Image.Image | None = PrivateAttr(default=None)

    @field_validator("recipe")
    @classmethod
    def _canonical_recipe(cls, recipe: dict[str, Any] | None) -> dict[str, Any] | None:
        # Keys sorted at every level, so equal recipes hash equally whatever order they were
        # written in (the hash reads the recipe's JSON in its key order).
        return None if recipe is None else canonical_recipe(recipe)

    @model_validator(mode="after")
    def _one_source(self) -> ImageRef:
        # Counted by hand (no list, no sum): every reference a load makes passes here, once
        # when it is made and again inside its sample's validation.
        given = (
            (self.path is not None)
            + (self.data_b64 is not None)
            + (self.renderer is not None)
            + (self.video is not None)
        )
        if given > 1:
            raise ValueError("an ImageRef takes only one of path, data_b64, renderer, video")
        if (self.video is None) != (self.video_time is None):
            raise ValueError("an ImageRef of a video frame needs both video and video_time")
        if self.renderer is not None and self.recipe is None:
            raise ValueError("an ImageRef with a renderer needs a recipe")
        if self.recipe is not None:
            # The recipe was just canonicalised: remember its JSON as canonical, so hashing it
            # needs no second canonicalisation (see `_recipe_hash`).
            try:
                canonical = pydantic_core.to_json(self.recipe)
            except pydantic_core.PydanticSerializationError:
                pass  # not JSON: hashing it fails, as it always has, when a hash is asked
            else:
                self.__dict__["_recipe_json"] = (canonical, canonical)
        return self

    @classmethod
    def from_path(cls, path: str | Path, *, content_hash: str | None = None) -> ImageRef:
        """Reference an image file (not read until needed).

        Args:
            path: The file.
            content_hash: Its `content_hash`, when the caller knows it (the data loader, from
                a check the store remembers for the file's size and modification time): the
                file is then not read to hash it.

        """
        ref = cls(path=str(path))
        if content_hash is not None:
            ref.remember_hash(content_hash)
        return ref

    def remember_hash(self, content_hash: str) -> None:
        """Give this file reference its `content_hash`, found by whoever read the file's bytes.

        For the data loader, which hashes a file it checks (perhaps in another process,
        `lmmprobe.data.image_pool`) after the reference is made: the file is then not read
        again to hash it.
        """
        self.__dict__["_content_hash"] = content_hash  # where `content_hash` remembers it

    @classmethod
    def from_read_file(cls, path: str | Path, data: bytes) -> ImageRef:
        """Reference an image file whose bytes the caller has just read whole (`data`).

        Its content hash is taken from `data`, as `content_hash` hashes a file's bytes, so the
        file is not read a second time to key a request.
        """
        return cls.from_path(path, content_hash=hashlib.sha256(data).hexdigest())

    @classmethod
    def from_video_frame(cls, video: str, time: float, content_hash: str | None = None) -> ImageRef:
        """Reference the frame of `video` shown at `time` seconds (decoded when loaded).

        Args:
            video: The video file or URL.
            time: The frame's presentation time, as sampling recorded it.
            content_hash: The frame's pixel hash, as sampling recorded it: loading checks the
                decoded frame against it, and the frame is not decoded only to hash it.

        """
        ref = cls(video=video, video_time=time)
        if content_hash is not None:
            ref.__dict__["_content_hash"] = content_hash
        return ref

    @classmethod
    def from_base64(cls, data: str) -> ImageRef:
        """Reference base64-encoded image bytes."""
        return cls(data_b64=data)

    @classmethod
    def from_pil(cls, image: Image.Image) -> ImageRef:
        """Wrap an in-memory picture; it is kept in memory for the life of the reference."""
        ref = cls()
        ref._image = image
        return ref

    @classmethod
    def from_recipe(cls, renderer: str, recipe: dict[str, Any]) -> ImageRef:
        """Reference an image drawn on demand by a registered renderer."""
        if renderer not in _RENDERERS:
            raise KeyError(f"no image renderer named {renderer!r}; known: {sorted(_RENDERERS)}")
        return cls(renderer=renderer, recipe=recipe)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy of this reference; with `update`, a new reference validated like any other.

        A plain copy names the same content, so it keeps the remembered content hash. An
        updated copy is validated (one source, canonical recipe) and hashes its own content:
        it never inherits the hash of the reference it was copied from.

        Args:
            update: Field values to change.
            deep: Copy the field values too (the recipe dict), not only the reference.

        """
        if not update:
            return super().model_copy(deep=deep)
        values = {name: getattr(self, name) for name in type(self).model_fields}
        values.update(update)
        copied = type(self).model_validate(deepcopy(values) if deep else values)
        if copied.kind == "memory":  # no field names a source: the picture is still the content
            copied._image = self._image
        return copied

    @property
    def kind(self) -> str:
        """One of ``path``, ``base64``, ``recipe``, ``frame``, ``memory``."""
        if self.path is not None:
            return "path"
        if self.video is not None:
            return "frame"
        if self.data_b64 is not None:
            return "base64"
        if self.renderer is not None:
            return "recipe"
        return "memory"

    def load(self, *, reduce_to: tuple[int, int] | None = None) -> Image.Image:
        """Return the picture as a fully loaded PIL image.

        Files and base64 data are decoded each call (nothing is kept), in-memory pictures are
        returned as they are, and recipes are drawn by their renderer.

        Args:
            reduce_to: A size the caller will shrink the picture to: where the format
                allows (JPEG), it is decoded at a reduced scale no smaller than this, which
                saves most of the memory and time. The caller still resizes.

        Raises:
            ImageTooLargeError: A file or base64 image over `max_image_pixels`.
            OSError: The file is missing or is not an image Pillow can read.

        """
        if self.path is not None or self.data_b64 is not None:
            source: str | io.BytesIO = (
                self.path
                if self.path is not None
                else io.BytesIO(_b64.b64decode(self.data_b64 or ""))
            )
            name = self.path if self.path is not None else "(base64 data)"
            with open_image(source, name) as im:
                if reduce_to is not None:
                    im.draft(None, reduce_to)
                im.load()
                return im
        if self.renderer is not None and self.recipe is not None:
            return _RENDERERS[self.renderer][1](self.recipe)
        if self.video is not None and self.video_time is not None:
            return self._load_frame(self.video, self.video_time)
        if self._image is not None:
            return self._image
        raise ValueError("empty ImageRef: it names no path, data, recipe or picture")

    def _load_frame(self, video: str, time: float) -> Image.Image:
        # Decoded again by one seek (nothing of the video is kept between loads), and checked
        # against the hash sampling recorded: a video replaced since would otherwise show the
        # model other pixels than the request's key names.
        from lmmprobe.schema import _video_decode

        with _video_decode.open_video(video, max_image_pixels()) as opened:
            image = opened.frame_at(time)[1]
        known: str | None = self.__dict__.get("_content_hash")
        if known is not None and pixel_hash(image) != known:
            raise FrameChanged(
                f"video {video}: the frame at {time:g} s is not the one sampled (the file "
                "changed since the data was loaded); load the data again"
            )
        return image

    def thumbnail(self, max_px: int) -> Image.Image:
        """The picture shrunk (aspect kept) so neither side exceeds `max_px`; smaller ones as is.

        Decoded at a reduced scale where the format allows and shrunk before anything else is
        done with it, so a large image costs little memory beyond its decoding.

        Raises:
            ImageTooLargeError: A file or base64 image over `max_image_pixels`.
            FrameChanged: A video frame whose pixels are not the ones its hash names.
            OSError: The file is missing or is not an image Pillow can read.

        """
        image = self.load(reduce_to=(max_px, max_px))
        if max(image.size) <= max_px:
            return image
        if image is self._image:
            image = image.copy()  # an in-memory picture is the reference's own: never shrink it
        image.thumbnail((max_px, max_px), Image.Resampling.BILINEAR, reducing_gap=2.0)
        return image

    def content_hash(self) -> str:
        """Hex SHA-256 identifying the image content.

        Files and base64 data hash their encoded bytes; in-memory pictures hash mode, size and
        pixels; recipes hash renderer name, renderer version and the recipe's JSON with its keys
        sorted at every level, so the order they were written in never matters (not even for a
        reference made with ``model_construct``, which skips validation).

        A file's, base64 data's or picture's hash is computed once and remembered. A recipe's
        hash is computed on every call from the recipe as it is now, so a recipe dict changed
        in place (or a renderer registered again under a new version) never keeps a stale hash.
        """
        if self.renderer is not None and self.kind == "recipe":
            return self._recipe_hash(self.renderer)
        # Remembered in the instance __dict__, as functools.cached_property would: pydantic
        # leaves such entries out of equality and dumps (a private attribute would make a
        # reference whose hash was asked unequal to one whose hash was not). Path and base64
        # fields are frozen strings and an updated copy is a new reference (`model_copy`), so
        # the entry cannot outlive the fields it describes.
        known: str | None = self.__dict__.get("_content_hash")
        if known is None:
            known = self.__dict__["_content_hash"] = self._hash_content()
        return known

    def _recipe_hash(self, renderer: str) -> str:
        # Hashed from the recipe's JSON with its keys sorted at every level. Sorting costs far
        # more than serialising, so the instance __dict__ remembers (JSON as stored, canonical
        # JSON): validation records its canonical recipe's, and any other recipe (one changed
        # in place, or never validated: `model_construct`) is canonicalised when its JSON as
        # stored differs from the remembered one.
        version = _RENDERERS[renderer][0] if renderer in _RENDERERS else "?"
        raw = pydantic_core.to_json(self.recipe)
        known: tuple[bytes, bytes] | None = self.__dict__.get("_recipe_json")
        if known is not None and known[0] == raw:
            canonical = known[1]
        else:
            recipe = None if self.recipe is None else canonical_recipe(self.recipe)
            canonical = pydantic_core.to_json(recipe)
            self.__dict__["_recipe_json"] = (raw, canonical)
        h = hashlib.sha256(f"recipe:{renderer}:{version}:".encode())
        h.update(canonical)
        return h.hexdigest()

    def _hash_content(self) -> str:
        h = hashlib.sha256()
        if self.path is not None:
            with open(self.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        elif self.data_b64 is not None:
            h.update(_b64.b64decode(self.data_b64))
        elif self.video is not None and self.video_time is not None:
            return pixel_hash(self._load_frame(self.video, self.video_time))
        elif self._image is not None:
            return pixel_hash(self._image)
        else:
            raise ValueError("empty ImageRef: it names no path, data, recipe or picture")
        return h.hexdigest()
