"""Masks of the procedural foregrounds: emoji glyphs, geometric shapes and words.

Origin: written for lmmprobe's Dysca-style renderer. Glyphs come from the vendored Noto Emoji
font (monochrome, SIL OFL 1.1; ``fonts/noto-emoji``), words from the scalable font Pillow ships
(Aileron, SIL OFL), so the pixels depend on the package and Pillow only, never on system fonts.

Each foreground is three masks at a reference resolution, stacked as the bands of one image:

- halo: the silhouette grown by a few pixels, painted in a contrasting color first, so a green
  dog on grass or a white one on snow keeps a visible edge;
- fill: the silhouette (the glyph with its enclosed regions filled), painted in the named color;
- detail: the glyph's inner lines, painted in a darker (or, for dark colors, lighter) shade of
  the named color, so the drawing stays recognizable while the fill dominates the object.

Masks are computed once per foreground (cached) and only resized per image, because scipy
morphology at the reference size costs milliseconds and resizing costs a fraction of one.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from lmmprobe.imaging.vocab import GLYPHS, SHAPES

FONT_DIR = Path(__file__).parent / "fonts" / "noto-emoji"
"""The vendored Noto Emoji WOFF subsets, their license and ``unicode.json``."""

REF = 160
"""Longest side of a cached glyph or shape mask (halo included), in pixels."""

_HALO = 0.022  # halo width, as a fraction of the object's longest side
_TEXT_CAP = 64  # cap height of cached word masks at the reference size
_EMOJI: dict[str, str] = {name: e for group in GLYPHS.values() for name, e in group.items()}
# Code points that only select a presentation or join a sequence; every subset has them.
_SELECTORS = {0xFE0F, 0xFE0E, 0x200D}


@functools.cache
def _subset_ranges() -> list[tuple[Path, list[tuple[int, int]]]]:
    data = json.loads((FONT_DIR / "unicode.json").read_text())
    subsets = []
    for key, spec in data.items():
        ranges = []
        for part in spec.split(","):
            lo, _, hi = part.strip().removeprefix("U+").partition("-")
            ranges.append((int(lo, 16), int(hi or lo, 16)))
        subsets.append((FONT_DIR / f"noto-emoji-{key.strip('[]')}-400-normal.woff", ranges))
    return subsets


def font_file(text: str) -> Path:
    """The vendored font subset holding every code point of `text` (an emoji).

    Args:
        text: The emoji string.

    Raises:
        KeyError: No subset covers the emoji.

    """
    points = [ord(c) for c in text if ord(c) not in _SELECTORS]
    for path, ranges in _subset_ranges():
        if all(any(lo <= p <= hi for lo, hi in ranges) for p in points):
            return path
    raise KeyError(f"no Noto Emoji subset in {FONT_DIR} covers {text!r}")


@functools.lru_cache(maxsize=32)
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


@functools.lru_cache(maxsize=8)
def text_font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font (Aileron) at `size` px, used for every drawn word."""
    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):  # pragma: no cover - Pillow without FreeType
        raise RuntimeError("drawing words needs Pillow built with FreeType")
    return font


