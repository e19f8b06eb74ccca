"""APEx's image transform tools (Conti et al.), with its names, arguments and defaults.

Each tool takes an RGB image and the call's seeded random source and returns a new image of the
same size. Where APEx names an argument without fixing its scale, the docstring says the scale
lmmprobe uses. Style and weather edits, pasting generated objects, CutMix and MixUp need a second
generated image and arrive with the synthetic renderer.
"""

from __future__ import annotations

import io
import math
import random
from typing import Annotated, Literal

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageEnhance, ImageFilter
from pydantic import AfterValidator, Field

from lmmprobe.imaging.corruptions import CORRUPTIONS, corrupt
from lmmprobe.imaging.print_attack import apply_print_attack, sample_print_attack, text_font
from lmmprobe.imaging.shapes import SHAPES, shape_polygon
from lmmprobe.tools.registry import tool


def _color(value: str) -> str:
    ImageColor.getrgb(value)  # raises ValueError for an unknown name: rejected by the schema
    return value


Color = Annotated[str, AfterValidator(_color), Field(description="A color name or #rrggbb.")]


@tool("Identity", "Return the image unchanged (the control condition).")
def identity(image: Image.Image, rng: random.Random) -> Image.Image:
    """Return the image unchanged."""
    return image.copy()


@tool("RotateImage", "Rotate the image by an angle in degrees (counter-clockwise).")
def rotate_image(
    image: Image.Image,
    rng: random.Random,
    angle: Annotated[
        float, Field(ge=-360, le=360, description="Degrees, counter-clockwise.")
    ] = 90.0,
) -> Image.Image:
    """Rotate about the centre; corners left uncovered are black, the size is kept."""
    return image.rotate(angle, resample=Image.Resampling.BILINEAR, expand=False)


@tool("FlipImage", "Mirror the image horizontally or vertically.")
def flip_image(
    image: Image.Image,
    rng: random.Random,
    direction: Literal["horizontal", "vertical"] = "horizontal",
) -> Image.Image:
    """Mirror left-right (horizontal) or top-bottom (vertical)."""
    op = (
        Image.Transpose.FLIP_LEFT_RIGHT
        if direction == "horizontal"
        else Image.Transpose.FLIP_TOP_BOTTOM
    )
    return image.transpose(op)


@tool("ChangeBrightness", "Scale brightness (1 keeps it, <1 darker, >1 brighter).")
def change_brightness(
    image: Image.Image,
    rng: random.Random,
    brightness_factor: Annotated[float, Field(ge=0, le=10)],
) -> Image.Image:
    """Multiply brightness by `brightness_factor` (0 gives black)."""
    return ImageEnhance.Brightness(image).enhance(brightness_factor)


@tool("ChangeContrast", "Scale contrast (1 keeps it, 0 gives flat gray).")
def change_contrast(
    image: Image.Image,
    rng: random.Random,
    contrast_factor: Annotated[float, Field(ge=0, le=10)],
) -> Image.Image:
    """Multiply contrast around the mean gray by `contrast_factor`."""
    return ImageEnhance.Contrast(image).enhance(contrast_factor)


@tool("AddGaussianNoise", "Add seeded Gaussian pixel noise.")
def add_gaussian_noise(
    image: Image.Image,
    rng: random.Random,
    variance_factor: Annotated[
        float, Field(ge=0, le=10, description="Noise std is 10 × this, on the 0-255 scale.")
    ] = 1.4,
) -> Image.Image:
    """Add N(0, (10·variance_factor)²) to every channel of every pixel, clipped to 0-255."""
    gen = np.random.default_rng(rng.randrange(2**32))
    arr = np.asarray(image, dtype=np.float64)
    noisy = arr + gen.normal(0.0, 10.0 * variance_factor, arr.shape)
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


def _jpeg(image: Image.Image, quality: int) -> Image.Image:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        return im.convert("RGB")


@tool("AddJPEGCompression", "JPEG-compress until the PSNR to the original reaches a target.")
def add_jpeg_compression(
    image: Image.Image,
    rng: random.Random,
    target_psnr: Annotated[float, Field(ge=10, le=60, description="dB; lower is harsher.")] = 26.0,
) -> Image.Image:
    """Re-encode as JPEG at the quality whose PSNR to the original is closest to `target_psnr`.

    When no quality reaches the target (pure noise stays below ~13 dB), the closest one is used.
    """
    ref = np.asarray(image)
    lo, hi = 1, 95
    best = _jpeg(image, lo)
    best_gap = abs(_psnr(ref, np.asarray(best)) - target_psnr)
    while lo <= hi:  # PSNR grows with quality: bisect on it
        q = (lo + hi) // 2
        out = _jpeg(image, q)
        psnr = _psnr(ref, np.asarray(out))
        if abs(psnr - target_psnr) < best_gap:
            best, best_gap = out, abs(psnr - target_psnr)
        if psnr < target_psnr:
            lo = q + 1
        else:
            hi = q - 1
    return best


