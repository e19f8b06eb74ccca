"""The procedural renderer of the synthetic benchmark: metadata recipe → picture, offline, on CPU.

Origin: Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating
Perception Ability of LVLMs") renders its metadata M = (foreground, attributes, background,
style) with Stable Diffusion. This renderer draws the same metadata with Pillow and numpy, so a
benchmark can be generated anywhere, fast, with the ground truth exact by construction:

- foregrounds are glyphs of the vendored Noto Emoji font (SIL OFL 1.1, ``fonts/noto-emoji``),
  geometric shapes and words, filled with exactly the named color (one of Dysca's eight), with
  inner lines in a shade of it and a thin contrasting halo so they stand out on any background;
- backgrounds, weathers and styles are procedural (`lmmprobe.imaging.vocab` lists them).

The helpers `glyph_image`, `apply_style`, `apply_weather` and `render_class_image` serve APEx's
image tools (PasteGeneratedObjectAtRandomPosition, EditImageStyle, EditImageWeather,
TextToImageGeneration).

A recipe::

    {
        "size": 512,             # side of the square image in px
        "seed": 123,             # drives every random choice (texture offsets, palettes, filters)
        "background": "sky",     # key of vocab.BACKGROUNDS
        "style": "watercolor",   # key of vocab.STYLES, or "none"
        "objects": [             # drawn in order, later on top
            {"kind": "glyph", "name": "dog", "color": "red", "x": 0.5, "y": 0.5, "r": 0.2},
            {"kind": "shape", "name": "star", "color": "blue", "x": 0.2, "y": 0.2, "r": 0.1},
            {"kind": "text", "name": "APPLE", "color": "black", "x": 0.5, "y": 0.8, "r": 0.08},
        ],
        "weather": "snow",       # optional, key of vocab.WEATHERS; after objects, before style
    }

``x, y`` is an object's centre as a fraction of the side; ``r`` is half its extent (glyph and
shape: half the side of the box the object, halo included, fits in; text: half the capital
height, the width follows the word).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from PIL import Image, ImageChops

from lmmprobe.imaging import _masks
from lmmprobe.imaging._backgrounds import background as _background
from lmmprobe.imaging._styles import STYLERS
from lmmprobe.imaging._weather import WEATHER_FNS
from lmmprobe.imaging.vocab import BACKGROUNDS, COLORS, GROUP_OF, SHAPES, STYLES, WEATHERS
from lmmprobe.schema import register_renderer

__all__ = [
    "KINDS",
    "RENDERER",
    "RENDERER_VERSION",
    "apply_style",
    "apply_weather",
    "drawable_classes",
    "glyph_image",
    "halo_color",
    "render",
    "render_class_image",
    "shade_color",
    "text_extent",
]

RENDERER = "synth-procedural"
RENDERER_VERSION = "1"
KINDS: tuple[str, ...] = ("glyph", "shape", "text")
"""Kinds of foreground object a recipe can hold."""

RGB = tuple[int, int, int]
_MAX_TEXT = 40
# Upscaled masks get their antialiased ramp steepened again, so big objects keep crisp edges.
_SHARPEN = [min(255, max(0, round((v - 128) * 1.8 + 128))) for v in range(256)] * 3
_STYLE_ALIASES: dict[str, str] = {
    **{info.phrase: name for name, info in STYLES.items()},
    **{name.replace("_", " "): name for name in STYLES},
}


def _luma(c: RGB) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def halo_color(color: RGB) -> RGB:
    """The outline color drawn around an object of `color`: near-white or near-black."""
    return (242, 242, 242) if _luma(color) < 140 else (24, 24, 24)


def shade_color(color: RGB) -> RGB:
    """The color of a glyph's inner lines: a dark shade of `color`, or a light one if it is dark."""
    if _luma(color) >= 110:
        return (round(color[0] * 0.3), round(color[1] * 0.3), round(color[2] * 0.3))
    return (
        round(color[0] + (255 - color[0]) * 0.7),
        round(color[1] + (255 - color[1]) * 0.7),
        round(color[2] + (255 - color[2]) * 0.7),
    )


def _known(values: Any) -> str:
    return ", ".join(sorted(values))