def _int_box(box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
    # Pillow types text boxes as floats; whole pixels that enclose the box.
    return math.floor(box[0]), math.floor(box[1]), math.ceil(box[2]), math.ceil(box[3])


def emoji_ink(text: str, size: int) -> Image.Image:
    """The raw glyph of emoji `text` at font size `size`, as an "L" image cropped to its ink."""
    font = _font(font_file(text), size)
    left, top, right, bottom = _int_box(font.getbbox(text))
    im = Image.new("L", (right - left + 4, bottom - top + 4))
    ImageDraw.Draw(im).text((2 - left, 2 - top), text, font=font, fill=255)
    box = im.getbbox()
    return im.crop(box) if box else im


def _halo(fill: Image.Image, width: float) -> Image.Image:
    """The fill mask grown by about `width` px, rounded and antialiased (blur, then threshold)."""
    blurred = fill.filter(ImageFilter.GaussianBlur(width * 0.6))
    return blurred.point([min(255, max(0, (v - 6) * 12)) for v in range(256)])


@dataclass(frozen=True)
class Sprite:
    """A foreground's masks at the reference size.

    Attributes:
        bands: RGB image whose bands are the (halo, fill, detail) masks.
        half: Length in `bands` pixels that an object's ``r`` stands for (half the longer side
            for glyphs and shapes, half the capital height for words).
        detail: Whether the detail band has any pixel (shapes and words have none).

    """

    bands: Image.Image
    half: float
    detail: bool


def _sprite(
    fill: Image.Image, detail: Image.Image, halo_px: float, half: float | None = None
) -> Sprite:
    bands = Image.merge("RGB", (_halo(fill, halo_px), fill, detail))
    return Sprite(
        bands, max(bands.size) / 2 if half is None else half, detail.getbbox() is not None
    )


def _erode(mask: NDArray[np.bool_], r: int) -> NDArray[np.bool_]:
    """Erosion by a (2r+1)² square: a running minimum along rows, then along columns."""
    if r <= 0:
        return mask
    k = 2 * r + 1
    padded = np.pad(mask, r, constant_values=False)
    rows = sliding_window_view(padded, k, axis=1).all(axis=-1)
    return np.asarray(sliding_window_view(rows, k, axis=0).all(axis=-1))


def _dilate(mask: NDArray[np.bool_], r: int) -> NDArray[np.bool_]:
    """Dilation by a (2r+1)² square (the running maximum)."""
    if r <= 0:
        return mask
    k = 2 * r + 1
    padded = np.pad(mask, r, constant_values=False)
    rows = sliding_window_view(padded, k, axis=1).any(axis=-1)
    return np.asarray(sliding_window_view(rows, k, axis=0).any(axis=-1))


def _reach_along_rows(free: NDArray[np.bool_], reached: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Spread `reached` along each row through runs of `free` pixels."""
    starts = free.copy()
    starts[:, 1:] &= ~free[:, :-1]
    run = np.cumsum(starts.ravel()).reshape(free.shape) * free
    hit = np.zeros(int(run.max()) + 1, bool)
    hit[run[reached & free]] = True
    hit[0] = False
    return np.asarray(hit[run])


def fill_holes(mask: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """`mask` with every region it encloses filled: the background not reachable from the border.

    Reachability spreads along whole runs of background pixels, alternately by rows and by
    columns, so a few passes suffice even for winding pockets (numpy only, no scipy).
    """
    free = ~mask
    reached = np.zeros_like(free)
    reached[0, :], reached[-1, :], reached[:, 0], reached[:, -1] = (
        free[0, :],
        free[-1, :],
        free[:, 0],
        free[:, -1],
    )
    while True:
        grown = _reach_along_rows(free, reached)
        grown = _reach_along_rows(free.T, grown.T).T
        if (grown == reached).all():
            return np.asarray(~reached)
        reached = grown


@functools.lru_cache(maxsize=512)
def glyph_masks(name: str) -> Sprite:
    """Cached (halo, fill, detail) bands of glyph class `name` at the reference size.

    Raises:
        KeyError: `name` is not a glyph class.

    """
    text = _EMOJI[name]
    halo_px = _HALO * REF
    pad = math.ceil(halo_px) + 3
    ink_im = emoji_ink(text, 256)
    scale = (REF - 2 * pad) / max(ink_im.size)
    ink_im = ink_im.resize(
        (max(1, round(ink_im.width * scale)), max(1, round(ink_im.height * scale))),
        Image.Resampling.LANCZOS,
    )
    ink = np.pad(np.asarray(ink_im), pad)
    solid = ink > 127
    sil = fill_holes(solid)
    # Lines of the drawing are ~3.5% of the glyph wide; an opening wider than that keeps only
    # the solid blobs (a cow's spots, an apple's body), which are filled like the silhouette
    # (outlined by a thin ring so spots stay visible) instead of shaded: otherwise a solid glyph
    # would come out in the shade color rather than the named one.
    line = max(1, round(0.02 * REF))
    blobs = _dilate(_erode(solid, line), line)
    blob_core = _erode(blobs, 1)
    # The outer contour stays in the fill color (the halo gives the edge); shade inner lines.
    inside = _erode(sil, 2 * line + 1)
    detail = np.where(solid & inside & ~blob_core, ink, 0).astype(np.uint8)
    fill = np.maximum(ink, sil.astype(np.uint8) * 255)
    return _sprite(Image.fromarray(fill, "L"), Image.fromarray(detail, "L"), halo_px)


def _shape_polygon(shape: str, c: float, r: float) -> list[tuple[float, float]]:
    def ring(n: int, start: float, radius: float = r) -> list[tuple[float, float]]:
        return [
            (
                c + radius * math.cos(start + 2 * math.pi * k / n),
                c + radius * math.sin(start + 2 * math.pi * k / n),
            )
            for k in range(n)
        ]

    if shape == "square":
        s = r * 0.86
        return [(c - s, c - s), (c + s, c - s), (c + s, c + s), (c - s, c + s)]
    if shape == "triangle":
        # Shifted down so its centroid-ish middle sits at the box centre.
        return [(x, y + r * 0.12) for x, y in ring(3, -math.pi / 2, r * 1.1)]
    if shape == "diamond":
        return [(c, c - r), (c + r * 0.7, c), (c, c + r), (c - r * 0.7, c)]
    if shape == "pentagon":
        return ring(5, -math.pi / 2)
    if shape == "hexagon":
        return ring(6, 0)
    if shape == "octagon":
        return ring(8, math.pi / 8)
    if shape == "star":
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else r * 0.42
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((c + rad * math.cos(a), c + rad * math.sin(a) + r * 0.08))
        return pts
    if shape == "cross":
        a, b = r * 0.32, r * 0.9
        return [
            (c - a, c - b), (c + a, c - b), (c + a, c - a), (c + b, c - a), (c + b, c + a),
            (c + a, c + a), (c + a, c + b), (c - a, c + b), (c - a, c + a), (c - b, c + a),
            (c - b, c - a), (c - a, c - a),
        ]  # fmt: skip
    if shape == "arrow":
        h, t = r * 0.3, r * 0.1
        return [
            (c - r, c - h), (c + t, c - h), (c + t, c - r * 0.75), (c + r, c),
            (c + t, c + r * 0.75), (c + t, c + h), (c - r, c + h),
        ]  # fmt: skip
    if shape == "heart":
        pts = []
        for k in range(120):
            t = 2 * math.pi * k / 120
            x = 16 * math.sin(t) ** 3
            y = 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t)
            pts.append((c + x * r / 17, c - y * r / 17 - r * 0.05))
        return pts
    raise KeyError(shape)


@functools.lru_cache(maxsize=64)
def shape_masks(shape: str) -> Sprite:
    """Cached (halo, fill, detail) bands of geometric shape `shape` at the reference size.

    Raises:
        KeyError: `shape` is not one of `SHAPES`.

    """
    if shape not in SHAPES:
        raise KeyError(shape)
    halo_px = _HALO * REF
    work = 2 * REF  # drawn at twice the size, then averaged down: antialiased edges
    c = work / 2
    r = c - 2 * (math.ceil(halo_px) + 3)
    im = Image.new("L", (work, work))
    draw = ImageDraw.Draw(im)
    if shape == "circle":
        draw.ellipse((c - r, c - r, c + r, c + r), fill=255)
    elif shape == "crescent":
        draw.ellipse((c - r, c - r, c + r, c + r), fill=255)
        o = r * 0.45
        draw.ellipse((c - r + o, c - r - o * 0.3, c + r + o, c + r - o * 0.3), fill=0)
    else:
        draw.polygon(_shape_polygon(shape, c, r), fill=255)
    fill = im.resize((REF, REF), Image.Resampling.BOX)
    return _sprite(fill, Image.new("L", fill.size), halo_px)


@functools.lru_cache(maxsize=256)
def text_masks(word: str) -> Sprite:
    """Cached (halo, fill, detail) bands of `word` and its half cap height, at reference size.

    A text object's ``r`` is half its cap height, so words of one size share one letter height
    whatever letters they hold.
    """
    size = round(_TEXT_CAP / 0.72)  # Aileron's cap height is about 0.72 em
    font = text_font(size)
    # A stroke in the same color thickens the regular face, so small words stay readable.
    stroke = max(1, round(size / 22))
    _, cap_top, _, cap_bottom = _int_box(font.getbbox("H", stroke_width=stroke))
    left, top, right, bottom = _int_box(font.getbbox(word, stroke_width=stroke))
    halo_px = 0.12 * _TEXT_CAP
    pad = math.ceil(halo_px) + 3
    # Vertical room is taken symmetrically around the cap band, so the mask's centre is the
    # middle of the capitals even for words with a descender (Q) or an overshoot.
    margin = max(cap_top - top, bottom - cap_bottom, 0) + pad
    fill = Image.new("L", (right - left + 2 * pad, cap_bottom - cap_top + 2 * margin))
    ImageDraw.Draw(fill).text(
        (pad - left, margin - cap_top),
        word,
        font=font,
        fill=255,
        stroke_width=stroke,
        stroke_fill=255,
    )
    return _sprite(fill, Image.new("L", fill.size), halo_px, (cap_bottom - cap_top) / 2)


def letter_centers(word: str) -> list[float]:
    """Horizontal centre of each letter of `word`, as a fraction of its `text_masks` width.

    Tests read drawn words letter by letter with this (there is no OCR engine offline).
    """
    size = round(_TEXT_CAP / 0.72)
    font = text_font(size)
    stroke = max(1, round(size / 22))
    left = _int_box(font.getbbox(word, stroke_width=stroke))[0]
    pad = math.ceil(0.12 * _TEXT_CAP) + 3
    width = text_masks(word).bands.width
    edges = [font.getlength(word[:i]) for i in range(len(word) + 1)]
    return [(pad - left + (a + b) / 2) / width for a, b in itertools.pairwise(edges)]
