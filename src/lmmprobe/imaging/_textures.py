"""Static textures shared by backgrounds, styles and weathers, built once per image size.

Origin: written for lmmprobe's Dysca-style procedural renderer. Textures are made from fixed
seeds and cached, slightly larger than the image; an image's own seed then picks where to cut
them (`seeded_crop`). Every image still looks different while the costly part (noise, drawn
patterns) is paid once per process and size, which is what keeps a 512² render in a few ms.
"""

from __future__ import annotations

import functools
import random

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw, ImageFilter

Size = tuple[int, int]


def margin(size: Size) -> int:
    """Extra pixels a cached texture has on each axis, so a seeded crop can move around."""
    return max(8, max(size) // 4)


def padded(size: Size) -> Size:
    """Size of the cached texture for images of `size`."""
    m = margin(size)
    return size[0] + m, size[1] + m


def seeded_crop(texture: Image.Image, size: Size, rng: random.Random) -> Image.Image:
    """A `size` window of `texture` at an offset drawn from `rng`."""
    dx = rng.randrange(texture.width - size[0] + 1)
    dy = rng.randrange(texture.height - size[1] + 1)
    return texture.crop((dx, dy, dx + size[0], dy + size[1]))


def value_noise(size: Size, cells: int, seed: int, octaves: int = 1) -> NDArray[np.float32]:
    """Smooth noise in [0, 1] of shape (h, w): random grids upscaled bicubically and summed.

    Args:
        size: (width, height).
        cells: Grid cells along the longer side for the first octave.
        seed: Seed of the random grids.
        octaves: Octaves summed, each at twice the frequency and half the amplitude.

    """
    rng = np.random.default_rng(seed)
    w, h = size
    total = np.zeros((h, w), np.float32)
    amp, norm = 1.0, 0.0
    for o in range(octaves):
        n = cells * 2**o
        gw, gh = max(2, round(n * w / max(size))), max(2, round(n * h / max(size)))
        grid = Image.fromarray(rng.random((gh, gw), dtype=np.float32), "F")
        total += amp * np.asarray(grid.resize((w, h), Image.Resampling.BICUBIC))
        norm += amp
        amp /= 2
    out = total / norm
    lo, hi = float(out.min()), float(out.max())
    return np.asarray((out - lo) / max(hi - lo, 1e-6), np.float32)


def to_l(a: NDArray[np.floating]) -> Image.Image:
    """A float array in [0, 1] as an "L" image."""
    return Image.fromarray(np.clip(a * 255 + 0.5, 0, 255).astype(np.uint8), "L")


@functools.lru_cache(maxsize=16)
def grain(size: Size) -> Image.Image:
    """Fine gray noise around 128 (film grain, paper), "L", padded size."""
    w, h = padded(size)
    rng = np.random.default_rng(11)
    fine = rng.normal(128, 22, (h, w)).clip(0, 255).astype(np.uint8)
    return Image.fromarray(fine, "L").filter(ImageFilter.BoxBlur(0.6))


@functools.lru_cache(maxsize=16)
def paper(size: Size) -> Image.Image:
    """A paper texture for painted styles: near-white "L" with soft fibres, padded size."""
    w, h = padded(size)
    n = (
        0.6 * value_noise((w, h), 24, 21, octaves=3)
        + 0.4 * np.asarray(grain(size), np.float32) / 255
    )
    return to_l(0.92 + 0.08 * n)


@functools.lru_cache(maxsize=16)
def brush(size: Size) -> Image.Image:
    """Directional streaks around 128 (brush strokes of an oil painting), "L", padded size."""
    w, h = padded(size)
    rng = np.random.default_rng(31)
    # Noise stretched along one axis, then sheared, reads as short parallel strokes.
    wide = w + h  # room for the shear below, so no corner is left without strokes
    base = rng.random((max(2, h // 3), max(2, wide // 24)), dtype=np.float32)
    strokes = Image.fromarray(base, "F").resize((wide, h), Image.Resampling.BICUBIC)
    shear = strokes.transform((w, h), Image.Transform.AFFINE, (1, 0.6, 0, 0, 1, 0))
    a = np.asarray(shear, np.float32)
    a = (a - a.min()) / max(float(a.max() - a.min()), 1e-6)
    return to_l(0.42 + 0.16 * a)


@functools.lru_cache(maxsize=16)
def vignette(size: Size) -> Image.Image:
    """Radial falloff: 255 in the middle to about 200 in the corners, "L", exact size."""
    w, h = size
    y, x = np.ogrid[0:h, 0:w]
    d = ((x - w / 2) / (w / 2)) ** 2 + ((y - h / 2) / (h / 2)) ** 2
    return to_l(1 - 0.1 * np.clip(d, 0, 2))


@functools.lru_cache(maxsize=16)
def flakes(size: Size, seed: int, count_per_mpx: int, max_r: float) -> Image.Image:
    """Soft round flakes (snow) as an "L" mask, padded size."""
    w, h = padded(size)
    rng = random.Random(seed)
    im = Image.new("L", (w, h))
    draw = ImageDraw.Draw(im)
    scale = max(size) / 512
    for _ in range(int(count_per_mpx * w * h / 1e6)):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        r = max(1.0, rng.uniform(0.8, max_r) * scale)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=rng.randint(170, 255))
    return im.filter(ImageFilter.GaussianBlur(0.7 * scale))


@functools.lru_cache(maxsize=16)
def streaks(size: Size, seed: int, count_per_mpx: int, length: float, slant: float) -> Image.Image:
    """Thin slanted streaks (rain, blown sand) as an "L" mask, padded size."""
    w, h = padded(size)
    rng = random.Random(seed)
    im = Image.new("L", (w, h))
    draw = ImageDraw.Draw(im)
    scale = max(size) / 512
    for _ in range(int(count_per_mpx * w * h / 1e6)):
        x, y = rng.uniform(-20, w), rng.uniform(-20, h)
        n = rng.uniform(0.5, 1.0) * length * scale
        draw.line(
            (x, y, x + slant * n, y + n),
            fill=rng.randint(120, 230),
            width=max(1, round(scale * rng.choice((1, 1, 2)))),
        )
    return im


@functools.lru_cache(maxsize=16)
def haze(size: Size, seed: int, cells: int) -> Image.Image:
    """Low-frequency cloudy noise (fog, clouds, dust) as an "L" image, padded size."""
    return to_l(value_noise(padded(size), cells, seed, octaves=4))