def _rgb(color: Any, where: str) -> RGB:
    if isinstance(color, str):
        if color not in COLORS:
            raise ValueError(f"{where}: unknown color {color!r} (known: {_known(COLORS)})")
        return COLORS[color]
    if (
        isinstance(color, list | tuple)
        and len(color) == 3
        and all(isinstance(v, int) and 0 <= v <= 255 for v in color)
    ):
        return (int(color[0]), int(color[1]), int(color[2]))
    raise ValueError(
        f"{where}: color must be a color name ({_known(COLORS)}) or three ints 0-255, got {color!r}"
    )


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where}.{key}: expected a finite number, got {value!r}")
    return float(value)


def _sprite(kind: Any, name: Any, where: str) -> _masks.Sprite:
    """The cached masks of one object, after checking its kind and name."""
    if kind == "glyph":
        if not isinstance(name, str) or name not in GROUP_OF:
            raise ValueError(
                f"{where}.name: unknown glyph class {name!r} (known: the {len(GROUP_OF)} "
                f"classes of vocab.GLYPHS, e.g. {_known(list(GROUP_OF)[:8])})"
            )
        return _masks.glyph_masks(name)
    if kind == "shape":
        if not isinstance(name, str) or name not in SHAPES:
            raise ValueError(f"{where}.name: unknown shape {name!r} (known: {_known(SHAPES)})")
        return _masks.shape_masks(name)
    if kind == "text":
        if (
            not isinstance(name, str)
            or not name.strip()
            or len(name) > _MAX_TEXT
            or not name.isprintable()
        ):
            raise ValueError(
                f"{where}.name: text must be 1-{_MAX_TEXT} printable characters, got {name!r}"
            )
        return _masks.text_masks(name)
    raise ValueError(f"{where}.kind: unknown kind {kind!r} (known: {_known(KINDS)})")


def _paint(
    im: Image.Image, sprite: _masks.Sprite, color: RGB, cx: float, cy: float, r: float
) -> None:
    """Paint one object's halo, fill and detail, `r` px in half-extent, centred at (cx, cy)."""
    bands = sprite.bands
    scale = r / sprite.half
    w, h = max(1, round(bands.width * scale)), max(1, round(bands.height * scale))
    sized = bands.resize((w, h), Image.Resampling.BILINEAR)
    if scale > 1.25:
        sized = sized.point(_SHARPEN)
    x0, y0 = round(cx - w / 2), round(cy - h / 2)
    # Paste does not clip a box that leaves the image, so crop the masks to the visible part.
    left, top = max(0, -x0), max(0, -y0)
    right, bottom = min(w, im.width - x0), min(h, im.height - y0)
    if right <= left or bottom <= top:
        return
    if (left, top, right, bottom) != (0, 0, w, h):
        sized = sized.crop((left, top, right, bottom))
    box = (x0 + left, y0 + top, x0 + right, y0 + bottom)
    halo, fill, detail = sized.split()
    im.paste(halo_color(color), box, halo)
    im.paste(color, box, fill)
    if sprite.detail:
        im.paste(shade_color(color), box, detail)


def _draw_objects(im: Image.Image, objects: Any) -> None:
    if not isinstance(objects, list | tuple):
        raise ValueError(
            f"recipe.objects: expected a list of objects, got {type(objects).__name__}"
        )
    side = im.width
    for i, obj in enumerate(objects):
        where = f"recipe.objects[{i}]"
        if not isinstance(obj, Mapping):
            raise ValueError(f"{where}: expected an object mapping, got {obj!r}")
        sprite = _sprite(obj.get("kind"), obj.get("name"), where)
        color = _rgb(obj.get("color"), f"{where}.color")
        x, y, r = (_number(obj, k, where) for k in ("x", "y", "r"))
        if not 0 < r <= 2:
            raise ValueError(f"{where}.r: must be in (0, 2], got {r}")
        _paint(im, sprite, color, x * side, y * side, r * side)


def _choice(value: Any, known: Mapping[str, Any], field: str, extra: tuple[str, ...] = ()) -> str:
    if not isinstance(value, str) or (value not in known and value not in extra):
        raise ValueError(f"{field}: unknown value {value!r} (known: {_known([*known, *extra])})")
    return value