@tool("CropRandomShuffleAndRecompose", "Cut the image into a grid and shuffle the tiles.")
def crop_random_shuffle_and_recompose(
    image: Image.Image,
    rng: random.Random,
    grid_size: Annotated[int, Field(ge=1, le=8)] = 2,
) -> Image.Image:
    """Split into grid_size × grid_size tiles and put them back in a seeded random order."""
    w, h = image.size
    tw, th = w // grid_size, h // grid_size
    cells = [(c * tw, r * th) for r in range(grid_size) for c in range(grid_size)]
    order = list(cells)
    rng.shuffle(order)
    out = image.copy()
    for (dx, dy), (sx, sy) in zip(cells, order, strict=True):
        out.paste(image.crop((sx, sy, sx + tw, sy + th)), (dx, dy))
    return out


@tool("DefocusBlurImage", "Blur the image as if out of focus.")
def defocus_blur_image(
    image: Image.Image,
    rng: random.Random,
    blur_factor: Annotated[
        float, Field(ge=0, le=100, description="Blur radius in pixels at 256 px image size.")
    ] = 10.0,
) -> Image.Image:
    """Gaussian blur whose radius scales with the image: blur_factor pixels per 256 px side."""
    radius = blur_factor * min(image.size) / 256.0
    return image.filter(ImageFilter.GaussianBlur(radius=radius))


@tool("OverlayColor", "Blend a solid color over the whole image.")
def overlay_color(
    image: Image.Image,
    rng: random.Random,
    color: Color = "red",
    opacity: Annotated[float, Field(ge=0, le=1)] = 0.5,
) -> Image.Image:
    """Alpha-blend `color` over the image at `opacity`."""
    layer = Image.new("RGB", image.size, ImageColor.getrgb(color)[:3])
    return Image.blend(image, layer, opacity)


def _spot(rng: random.Random, size: tuple[int, int], extent: int) -> tuple[int, int]:
    w, h = size
    return rng.randint(0, max(0, w - extent)), rng.randint(0, max(0, h - extent))


@tool("PasteGeometricShapeAtRandomPosition", "Draw geometric shapes at random positions.")
def paste_geometric_shape(
    image: Image.Image,
    rng: random.Random,
    shape: Literal[SHAPES] = "circle",  # type: ignore[valid-type]
    size: Annotated[float, Field(gt=0, le=1, description="Side as a fraction of the image.")] = 0.2,
    color: Color = "red",
    fill: bool = True,
    repeat: Annotated[int, Field(ge=1, le=20)] = 1,
) -> Image.Image:
    """Draw `repeat` shapes of `size` (fraction of the shorter side) at seeded positions."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    extent = max(2, int(size * min(image.size)))
    rgb = ImageColor.getrgb(color)[:3]
    for _ in range(repeat):
        x, y = _spot(rng, image.size, extent)
        r = extent / 2
        kw = {"fill": rgb} if fill else {"outline": rgb, "width": max(1, extent // 12)}
        if shape == "circle":
            draw.ellipse((x, y, x + extent, y + extent), **kw)
        else:
            draw.polygon(shape_polygon(shape, x + r, y + r, r), **kw)
    return out


@tool("PasteTextAtRandomPosition", "Write text at random positions.")
def paste_text(
    image: Image.Image,
    rng: random.Random,
    text: Annotated[str, Field(min_length=1, max_length=100)] = "text",
    font_size: Annotated[int, Field(ge=6, le=400)] = 32,
    font_color: Color = "black",
    repeat: Annotated[int, Field(ge=1, le=20)] = 1,
) -> Image.Image:
    """Draw `text` `repeat` times at seeded positions (clipped at the edges)."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    font = text_font(font_size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    for _ in range(repeat):
        x, y = _spot(rng, image.size, int(max(right - left, bottom - top)))
        draw.text((x - left, y - top), text, font=font, fill=ImageColor.getrgb(font_color)[:3])
    return out


@tool("ZoomAtRandomPosition", "Zoom into a random region, keeping the image size.")
def zoom_at_random_position(
    image: Image.Image,
    rng: random.Random,
    zoom_factor: Annotated[float, Field(ge=1, le=10)] = 2.0,
) -> Image.Image:
    """Crop a seeded region 1/zoom_factor of each side and scale it back to full size."""
    w, h = image.size
    cw, ch = max(1, round(w / zoom_factor)), max(1, round(h / zoom_factor))
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    return image.crop((x, y, x + cw, y + ch)).resize((w, h), Image.Resampling.BILINEAR)


@tool("ApplyCorruption", "Apply one of Dysca's 11 corruptions at a severity from 1 to 5.")
def apply_corruption(
    image: Image.Image,
    rng: random.Random,
    kind: Literal[CORRUPTIONS],  # type: ignore[valid-type]
    severity: Annotated[int, Field(ge=1, le=5)] = 3,
) -> Image.Image:
    """Dysca's corruption `kind` (severity 3 = Dysca's setting), seeded by the call."""
    return corrupt(image, kind, severity=severity, seed=rng.randrange(2**31))


@tool("PrintAttack", "Write text on the image with Dysca's print-attack parameters.")
def print_attack(
    image: Image.Image,
    rng: random.Random,
    text: Annotated[str, Field(min_length=1, max_length=60)],
) -> Image.Image:
    """Write `text` (typically a wrong answer) on the image.

    Font size, color, opacity, angle and grid cell are drawn from Dysca's grid, seeded by the call.
    """
    return apply_print_attack(image, sample_print_attack(rng, text, image.size))
