"""Weather effects laid over any RGB image (APEx's EditImageWeather).

Origin: APEx (Conti et al., 2024) changes an image's weather with an image-editing model; the
procedural renderer paints the effect instead: falling snow, rain streaks, fog, night, sun and a
sandstorm. Particles and haze come from cached textures cut at a seeded offset.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageChops, ImageOps

from lmmprobe.imaging import _textures as tx

Size = tuple[int, int]
Weather = Callable[[Image.Image, random.Random], Image.Image]


def _lut3(
    r: Callable[[int], float], g: Callable[[int], float], b: Callable[[int], float]
) -> list[int]:
    return [min(255, max(0, round(f(v)))) for f in (r, g, b) for v in range(256)]


_SNOW_TONE = _lut3(lambda v: 30 + v * 0.85, lambda v: 32 + v * 0.85, lambda v: 40 + v * 0.84)
_RAIN_TONE = _lut3(lambda v: v * 0.78, lambda v: v * 0.8, lambda v: 10 + v * 0.82)
_NIGHT_TONE = _lut3(lambda v: v * 0.28, lambda v: v * 0.33, lambda v: 12 + v * 0.5)
_SUN_TONE = _lut3(lambda v: 12 + v * 1.02, lambda v: 6 + v * 0.99, lambda v: v * 0.9)


def snow(im: Image.Image, rng: random.Random) -> Image.Image:
    """Cold light and falling flakes of a few sizes."""
    out = im.point(_SNOW_TONE)
    flakes = tx.seeded_crop(tx.flakes(im.size, 1, 2600, 4.0), im.size, rng)
    return Image.composite(Image.new("RGB", im.size, (255, 255, 255)), out, flakes)


def rain(im: Image.Image, rng: random.Random) -> Image.Image:
    """A darker, bluish scene crossed by slanted streaks."""
    out = im.point(_RAIN_TONE)
    streaks = tx.seeded_crop(tx.streaks(im.size, 2, 2200, 30, 0.25), im.size, rng)
    return Image.composite(Image.new("RGB", im.size, (205, 215, 230)), out, streaks)


def fog(im: Image.Image, rng: random.Random) -> Image.Image:
    """Patchy gray-white mist that washes out contrast."""
    mist = tx.seeded_crop(tx.haze(im.size, 3, 3), im.size, rng)
    # 40-75 % fog: thick enough to see, thin enough to still see through.
    mask = mist.point(lambda v: 100 + v * 90 // 255)
    return Image.composite(Image.new("RGB", im.size, (212, 216, 222)), im, mask)


def night(im: Image.Image, rng: random.Random) -> Image.Image:
    """Dark blue moonlight."""
    return im.point(_NIGHT_TONE)


@functools.lru_cache(maxsize=16)
def _glare(size: Size) -> Image.Image:
    """A warm radial sun glare centred on the top-left corner (flipped for other corners)."""
    w, h = size
    y, x = np.ogrid[0:h, 0:w]
    d = np.sqrt((x / max(size)) ** 2 + (y / max(size)) ** 2)
    a = np.clip(1 - d / 0.9, 0, 1) ** 2
    glow = np.stack([a * 255, a * 225, a * 150], axis=-1)
    return Image.fromarray(glow.astype(np.uint8), "RGB")


def sunny(im: Image.Image, rng: random.Random) -> Image.Image:
    """Warm bright light with a sun glare from one top corner."""
    glare = _glare(im.size)
    if rng.random() < 0.5:
        glare = ImageOps.mirror(glare)
    return ImageChops.screen(im.point(_SUN_TONE), glare)


def sandstorm(im: Image.Image, rng: random.Random) -> Image.Image:
    """Ochre dust haze with blown grains."""
    dust = tx.seeded_crop(tx.haze(im.size, 4, 4), im.size, rng)
    mask = dust.point(lambda v: 95 + v * 80 // 255)
    out = Image.composite(Image.new("RGB", im.size, (196, 150, 90)), im, mask)
    grains = tx.seeded_crop(tx.streaks(im.size, 5, 900, 14, 2.5), im.size, rng)
    return Image.composite(
        Image.new("RGB", im.size, (225, 190, 130)), out, grains.point(lambda v: v // 2)
    )


WEATHER_FNS: dict[str, Weather] = {
    "snow": snow,
    "rain": rain,
    "fog": fog,
    "night": night,
    "sunny": sunny,
    "sandstorm": sandstorm,
}
"""Weather name → effect ``(image, rng) -> image``; keys match `vocab.WEATHERS`."""
