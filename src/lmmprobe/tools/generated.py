"""APEx's transforms that need generated content: style and weather edits, pasted objects, mixes.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"), with its tool names, arguments and defaults:
``EditImageStyle(style)``, ``EditImageWeather(weather)``,
``PasteGeneratedObjectAtRandomPosition(class_name, size, repeat)``, ``ApplyCutMix(alpha=1.0)``
and ``ApplyMixUp(alpha=0.7)``. APEx makes the extra content with SDXL-Turbo; here it comes from
lmmprobe's renderers through the active `SelectContext`
(`lmmprobe.tools.select.active_context`, set by `lmmprobe.tools.compose.compose`): the
procedural renderer by default, a diffusion renderer when one is configured.

- Style and weather edits: APEx regenerates the image's class in the style ("a {style} of a
  {class}") or weather. With the procedural renderer the edit is the renderer's own style or
  weather pass (`lmmprobe.imaging.procedural.apply_style` / `apply_weather`) over the current
  image, which keeps earlier transforms; with a diffusion renderer and a known class (inside
  `compose`) the class is re-rendered with the style or weather in its recipe, as APEx does.
  Style and weather names are those of `lmmprobe.imaging.vocab` (``STYLES``, ``WEATHERS``);
  unknown names are rejected with the known ones listed.
- The second image of CutMix and MixUp is a generated image of a random class other than the
  current image's (when known), seeded by the call, resized and center-cropped to the image.
  APEx draws it from its dataset instead.
- CutMix (Yun et al., ICCV 2019): λ ~ Beta(alpha, alpha) and a box of (1 − λ) of the area,
  with the image's aspect ratio, is replaced by the second image. The box is placed wholly
  inside the image, so the replaced share is 1 − λ up to pixel rounding (the original CutMix
  and APEx clip a box centred anywhere, which shrinks boxes at the border).
- MixUp: as in APEx, alpha is the mixing weight, not a Beta parameter:
  ``out = alpha · image + (1 − alpha) · second``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Annotated, Any

import numpy as np
from PIL import Image
from pydantic import AfterValidator, Field

from lmmprobe.imaging import procedural, vocab
from lmmprobe.tools.registry import ToolCallError, tool
from lmmprobe.tools.retrieval import normalize_class
from lmmprobe.tools.select import (
    ClassName,
    SelectContext,
    _resolve_drawable,
    current_context,
    current_subject,
    drawable_classes,
    fit_to,
    generate_image,
    is_random,
    random_class,
)

__all__ = [
    "cutmix",
    "cutmix_box",
    "mixup",
    "second_image",
    "style_names",
    "weather_names",
]


def style_names() -> list[str]:
    """The style names EditImageStyle accepts (`lmmprobe.imaging.vocab.STYLES`)."""
    return sorted(vocab.STYLES)


def weather_names() -> list[str]:
    """The weather names EditImageWeather accepts (`lmmprobe.imaging.vocab.WEATHERS`)."""
    return sorted(vocab.WEATHERS)


def _phrases(table: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, entry in getattr(vocab, table).items():
        phrase = getattr(entry, "phrase", entry)  # STYLES holds StyleInfo, WEATHERS strings
        if isinstance(phrase, str):
            out[normalize_class(phrase)] = name
    return out


def _known(what: str, names: Callable[[], list[str]], table: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        known = names()
        # A name matches with "_" read as a space and in any case; a style's phrase ("pencil
        # sketch", "oil painting") is accepted for its name too.
        by_normal = {**_phrases(table), **{normalize_class(n): n for n in known}}
        found = by_normal.get(normalize_class(value))
        if found is None:
            raise ValueError(f"unknown {what} {value!r}; known {what}s: {', '.join(known)}")
        return found

    return check


def _enum(names: Callable[[], list[str]]) -> Callable[[dict[str, Any]], None]:
    # Filled in when the schema is built, from the vocabulary's current names.
    def extra(schema: dict[str, Any]) -> None:
        schema["enum"] = names()

    return extra


StyleName = Annotated[
    str,
    Field(max_length=40, description="A style name.", json_schema_extra=_enum(style_names)),
    AfterValidator(_known("style", style_names, "STYLES")),
]
WeatherName = Annotated[
    str,
    Field(max_length=40, description="A weather name.", json_schema_extra=_enum(weather_names)),
    AfterValidator(_known("weather", weather_names, "WEATHERS")),
]


def second_image(rng: random.Random, size: tuple[int, int]) -> tuple[Image.Image, str]:
    """A generated image of a random class other than the current one, fitted to `size`.

    Returns:
        The image and its class.

    """
    context = current_context()
    made = generate_image(context, "random", seed=rng.randrange(2**31), exclude=current_subject())
    return fit_to(made.image, size), made.class_name


def _regenerate(context: SelectContext, key: str, value: str, rng: random.Random) -> Image.Image:
    subject = current_subject()
    assert context.renderer is not None and subject is not None  # checked by the caller
    recipe: dict[str, Any] = {
        "size": context.size,
        "seed": rng.randrange(2**31),
        "background": None,
        "style": "photo",
        "objects": [
            {"kind": "glyph", "name": subject, "color": None, "x": 0.5, "y": 0.5, "r": 0.3}
        ],
    }
    recipe[key] = value
    return context.renderer.render([recipe])[0]


def _same_size(out: Image.Image, like: Image.Image) -> Image.Image:
    return out.convert("RGB") if out.size == like.size else fit_to(out, like.size)


@tool("EditImageStyle", "Redraw the image in a visual style (cartoon, sketch, ...).")
def edit_image_style(image: Image.Image, rng: random.Random, style: StyleName) -> Image.Image:
    """Render the image in `style` (one of the renderer vocabulary's styles).

    With the procedural renderer this is its style pass over the image (e.g. ``grayscale``
    makes R = G = B); with a diffusion renderer inside a composition, the image's class is
    re-rendered in the style. The size is kept.
    """
    context = current_context()
    if context.renderer is not None and current_subject() is not None:
        return _same_size(_regenerate(context, "style", style, rng), image)
    out = procedural.apply_style(image, style, seed=rng.randrange(2**31))
    return _same_size(out, image)


@tool("EditImageWeather", "Show the scene in a weather (snow, rain, fog, ...).")
def edit_image_weather(image: Image.Image, rng: random.Random, weather: WeatherName) -> Image.Image:
    """Add `weather` (one of the renderer vocabulary's weathers) to the image.

    With the procedural renderer this is its weather pass over the image (snowflakes, rain
    streaks, fog); with a diffusion renderer inside a composition, the image's class is
    re-rendered in that weather. The size is kept.
    """
    context = current_context()
    if context.renderer is not None and current_subject() is not None:
        return _same_size(_regenerate(context, "weather", weather, rng), image)
    out = procedural.apply_weather(image, weather, seed=rng.randrange(2**31))
    return _same_size(out, image)


def _object_patch(
    class_name: str, side: int, rng: random.Random, context: SelectContext
) -> tuple[Image.Image, str]:
    """An RGBA picture of the class, `side` pixels square, and the class drawn."""
    if is_random(class_name):
        name = random_class(rng, drawable_classes(), class_name, exclude=current_subject())
    elif context.renderer is not None:
        try:
            name, _ = _resolve_drawable(class_name, context)
        except ToolCallError:  # not in the glyph vocabulary: the diffusion renderer draws it
            made = generate_image(context, class_name, seed=rng.randrange(2**31))
            return fit_to(made.image, (side, side)).convert("RGBA"), made.class_name
    else:
        name, _ = _resolve_drawable(class_name, context)
    colors = sorted(vocab.COLORS)
    color = colors[rng.randrange(len(colors))]
    glyph = procedural.glyph_image(name, color, side).convert("RGBA")
    return (glyph if glyph.size == (side, side) else glyph.resize((side, side))), name


def _overlap(a: tuple[int, int], b: tuple[int, int], side: int) -> float:
    dx = max(0, side - abs(a[0] - b[0]))
    dy = max(0, side - abs(a[1] - b[1]))
    return dx * dy / (side * side)


@tool(
    "PasteGeneratedObjectAtRandomPosition",
    "Paste copies of a generated object (a class) at random positions.",
)
def paste_generated_object(
    image: Image.Image,
    rng: random.Random,
    class_name: ClassName,
    size: Annotated[
        float, Field(gt=0, le=1, description="Object side as a fraction of the shorter side.")
    ] = 0.3,
    repeat: Annotated[int, Field(ge=1, le=20, description="How many copies to paste.")] = 1,
) -> Image.Image:
    """Paste `repeat` identical copies of an object of `class_name` at seeded positions.

    The object is the procedural renderer's drawing of the class (a glyph with a transparent
    background, in one seeded color), `size` × the shorter image side square; a name the
    vocabulary lacks is drawn as its closest class, or by a configured diffusion renderer as an
    opaque square. ``random`` pastes a random class other than the image's. Positions avoid
    overlapping earlier copies by more than a quarter where the image leaves room.
    """
    context = current_context()
    side = max(4, round(size * min(image.size)))
    patch, _ = _object_patch(class_name, side, rng, context)
    out = image.copy()
    w, h = image.size
    placed: list[tuple[int, int]] = []
    for _ in range(repeat):
        spot = (0, 0)
        for _attempt in range(30):  # a few tries for a free spot, then accept an overlap
            spot = (rng.randint(0, max(0, w - side)), rng.randint(0, max(0, h - side)))
            if all(_overlap(spot, p, side) <= 0.25 for p in placed):
                break
        placed.append(spot)
        out.paste(patch, spot, patch)
    return out


def cutmix_box(
    rng: random.Random, size: tuple[int, int], alpha: float
) -> tuple[tuple[int, int, int, int], float]:
    """Draw CutMix's box: λ ~ Beta(alpha, alpha), a box of (1 − λ) of the area inside the image.

    Returns:
        The box ``(left, top, right, bottom)`` and λ, the share of the image outside it
        (recomputed from the rounded box).

    """
    w, h = size
    lam = rng.betavariate(alpha, alpha)
    ratio = math.sqrt(1.0 - lam)
    bw, bh = round(w * ratio), round(h * ratio)
    left, top = rng.randint(0, w - bw), rng.randint(0, h - bh)
    return (left, top, left + bw, top + bh), 1.0 - (bw * bh) / (w * h)


def cutmix(
    first: Image.Image, second: Image.Image, rng: random.Random, alpha: float
) -> tuple[Image.Image, float]:
    """Paste a `cutmix_box` region of `second` (same size) into `first`.

    Returns:
        The mixed image and λ, the share of `first` kept.

    """
    if first.size != second.size:
        raise ValueError(f"cutmix needs images of one size, got {first.size} and {second.size}")
    box, lam = cutmix_box(rng, first.size, alpha)
    out = first.convert("RGB")
    out.paste(second.convert("RGB").crop(box), box[:2])
    return out, lam


def mixup(first: Image.Image, second: Image.Image, alpha: float) -> Image.Image:
    """``alpha · first + (1 − alpha) · second`` per pixel, rounded (images of one size)."""
    if first.size != second.size:
        raise ValueError(f"mixup needs images of one size, got {first.size} and {second.size}")
    a = np.asarray(first.convert("RGB"), dtype=np.float64)
    b = np.asarray(second.convert("RGB"), dtype=np.float64)
    return Image.fromarray(np.clip(np.rint(alpha * a + (1 - alpha) * b), 0, 255).astype(np.uint8))


@tool("ApplyCutMix", "Replace a random box of the image with a region of another image.")
def apply_cutmix(
    image: Image.Image,
    rng: random.Random,
    alpha: Annotated[
        float, Field(gt=0, le=100, description="Beta(alpha, alpha) parameter of λ.")
    ] = 1.0,
) -> Image.Image:
    """CutMix with a generated second image of a random other class.

    λ ~ Beta(alpha, alpha); a box of (1 − λ) of the image's area, with the image's aspect ratio
    and wholly inside it, shows the same region of the second image. The rest is unchanged.
    """
    other, _ = second_image(rng, image.size)
    out, _ = cutmix(image, other, rng, alpha)
    return out


@tool("ApplyMixUp", "Blend the image with another image (MixUp).")
def apply_mixup(
    image: Image.Image,
    rng: random.Random,
    alpha: Annotated[
        float, Field(ge=0, le=1, description="Weight of the original image (APEx: 0.7).")
    ] = 0.7,
) -> Image.Image:
    """MixUp with a generated second image of a random other class.

    Every pixel becomes ``alpha · image + (1 − alpha) · second`` (1 keeps the image, 0 gives the
    second image). The second image depends on the seed only, not on `alpha`.
    """
    other, _ = second_image(rng, image.size)
    return mixup(image, other, alpha)
