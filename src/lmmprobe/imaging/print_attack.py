"""Dysca's print attack: write a wrong answer option onto the image.

Origin: Dysca (Zhang et al., "Dysca: A Dynamic and Scalable Benchmark for Evaluating Perception
Ability of LVLMs"), print-attack scenario, after the typographic attacks on CLIP. The text of a
wrong option is printed over the image with parameters drawn from Dysca's grid: font size in
{112, 128, 144, 160} px on 1024² images (scaled here by ``min(width, height) / 1024``), one of
nine colors, opacity in {40, 60, 80, 100} %, angle in {0, ±15, ±25, ±35}°, centered on one cell
of a 5 × 5 grid over the image.

The colors (`lmmprobe.imaging.colors.PRINT_COLORS`) are Dysca's eight (red, orange, yellow,
green, blue, purple, white, black) as CSS names them; the ninth, pink, is our choice. Text is drawn with DejaVu Sans Bold when the file is present
(Debian ``fonts-dejavu-core``), else with Pillow's built-in font, so drawing never fails for lack
of a font file; which font was used is not part of the recorded parameters.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from lmmprobe.imaging.colors import PRINT_COLORS

__all__ = [
    "ANGLES",
    "FONT_SIZES_1024",
    "GRID",
    "OPACITIES",
    "PrintAttack",
    "apply_print_attack",
    "cell_box",
    "sample_print_attack",
    "text_font",
]

FONT_SIZES_1024: tuple[int, ...] = (112, 128, 144, 160)
"""Dysca's font sizes in pixels, for a 1024 × 1024 image."""

OPACITIES: tuple[int, ...] = (40, 60, 80, 100)
"""Text opacity in percent."""

ANGLES: tuple[int, ...] = (0, 15, -15, 25, -25, 35, -35)
"""Text rotation in degrees, counter-clockwise positive."""

GRID: int = 5
"""The image is split into GRID × GRID cells; the text is centered on one of them."""

_FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "DejaVuSans-Bold.ttf",  # Pillow also looks the bare name up in the system font folders
)


@dataclass(frozen=True)
class PrintAttack:
    """One print attack's parameters, enough to redraw it exactly.

    Attributes:
        text: The text written on the image (a wrong option).
        font_px: Font size in pixels, already scaled to the image.
        color: Color name, a key of `PRINT_COLORS`.
        rgb: The color's RGB triple.
        opacity: Opacity in percent (one of `OPACITIES`).
        angle: Rotation in degrees, counter-clockwise positive (one of `ANGLES`).
        cell: ``(row, col)`` of the grid cell the text is centered on, each in ``0..GRID-1``.

    """

    text: str
    font_px: int
    color: str
    rgb: tuple[int, int, int]
    opacity: int
    angle: int
    cell: tuple[int, int]

    def __post_init__(self) -> None:
        if not self.text:
            raise ValueError("print attack text must not be empty")
        if self.font_px < 1:
            raise ValueError(f"font_px must be >= 1, got {self.font_px}")
        if not 0 <= self.opacity <= 100:
            raise ValueError(f"opacity must be a percentage in 0..100, got {self.opacity}")
        row, col = self.cell
        if not (0 <= row < GRID and 0 <= col < GRID):
            raise ValueError(f"cell must be (row, col) in 0..{GRID - 1}, got {self.cell}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready parameters, for recording with each sample."""
        return {
            "text": self.text,
            "font_px": self.font_px,
            "color": self.color,
            "rgb": list(self.rgb),
            "opacity": self.opacity,
            "angle": self.angle,
            "cell": list(self.cell),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrintAttack:
        """Rebuild an attack from `to_dict` output."""
        r, g, b = data["rgb"]
        row, col = data["cell"]
        return cls(
            text=str(data["text"]),
            font_px=int(data["font_px"]),
            color=str(data["color"]),
            rgb=(int(r), int(g), int(b)),
            opacity=int(data["opacity"]),
            angle=int(data["angle"]),
            cell=(int(row), int(col)),
        )


def sample_print_attack(rng: random.Random, text: str, image_size: tuple[int, int]) -> PrintAttack:
    """Draw print-attack parameters from Dysca's grid.

    Args:
        rng: The caller's seeded generator; the draws consume it in a fixed order.
        text: The wrong option to write.
        image_size: ``(width, height)`` of the image it will be drawn on.

    Returns:
        The sampled parameters.

    Raises:
        ValueError: For empty text or a non-positive image size.

    """
    width, height = image_size
    if width < 1 or height < 1:
        raise ValueError(f"image_size must be positive (width, height), got {image_size}")
    base = rng.choice(FONT_SIZES_1024)
    color = rng.choice(sorted(PRINT_COLORS))
    opacity = rng.choice(OPACITIES)
    angle = rng.choice(ANGLES)
    cell = (rng.randrange(GRID), rng.randrange(GRID))
    font_px = max(1, round(base * min(width, height) / 1024))
    return PrintAttack(
        text=text,
        font_px=font_px,
        color=color,
        rgb=PRINT_COLORS[color],
        opacity=opacity,
        angle=angle,
        cell=cell,
    )


def cell_box(cell: tuple[int, int], image_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The pixel box ``(left, top, right, bottom)`` of a grid cell, right and bottom exclusive."""
    row, col = cell
    width, height = image_size
    return (
        col * width // GRID,
        row * height // GRID,
        (col + 1) * width // GRID,
        (row + 1) * height // GRID,
    )


def apply_print_attack(image: Image.Image, attack: PrintAttack) -> Image.Image:
    """Write the attack's text onto a copy of the image.

    The text is rendered into a mask, rotated about its center, colored, scaled by the opacity
    and alpha-composited so that it is centered on the chosen grid cell; text that runs past the
    image edge is clipped.

    Args:
        image: The clean image; converted to RGB if it is in another mode.
        attack: Parameters, e.g. from `sample_print_attack`.

    Returns:
        A new RGB image of the same size.

    """
    base = image.convert("RGBA")
    font = text_font(attack.font_px)

    box = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), attack.text, font=font)
    # Pillow types the box as floats; widen to whole pixels so no glyph edge is cut.
    left, top = math.floor(box[0]), math.floor(box[1])
    right, bottom = math.ceil(box[2]), math.ceil(box[3])
    pad = max(2, attack.font_px // 8)  # room so antialiased edges survive rotation
    mask = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
    ImageDraw.Draw(mask).text((pad - left, pad - top), attack.text, font=font, fill=255)
    mask = mask.rotate(attack.angle, resample=Image.Resampling.BICUBIC, expand=True)
    scale = attack.opacity / 100.0
    mask = mask.point(lambda v: round(v * scale))

    text_layer = Image.new("RGBA", mask.size, (*attack.rgb, 0))
    text_layer.putalpha(mask)

    cl, ct, cr, cb = cell_box(attack.cell, base.size)
    x = (cl + cr) // 2 - mask.width // 2
    y = (ct + cb) // 2 - mask.height // 2
    overlay = Image.new("RGBA", base.size, (0, 0, 0, 0))
    # paste clips at the edges and accepts negative offsets, unlike alpha_composite's dest.
    overlay.paste(text_layer, (x, y))
    return Image.alpha_composite(base, overlay).convert("RGB")


@functools.lru_cache(maxsize=32)
def text_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The print attack's font at `size` px: DejaVu Sans Bold, else Pillow's default font."""
    for path in _FONT_FILES:
        if path.startswith("/") and not Path(path).is_file():
            continue
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    try:
        # Pillow >= 10.1 ships a scalable default font when FreeType is available.
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # pragma: no cover - old Pillow or no FreeType
        return ImageFont.load_default()