def render(recipe: dict[str, Any]) -> Image.Image:
    """Draw a recipe (see the module docstring): a pure function of the recipe.

    Args:
        recipe: size, seed, background, style, objects and optional weather.

    Returns:
        The RGB picture, ``size`` × ``size``.

    Raises:
        ValueError: A field is missing or holds an unknown value (the message names the field
            and the known values).

    """
    if not isinstance(recipe, Mapping):
        raise ValueError(f"recipe: expected a mapping, got {type(recipe).__name__}")
    size = recipe.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or not 16 <= size <= 8192:
        raise ValueError(f"recipe.size: expected an int from 16 to 8192, got {size!r}")
    seed = recipe.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"recipe.seed: expected an int, got {seed!r}")
    bg = _choice(recipe.get("background"), BACKGROUNDS, "recipe.background")
    style = _choice(recipe.get("style", "none"), STYLES, "recipe.style", ("none",))
    weather = recipe.get("weather")
    if weather is not None:
        weather = _choice(weather, WEATHERS, "recipe.weather")
    # One stream per stage: adding a weather or changing the style leaves the background and
    # the other stages' draws as they were.
    im = _background(bg, (size, size), random.Random(f"{seed}:background"))
    _draw_objects(im, recipe.get("objects", []))
    if weather is not None:
        im = WEATHER_FNS[weather](im, random.Random(f"{seed}:weather"))
    if style != "none":
        im = STYLERS[style](im, random.Random(f"{seed}:style"))
    return im


register_renderer(RENDERER, RENDERER_VERSION, render)


def _as_rgb(image: Image.Image, what: str) -> Image.Image:
    if not isinstance(image, Image.Image):
        raise TypeError(f"{what}: expected a PIL image, got {type(image).__name__}")
    if image.width < 8 or image.height < 8:
        raise ValueError(f"{what}: image is {image.width}x{image.height}; at least 8x8 needed")
    return image if image.mode == "RGB" else image.convert("RGB")


def _style_name(style: str) -> str:
    if not isinstance(style, str):
        raise ValueError(f"style: expected a style name, got {style!r}")
    key = style.strip().lower()
    if key in STYLES or key in ("none", "photo"):
        return key
    if key.replace("-", " ") in _STYLE_ALIASES:
        return _STYLE_ALIASES[key.replace("-", " ")]
    raise ValueError(f"style: unknown style {style!r} (known: {_known(STYLES)}, or none)")


def apply_style(image: Image.Image, style: str, seed: int = 0) -> Image.Image:
    """Restyle any picture with one of the procedural styles (APEx's EditImageStyle).

    Args:
        image: Any PIL image (converted to RGB).
        style: A key of `vocab.STYLES` ("pencil_sketch"), its phrase ("pencil sketch"), or
            "none" (an unchanged copy).
        seed: Drives the style's random choices (paper and grain offsets...).

    Returns:
        A new RGB image of the same size.

    Raises:
        ValueError: Unknown style, or an image smaller than 8×8.

    """
    name = _style_name(style)
    im = _as_rgb(image, "apply_style")
    if name in ("none", "photo"):
        return im.copy()
    return STYLERS[name](im, random.Random(f"{seed}:style"))


def apply_weather(image: Image.Image, weather: str, seed: int = 0) -> Image.Image:
    """Lay a weather effect over any picture (APEx's EditImageWeather).

    Args:
        image: Any PIL image (converted to RGB).
        weather: A key of `vocab.WEATHERS` (snow, rain, fog, night, sunny, sandstorm).
        seed: Drives the effect's random choices (where flakes and streaks fall...).

    Returns:
        A new RGB image of the same size.

    Raises:
        ValueError: Unknown weather, or an image smaller than 8×8.

    """
    key = weather.strip().lower() if isinstance(weather, str) else weather
    name = _choice(key, WEATHERS, "weather")
    return WEATHER_FNS[name](_as_rgb(image, "apply_weather"), random.Random(f"{seed}:weather"))


