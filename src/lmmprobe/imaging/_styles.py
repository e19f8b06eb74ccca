"""Styles as image filters (Dysca's style attribute, APEx's EditImageStyle).

Origin: Dysca (Zhang et al., 2024) asks Stable Diffusion for 51 artistic styles; APEx (Conti et
al., 2024) edits an image's style with InstructPix2Pix. The procedural renderer approximates the
common styles with filters that work on any RGB image. Costly steps run at a reduced resolution
and are scaled back (a blur at quarter size looks the same and costs a sixteenth), and textures
come from the per-size cache, so a 512² image is styled in a few milliseconds.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageChops, ImageFilter, ImageOps

from lmmprobe.imaging import _textures as tx

Size = tuple[int, int]
Style = Callable[[Image.Image, random.Random], Image.Image]


def _down(im: Image.Image, factor: int) -> Image.Image:
    # reduce() averages factor x factor blocks (a box filter) far faster than resize().
    return im.reduce(factor) if factor > 1 and min(im.size) >= factor else im


def _up(
    im: Image.Image, size: Size, resample: Image.Resampling = Image.Resampling.BILINEAR
) -> Image.Image:
    return im if im.size == size else im.resize(size, resample)


def _lut(fn: Callable[[int], float]) -> list[int]:
    return [min(255, max(0, round(fn(v)))) for v in range(256)]


def _lut3(fn: Callable[[int], float]) -> list[int]:
    return _lut(fn) * 3


def _vivid(im: Image.Image, amount: float) -> Image.Image:
    """Saturation times `amount`: extrapolate away from the gray image (blend with alpha > 1)."""
    return Image.blend(im.convert("L").convert("RGB"), im, amount)


def _edge_mask(im: Image.Image, factor: int, threshold: int, gain: float) -> Image.Image:
    """Strong edges as an "L" mask at 1/`factor` size: weak (texture) edges are cut off."""
    return (
        _down(im.convert("L"), factor)
        .filter(ImageFilter.FIND_EDGES)
        .point(_lut(lambda v: (v - threshold) * gain))
    )


@functools.lru_cache(maxsize=16)
def _rgb_texture(kind: str, size: Size) -> Image.Image:
    """A cached gray texture of `_textures` as RGB, ready for channel-wise blending."""
    gray = {"paper": tx.paper, "grain": tx.grain, "brush": tx.brush, "vignette": tx.vignette}[kind](
        size
    )
    return gray.convert("RGB")


def _texture(kind: str, size: Size, rng: random.Random) -> Image.Image:
    return tx.seeded_crop(_rgb_texture(kind, size), size, rng)


_DARKEN_STROKES = _lut(lambda v: 255 - (255 - v) * 1.7)


def pencil_sketch(im: Image.Image, rng: random.Random) -> Image.Image:
    """Graphite on paper: a color-dodge of the gray image by its blurred negative."""
    gray = _down(im.convert("L"), 2)
    blur = _up(ImageOps.invert(_down(gray, 2)).filter(ImageFilter.GaussianBlur(1.2)), gray.size)
    g = np.asarray(gray, np.uint16)
    b = np.asarray(blur, np.uint16)
    dodge = np.minimum(255, (g * 256) // (256 - b)).astype(np.uint8)
    # The dodge alone is faint: darken the strokes, then lay them on paper.
    sketch = _up(Image.fromarray(dodge, "L").point(_DARKEN_STROKES), im.size)
    sheet = tx.seeded_crop(tx.paper(im.size), im.size, rng)
    return ImageChops.multiply(sketch, sheet).convert("RGB")


# 16 levels per channel: a retro palette that never moves a color far (a global palette
# would, for whichever color it has too few entries).
_PIXEL_LEVELS = _lut3(lambda v: (v & 0xF0) + 8)


def pixel_art(im: Image.Image, rng: random.Random) -> Image.Image:
    """Chunky pixels with a reduced palette: 1/8 resolution, 16 levels per channel."""
    small = _down(im, 8).point(_PIXEL_LEVELS)
    return _up(small, im.size, Image.Resampling.NEAREST)


def grayscale(im: Image.Image, rng: random.Random) -> Image.Image:
    """Plain luminance."""
    return im.convert("L").convert("RGB")


def _ramp3(
    dark: tuple[int, int, int], mid: tuple[int, int, int], light: tuple[int, int, int]
) -> list[int]:
    lut: list[int] = []
    for k in range(3):
        for v in range(256):
            lo, hi, t = (dark, mid, v / 127.5) if v < 128 else (mid, light, (v - 127.5) / 127.5)
            lut.append(round(lo[k] + (hi[k] - lo[k]) * t))
    return lut


_SEPIA = _ramp3((35, 22, 10), (160, 118, 78), (255, 242, 210))


def sepia(im: Image.Image, rng: random.Random) -> Image.Image:
    """Brown-toned monochrome, as an old print."""
    return im.convert("L").convert("RGB").point(_SEPIA)


# Contrast 1.25 around mid-gray, 2-bit posterize, then a brightening: one table.
_POP = _lut3(lambda v: (int(min(255, max(0, (v - 128) * 1.25 + 128))) & 0b11000000) * 1.3)


def pop_art(im: Image.Image, rng: random.Random) -> Image.Image:
    """Saturated flat colors: boosted saturation and contrast, then a 2-bit posterize."""
    return _vivid(im, 1.8).point(_POP)


_POSTERIZE3 = _lut3(lambda v: (v & 0b11100000) + 16)


def comic(im: Image.Image, rng: random.Random) -> Image.Image:
    """Flat color areas with black ink outlines."""
    flat = im.point(_POSTERIZE3)
    # Full-resolution edges keep the ink lines thin, so small objects keep their color.
    ink = _edge_mask(im, 1, 60, 4)
    return Image.composite(Image.new("RGB", im.size, (15, 15, 15)), flat, ink)


_WASH = _lut3(lambda v: 38 + v * 0.86)


def watercolor(im: Image.Image, rng: random.Random) -> Image.Image:
    """Soft washes bleeding into each other on textured paper."""
    soft = _down(im, 2).filter(ImageFilter.GaussianBlur(1.0))
    # Wet edges: pigment pools where the wash meets another color.
    pools = (
        soft.convert("L")
        .filter(ImageFilter.FIND_EDGES)
        .point(_lut(lambda v: v * 0.25))
        .convert("RGB")
    )
    wash = ImageChops.subtract(soft, pools).point(_WASH)
    # The paper is laid at the reduced size too: one upscale at the end is the costly step.
    return _up(ImageChops.multiply(wash, _texture("paper", wash.size, rng)), im.size)


def oil_painting(im: Image.Image, rng: random.Random) -> Image.Image:
    """Thick paint: colors merged into patches, lit brush strokes on top."""
    small = _down(im, 3)
    patches = small.quantize(32, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    paint = _vivid(patches.convert("RGB").filter(ImageFilter.SMOOTH), 1.15)
    # Strokes at 128 leave the paint as it is; brighter or darker ones light or shade it.
    lit = ImageChops.add(paint, _texture("brush", small.size, rng), 1.0, -128)
    return _up(lit, im.size)


_NEON_DARK = _lut3(lambda v: v * 0.16)
_NEON_BRIGHT = _lut3(lambda v: 40 + v * 1.5)


def neon(im: Image.Image, rng: random.Random) -> Image.Image:
    """Glowing colored outlines on a dark scene."""
    small = _down(im, 2)
    lines = _edge_mask(small, 1, 40, 3)
    glow = _up(_down(lines, 2).filter(ImageFilter.GaussianBlur(2.5)), lines.size).point(
        _lut(lambda v: v * 2.2)
    )
    light = ImageChops.lighter(lines, glow)
    tube = _vivid(small, 2.0).point(_NEON_BRIGHT)
    return _up(Image.composite(tube, small.point(_NEON_DARK), light), im.size)


@functools.lru_cache(maxsize=16)
def _dot_masks(cell: int, levels: int) -> NDArray[np.uint8]:
    """Dot masks (levels, cell, cell), uint8, with radii growing from 0 to the cell corner."""
    y, x = np.mgrid[0:cell, 0:cell].astype(np.float32) + 0.5 - cell / 2
    d = np.sqrt(x * x + y * y)
    radii = np.linspace(0, cell * 0.72, levels, dtype=np.float32)
    return np.asarray(np.clip(radii[:, None, None] - d[None] + 0.5, 0, 1) * 255, np.uint8)


_HALFTONE_LEVELS = 12
_HALFTONE_LEVEL = np.array(
    [
        min(_HALFTONE_LEVELS - 1, round(((1 - v / 255) ** 0.7) * (_HALFTONE_LEVELS - 2)) + 1)
        for v in range(256)
    ],
    np.intp,
)


def halftone(im: Image.Image, rng: random.Random) -> Image.Image:
    """Print-shop dots: each cell becomes an ink dot of its color, sized by its darkness."""
    w, h = im.size
    cell = max(3, round(max(w, h) / 90))
    small = _down(im, cell)
    gw, gh = small.size
    level = _HALFTONE_LEVEL[np.asarray(small.convert("L"))]
    dots = _dot_masks(cell, _HALFTONE_LEVELS)[level]  # (gh, gw, cell, cell)
    cover = Image.fromarray(
        np.ascontiguousarray(dots.transpose(0, 2, 1, 3).reshape(gh * cell, gw * cell)), "L"
    )
    ink = small.resize((gw * cell, gh * cell), Image.Resampling.NEAREST)
    paper = Image.new("RGB", ink.size, (248, 248, 244))
    return Image.composite(ink, paper, cover).crop((0, 0, w, h))


@functools.lru_cache(maxsize=16)
def _grout(size: Size, cell: int) -> Image.Image:
    w, h = size
    y, x = np.ogrid[0:h, 0:w]
    line = max(1, cell // 8)
    return Image.fromarray(
        np.where(((x % cell) < line) | ((y % cell) < line), 255, 0).astype(np.uint8), "L"
    )


def mosaic(im: Image.Image, rng: random.Random) -> Image.Image:
    """Square stone tiles of the local average color, set in gray grout."""
    w, h = im.size
    cell = max(4, round(max(w, h) / 32))
    small = _down(im, cell)
    gw, gh = small.size
    # Each tile a little lighter or darker, as real tesserae are never quite equal.
    nrng = np.random.default_rng(rng.randrange(2**32))
    shade = nrng.uniform(0.9, 1.08, (gh, gw, 1)).astype(np.float32)
    tiles = Image.fromarray(
        np.clip(np.asarray(small, np.float32) * shade, 0, 255).astype(np.uint8), "RGB"
    )
    big = tiles.resize((gw * cell, gh * cell), Image.Resampling.NEAREST).crop((0, 0, w, h))
    return Image.composite(Image.new("RGB", im.size, (95, 95, 90)), big, _grout(im.size, cell))


@functools.lru_cache(maxsize=16)
def _blueprint_paper(size: Size) -> Image.Image:
    w, h = size
    y, x = np.ogrid[0:h, 0:w]
    cell = max(8, max(size) // 16)
    grid = ((x % cell) == 0) | ((y % cell) == 0)
    base = np.where(grid[..., None], np.array([45, 95, 170]), np.array([20, 60, 140]))
    return Image.fromarray(base.astype(np.uint8), "RGB")


def blueprint(im: Image.Image, rng: random.Random) -> Image.Image:
    """White technical lines on blueprint blue with a faint grid."""
    lines = _up(_edge_mask(im, 2, 25, 5), im.size)
    return Image.composite(
        Image.new("RGB", im.size, (235, 242, 255)), _blueprint_paper(im.size), lines
    )


# Warm and faded, but red and green are scaled alike so yellow does not drift to orange.
_FADED = _lut(lambda v: 8 + v * 0.94) + _lut(lambda v: 6 + v * 0.93) + _lut(lambda v: 3 + v * 0.84)


def vintage(im: Image.Image, rng: random.Random) -> Image.Image:
    """A faded print: warm cast, lifted blacks, grain and darkened corners."""
    grained = Image.blend(im.point(_FADED), _texture("grain", im.size, rng), 0.06)
    return ImageChops.multiply(grained, _rgb_texture("vignette", im.size))


def emboss(im: Image.Image, rng: random.Random) -> Image.Image:
    """A gray relief, as if pressed into metal."""
    relief = _down(im.convert("L"), 2).filter(ImageFilter.EMBOSS)
    return _up(ImageOps.autocontrast(relief, cutoff=1), im.size).convert("RGB")


STYLERS: dict[str, Style] = {
    "pencil_sketch": pencil_sketch,
    "pixel_art": pixel_art,
    "grayscale": grayscale,
    "sepia": sepia,
    "pop_art": pop_art,
    "comic": comic,
    "watercolor": watercolor,
    "oil_painting": oil_painting,
    "neon": neon,
    "halftone": halftone,
    "mosaic": mosaic,
    "blueprint": blueprint,
    "vintage": vintage,
    "emboss": emboss,
}
"""Style name → filter ``(image, rng) -> image``; keys match `vocab.STYLES`."""
