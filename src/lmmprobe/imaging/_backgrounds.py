"""The procedural backgrounds of the synthetic benchmark (Dysca's background attribute).

Origin: written for lmmprobe's Dysca-style renderer (Zhang et al., 2024, draw the background
with Stable Diffusion; here it is a procedural texture). Each builder turns (size, rng) into an
RGB picture: textured backgrounds are cut from a cached texture at a seeded offset, patterned
ones pick their colors and phase from the seed, so two seeds give two different images of the
same background while costing a crop.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from lmmprobe.imaging import _textures as tx

Size = tuple[int, int]
RGB = tuple[int, int, int]
Builder = Callable[[Size, random.Random], Image.Image]


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def _jitter(c: RGB, rng: random.Random, amount: int = 12) -> RGB:
    d = rng.randint(-amount, amount)
    return (
        min(255, max(0, c[0] + d)),
        min(255, max(0, c[1] + d)),
        min(255, max(0, c[2] + d)),
    )


@functools.lru_cache(maxsize=32)
def _ramp(size: Size, angle_deg: int) -> Image.Image:
    """An "L" ramp 0→255 along `angle_deg` (0 = left to right, 90 = top to bottom)."""
    w, h = size
    a = math.radians(angle_deg)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    t = x * math.cos(a) + y * math.sin(a)
    return tx.to_l((t - t.min()) / max(float(t.max() - t.min()), 1.0))


def _stops(ramp: Image.Image, stops: list[tuple[float, RGB]]) -> Image.Image:
    """Map an "L" ramp through color stops (position in [0, 1], color) with a lookup table."""
    lut: list[list[int]] = [[], [], []]
    for v in range(256):
        t = v / 255
        for (p0, c0), (p1, c1) in itertools.pairwise(stops):
            if t <= p1 or (p1, c1) == stops[-1]:
                c = _mix(c0, c1, min(1.0, max(0.0, (t - p0) / max(p1 - p0, 1e-6))))
                break
        for k in range(3):
            lut[k].append(c[k])
    return ramp.convert("RGB").point(lut[0] + lut[1] + lut[2])


def _tint(gray: Image.Image, dark: RGB, light: RGB) -> Image.Image:
    return ImageOps.colorize(gray, dark, light)


# --- plain and gradient ---------------------------------------------------------------------


def _solid(size: Size, rng: random.Random) -> Image.Image:
    v = rng.randint(165, 215)
    return Image.new("RGB", size, (v, v, v + rng.randint(-6, 6)))


_PASTELS: tuple[RGB, ...] = (
    (255, 214, 214), (255, 236, 200), (250, 246, 200), (212, 240, 212), (205, 228, 250),
    (226, 214, 246), (246, 214, 236), (214, 242, 240), (236, 236, 236), (190, 200, 215),
    (215, 200, 180), (180, 215, 200),
)  # fmt: skip


def _gradient(size: Size, rng: random.Random) -> Image.Image:
    a, b = rng.sample(_PASTELS, 2)
    return _stops(_ramp(size, rng.choice((0, 45, 90, 135))), [(0.0, a), (1.0, b)])


# --- skies ----------------------------------------------------------------------------------


_SKIES: tuple[tuple[RGB, RGB], ...] = (
    ((60, 125, 210), (185, 220, 248)),
    ((45, 110, 200), (170, 210, 245)),
    ((80, 145, 220), (200, 228, 250)),
    ((55, 135, 205), (190, 225, 240)),
)


@functools.lru_cache(maxsize=16)
def _sky_base(size: Size, variant: int) -> Image.Image:
    top, bottom = _SKIES[variant]
    return _stops(_ramp(size, 90), [(0.0, top), (1.0, bottom)])


def _sky(size: Size, rng: random.Random) -> Image.Image:
    return _sky_base(size, rng.randrange(len(_SKIES))).copy()


@functools.lru_cache(maxsize=16)
def _sunset_base(size: Size) -> Image.Image:
    return _stops(
        _ramp(size, 90),
        [
            (0.0, (60, 45, 115)),
            (0.35, (190, 80, 120)),
            (0.6, (245, 140, 80)),
            (0.75, (252, 205, 120)),
            (1.0, (252, 215, 150)),
        ],
    )


def _sunset(size: Size, rng: random.Random) -> Image.Image:
    w, h = size
    im = _sunset_base(size).copy()
    draw = ImageDraw.Draw(im)
    horizon = h * rng.uniform(0.72, 0.8)
    sx, sr = w * rng.uniform(0.2, 0.8), min(w, h) * rng.uniform(0.07, 0.11)
    draw.ellipse((sx - sr, horizon - sr * 1.2, sx + sr, horizon + sr * 0.8), fill=(255, 226, 140))
    # Dark rolling hills in front of the sun.
    phase, freq = rng.uniform(0, 6.28), rng.uniform(1.5, 3.5)
    pts = [
        (x, horizon + h * 0.03 * math.sin(phase + freq * 6.28 * x / w)) for x in range(0, w + 9, 8)
    ]
    draw.polygon([*pts, (w, h), (0, h)], fill=(55, 35, 60))
    return im


@functools.lru_cache(maxsize=16)
def _clouds_tex(size: Size, variant: int) -> Image.Image:
    padded = tx.padded(size)
    top, bottom = _SKIES[variant]
    sky = _stops(_ramp(padded, 90), [(0.0, top), (1.0, bottom)])
    # Only the upper part of the noise becomes cloud; a steep ramp gives soft-edged puffs.
    mask = tx.haze(size, 5 + variant, 4).point(
        [min(255, max(0, (v - 120) * 3)) for v in range(256)]
    )
    return Image.composite(Image.new("RGB", padded, (250, 250, 252)), sky, mask)


def _clouds(size: Size, rng: random.Random) -> Image.Image:
    return tx.seeded_crop(_clouds_tex(size, rng.randrange(2)), size, rng)


@functools.lru_cache(maxsize=16)
def _night_tex(size: Size) -> Image.Image:
    w, h = tx.padded(size)
    a = np.asarray(_stops(_ramp((w, h), 90), [(0.0, (8, 10, 35)), (1.0, (30, 40, 85))])).copy()
    n = int(w * h / 900)
    nrng = np.random.default_rng(131)
    ys, xs = nrng.integers(0, h, n), nrng.integers(0, w, n)
    a[ys, xs] = nrng.integers(150, 256, (n, 1))
    return Image.fromarray(a, "RGB")


def _night(size: Size, rng: random.Random) -> Image.Image:
    w, h = size
    im = tx.seeded_crop(_night_tex(size), size, rng)
    mx, my, mr = w * rng.uniform(0.1, 0.9), h * rng.uniform(0.08, 0.3), min(w, h) * 0.05
    ImageDraw.Draw(im).ellipse((mx - mr, my - mr, mx + mr, my + mr), fill=(240, 238, 215))
    return im


# --- natural textures: a tone field in [0, 1], tinted from a dark to a light colour ----------


def _grass_field(size: Size) -> NDArray[np.floating]:
    w, h = tx.padded(size)
    rng = np.random.default_rng(41)
    # Blades: noise stretched vertically, plus patches of lighter and darker green.
    blades = Image.fromarray(rng.random((max(2, h // 10), w), dtype=np.float32), "F")
    b = np.asarray(blades.resize((w, h), Image.Resampling.BILINEAR), np.float32)
    patches = tx.value_noise((w, h), 6, 42, octaves=2)
    t = 0.55 * b + 0.45 * patches
    return np.asarray((t - t.min()) / max(float(t.max() - t.min()), 1e-6))


def _water_field(size: Size) -> NDArray[np.floating]:
    w, h = tx.padded(size)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = tx.value_noise((w, h), 5, 51, octaves=2)
    waves = 0.5 + 0.5 * np.sin(y / max(size) * 90 + warp * 9 + np.sin(x / max(size) * 14) * 1.5)
    return np.asarray(0.7 * waves + 0.3 * tx.value_noise((w, h), 12, 52, octaves=2))


def _sand_field(size: Size) -> NDArray[np.floating]:
    w, h = tx.padded(size)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = tx.value_noise((w, h), 4, 61, octaves=2)
    ripples = 0.5 + 0.5 * np.sin((y * 0.9 + x * 0.3) / max(size) * 60 + warp * 6)
    fine = np.asarray(tx.grain(size), np.float32) / 255
    return np.asarray(0.45 * ripples + 0.35 * fine + 0.2 * warp)


def _snowfield_field(size: Size) -> NDArray[np.floating]:
    return tx.value_noise(tx.padded(size), 5, 71, octaves=3)


def _wood_field(size: Size) -> NDArray[np.floating]:
    w, h = tx.padded(size)
    _y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = tx.value_noise((w, h), 6, 81, octaves=3)
    grain = 0.5 + 0.5 * np.sin(x / max(size) * 150 + warp * 12)
    t = 0.75 * grain + 0.25 * warp
    # Planks: a dark seam every sixth of the size, each plank slightly lighter or darker.
    plank_w = max(8, max(size) // 6)
    plank = (x // plank_w).astype(np.int64)
    shade = np.random.default_rng(82).uniform(-0.12, 0.12, int(plank.max()) + 1)[plank]
    seam = (x % plank_w) < max(1, plank_w // 40)
    return np.where(seam, 0.0, np.clip(t + shade, 0, 1))


def _marble_field(size: Size) -> NDArray[np.floating]:
    w, h = tx.padded(size)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    turb = tx.value_noise((w, h), 5, 91, octaves=5)
    return np.asarray(np.abs(np.sin((x + y) / max(size) * 12 + turb * 9)) ** 0.35)


Field = Callable[[Size], NDArray[np.floating]]

_TINTED: dict[str, tuple[Field, RGB, RGB]] = {
    "grass": (_grass_field, (35, 95, 30), (125, 190, 70)),
    "water": (_water_field, (20, 70, 140), (110, 175, 225)),
    "sand": (_sand_field, (190, 160, 110), (240, 220, 175)),
    "snowfield": (_snowfield_field, (185, 200, 225), (250, 252, 255)),
    "wood": (_wood_field, (95, 55, 25), (200, 145, 90)),
    "marble": (_marble_field, (120, 120, 128), (242, 240, 236)),
}
"""Natural backgrounds: name → (tone field, dark colour, light colour)."""


# --- built patterns -------------------------------------------------------------------------


def _brick_tex(size: Size) -> Image.Image:
    w, h = tx.padded(size)
    rng = random.Random(101)
    im = Image.new("RGB", (w, h), (200, 195, 185))  # mortar
    draw = ImageDraw.Draw(im)
    bh = max(6, max(size) // 16)
    bw = bh * 2
    gap = max(1, bh // 8)
    for row, top in enumerate(range(-bh, h + bh, bh)):
        off = (bw // 2) * (row % 2)
        for left in range(-bw - off, w + bw, bw):
            c = _jitter((160, 70, 50), rng, 18)
            draw.rectangle((left + gap, top + gap, left + bw - gap, top + bh - gap), fill=c)
    shade = tx.grain(size).crop((0, 0, w, h))
    return Image.blend(im, Image.merge("RGB", (shade, shade, shade)), 0.12)


_TILE_COLORS: tuple[tuple[RGB, RGB], ...] = (
    ((225, 225, 220), (150, 150, 150)),
    ((200, 220, 235), (120, 135, 150)),
    ((235, 220, 190), (150, 130, 100)),
    ((205, 225, 205), (120, 140, 120)),
)


@functools.lru_cache(maxsize=32)
def _grid_mask(size: Size, cell: int, line: int) -> Image.Image:
    w, h = tx.padded(size)
    y, x = np.ogrid[0:h, 0:w]
    grout = ((x % cell) < line) | ((y % cell) < line)
    return Image.fromarray(np.where(grout, 255, 0).astype(np.uint8), "L")


@functools.lru_cache(maxsize=12)
def _tiles_tex(size: Size, palette: int, divisions: int) -> Image.Image:
    face, grout = _TILE_COLORS[palette]
    cell = max(8, max(size) // divisions)
    mask = _grid_mask(size, cell, max(1, cell // 18))
    im = Image.composite(
        Image.new("RGB", mask.size, grout), Image.new("RGB", mask.size, face), mask
    )
    return Image.blend(im, tx.haze(size, 111, 3).convert("RGB"), 0.15)


def _tiles(size: Size, rng: random.Random) -> Image.Image:
    tex = _tiles_tex(size, rng.randrange(len(_TILE_COLORS)), rng.choice((6, 8, 10)))
    return tx.seeded_crop(tex, size, rng)


_PAIRS: tuple[tuple[RGB, RGB], ...] = (
    ((235, 235, 235), (175, 175, 185)),
    ((250, 225, 205), (215, 165, 140)),
    ((210, 230, 250), (150, 180, 215)),
    ((225, 245, 215), (165, 200, 150)),
    ((245, 225, 245), (200, 165, 205)),
    ((250, 245, 210), (215, 200, 140)),
)


@functools.lru_cache(maxsize=32)
def _stripe_mask(size: Size, width: int, angle: int) -> Image.Image:
    w, h = tx.padded(size)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    a = math.radians(angle)
    t = x * math.cos(a) + y * math.sin(a)
    return Image.fromarray(np.where((t // width) % 2 == 0, 255, 0).astype(np.uint8), "L")


def _two_tone(size: Size, rng: random.Random, mask: Image.Image) -> Image.Image:
    a, b = rng.choice(_PAIRS)
    if rng.random() < 0.5:
        a, b = b, a
    return Image.composite(
        Image.new("RGB", size, a), Image.new("RGB", size, b), tx.seeded_crop(mask, size, rng)
    )


def _stripes(size: Size, rng: random.Random) -> Image.Image:
    width = max(3, max(size) // rng.choice((10, 14, 20)))
    return _two_tone(size, rng, _stripe_mask(size, width, rng.choice((0, 45, 90, 135))))


@functools.lru_cache(maxsize=32)
def _checker_mask(size: Size, cell: int) -> Image.Image:
    w, h = tx.padded(size)
    y, x = np.ogrid[0:h, 0:w]
    return Image.fromarray(np.where((x // cell + y // cell) % 2 == 0, 255, 0).astype(np.uint8), "L")


def _checker(size: Size, rng: random.Random) -> Image.Image:
    return _two_tone(size, rng, _checker_mask(size, max(4, max(size) // rng.choice((6, 8, 12)))))


@functools.lru_cache(maxsize=32)
def _dots_mask(size: Size, cell: int) -> Image.Image:
    w, h = tx.padded(size)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    # Staggered rows, as polka dots are printed.
    xs = (x + (y // cell % 2) * cell / 2) % cell - cell / 2
    ys = y % cell - cell / 2
    d = np.sqrt(xs * xs + ys * ys)
    edge: NDArray[np.float32] = np.clip((cell * 0.28 - d) + 0.5, 0, 1)
    return tx.to_l(edge)


def _dots(size: Size, rng: random.Random) -> Image.Image:
    return _two_tone(size, rng, _dots_mask(size, max(6, max(size) // rng.choice((7, 9, 12)))))


def _noise_tex(size: Size) -> Image.Image:
    w, h = tx.padded(size)
    rng = np.random.default_rng(121)
    # Colored noise at half resolution (2 px grains), softened so it stays a background.
    small = rng.integers(60, 200, (h // 2 + 1, w // 2 + 1, 3), dtype=np.uint8)
    im = Image.fromarray(small, "RGB").resize((w, h), Image.Resampling.NEAREST)
    return im.filter(ImageFilter.BoxBlur(0.5))


# --- backgrounds cut from one cached texture at a seeded offset ----------------------------

_PLAIN_TEXTURES: dict[str, Callable[[Size], Image.Image]] = {
    "brick": _brick_tex,
    "noise": _noise_tex,
}
"""Patterned backgrounds drawn once per size, then cut like the natural ones."""


@functools.lru_cache(maxsize=64)
def _texture(name: str, size: Size) -> Image.Image:
    """The cached texture background `name` is cut from, for images of `size`."""
    if name in _TINTED:
        field, dark, light = _TINTED[name]
        return _tint(tx.to_l(field(size)), dark, light)
    return _PLAIN_TEXTURES[name](size)


def _cropped(name: str, size: Size, rng: random.Random) -> Image.Image:
    return tx.seeded_crop(_texture(name, size), size, rng)


BUILDERS: dict[str, Builder] = {
    "solid": _solid,
    "gradient": _gradient,
    "sky": _sky,
    "sunset": _sunset,
    "clouds": _clouds,
    "night": _night,
    **{name: functools.partial(_cropped, name) for name in (*_TINTED, *_PLAIN_TEXTURES)},
    "tiles": _tiles,
    "stripes": _stripes,
    "checker": _checker,
    "dots": _dots,
}
"""Background name → builder ``(size, rng) -> RGB image``; keys match `vocab.BACKGROUNDS`."""


def background(name: str, size: Size, rng: random.Random) -> Image.Image:
    """Draw background `name` at `size` with the choices drawn from `rng` (a fresh image)."""
    im = BUILDERS[name](size, rng)
    return im if im.mode == "RGB" else im.convert("RGB")