def glyph_image(class_name: str, color: str | tuple[int, int, int], size: int) -> Image.Image:
    """One glyph as an RGBA picture (transparent around it, halo included), for pasting.

    Serves APEx's PasteGeneratedObjectAtRandomPosition.

    Args:
        class_name: A glyph class of `vocab.GLYPHS` or a shape of `vocab.SHAPES`.
        color: A color name of `vocab.COLORS` or an (r, g, b) tuple.
        size: Side of the square picture in px; the glyph's longer side fills it.

    Returns:
        An RGBA image ``size`` × ``size``.

    Raises:
        KeyError: Unknown class.
        ValueError: Bad color or size.

    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 4:
        raise ValueError(f"size: expected an int >= 4, got {size!r}")
    rgb = _rgb(color, "color")
    sprite = _class_sprite(class_name)
    bands = sprite.bands
    scale = size / max(bands.size)
    w, h = max(1, round(bands.width * scale)), max(1, round(bands.height * scale))
    sized = bands.resize((w, h), Image.Resampling.BILINEAR)
    if scale > 1.25:
        sized = sized.point(_SHARPEN)
    halo, fill, detail = sized.split()
    layer = Image.new("RGB", (w, h), halo_color(rgb))
    layer.paste(rgb, (0, 0, w, h), fill)
    if sprite.detail:
        layer.paste(shade_color(rgb), (0, 0, w, h), detail)
    layer.putalpha(ImageChops.lighter(halo, fill))
    out = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    out.paste(layer, ((size - w) // 2, (size - h) // 2))
    return out


def text_extent(word: str, r: float) -> tuple[float, float]:
    """Width and height of `word` drawn with half cap height `r`, halo included.

    Both are fractions of the image side, like ``r``: a layout keeps a text object inside the
    picture with ``x ± width / 2`` and ``y ± height / 2`` in [0, 1] (long words at a large
    ``r`` are wider than the image).

    Raises:
        ValueError: `word` is empty or too long, or `r` is not positive.

    """
    sprite = _sprite("text", word, "word")
    if isinstance(r, bool) or not isinstance(r, int | float) or not r > 0:
        raise ValueError(f"r: expected a positive number, got {r!r}")
    scale = r / sprite.half
    return sprite.bands.width * scale, sprite.bands.height * scale


def drawable_classes() -> dict[str, str]:
    """Every class `render_class_image` draws → its group ("shape" for geometric shapes)."""
    return {**GROUP_OF, **dict.fromkeys(SHAPES, "shape")}


def _class_kind(class_name: str) -> tuple[str, str]:
    key = class_name.strip().lower() if isinstance(class_name, str) else class_name
    if key in GROUP_OF:
        return "glyph", str(key)
    if key in SHAPES:
        return "shape", str(key)
    raise KeyError(
        f"the procedural renderer cannot draw {class_name!r}: it knows the "
        f"{len(GROUP_OF) + len(SHAPES)} classes of procedural.drawable_classes(); use the "
        "diffusion renderer (lmmprobe.synth.diffusion) for other classes"
    )


def _class_sprite(class_name: str) -> _masks.Sprite:
    kind, name = _class_kind(class_name)
    return _masks.glyph_masks(name) if kind == "glyph" else _masks.shape_masks(name)


def render_class_image(
    class_name: str,
    *,
    image_type: str = "photo",
    size: int = 512,
    seed: int = 0,
    color: str | None = None,
    background: str | None = None,
) -> Image.Image:
    """One picture of a class (APEx's TextToImageGeneration, procedurally).

    Args:
        class_name: A glyph class or a shape (see `drawable_classes`).
        image_type: "photo" (no filter) or a style, by key or phrase ("pencil sketch").
        size: Side of the square image in px.
        seed: Drives the color and background when not given, and the rendering.
        color: A color name of `vocab.COLORS`; drawn from the seed when None.
        background: A key of `vocab.BACKGROUNDS`; drawn from the seed when None.

    Returns:
        An RGB image ``size`` × ``size`` with the object large in the middle.

    Raises:
        KeyError: The class is not one the procedural renderer can draw.
        ValueError: Unknown image type, color or background.

    """
    kind, name = _class_kind(class_name)
    style = _style_name(image_type)
    rng = random.Random(f"{seed}:class:{name}")
    color = color if color is not None else rng.choice(sorted(COLORS))
    background = background if background is not None else rng.choice(sorted(BACKGROUNDS))
    recipe = {
        "size": size,
        "seed": rng.randrange(2**31),
        "background": background,
        "style": "none" if style == "photo" else style,
        "objects": [
            {
                "kind": kind,
                "name": name,
                "color": color,
                "x": round(0.5 + rng.uniform(-0.04, 0.04), 4),
                "y": round(0.5 + rng.uniform(-0.04, 0.04), 4),
                "r": round(rng.uniform(0.3, 0.38), 4),
            }
        ],
    }
    return render(recipe)
