"""The demo renderer: a few filled shapes of one colour on a gray background.

Origin: written for lmmprobe (no external data, no license constraints). The built-in demo source
(`lmmprobe.data.demo`) asks about these pictures, and APEx's DrawShape tool draws the same shapes
onto other images. A recipe::

    {
        "size": 128,                  # side of the square image in px
        "bg": 130,                    # background gray level
        "color": "red",               # key of `lmmprobe.imaging.colors.COLORS`
        "shape": "star",              # one of `SHAPES`
        "spots": [[0.25, 0.25, 0.16]],  # (x, y, r) per shape, fractions of the side
        "scenario": {...},            # optional: a Dysca scenario (`lmmprobe.imaging.scenario`)
    }

Renderer ``demo-shapes``, version 1: recipes name this renderer, so the name, the version and the
drawing stay as they are (a recipe's content hash covers name and version, not pixels).
"""

from __future__ import annotations

import math
from typing import Any

from PIL import Image, ImageDraw

from lmmprobe.imaging.colors import COLORS
from lmmprobe.imaging.scenario import apply_scenario
from lmmprobe.schema import register_renderer

__all__ = ["RENDERER", "RENDERER_VERSION", "SHAPES", "render", "shape_polygon"]

RENDERER = "demo-shapes"
RENDERER_VERSION = "1"
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "star", "hexagon")
"""The shapes this renderer draws."""


def shape_polygon(shape: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    """Vertices of a named shape (not circle) of radius `r` centred at (cx, cy).

    Raises:
        ValueError: `shape` is a circle or not one of `SHAPES`.

    """
    if shape == "square":
        return [(cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
    if shape == "triangle":
        return [
            (cx + r * math.cos(a), cy + r * math.sin(a))
            for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)
        ]
    if shape == "diamond":
        return [(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)]
    if shape == "hexagon":
        return [
            (cx + r * math.cos(k * math.pi / 3), cy + r * math.sin(k * math.pi / 3))
            for k in range(6)
        ]
    if shape == "star":
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else r * 0.45
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
        return pts
    raise ValueError(f"unknown shape {shape!r}")


def render(recipe: dict[str, Any]) -> Image.Image:
    """Draw a demo image: `count` shapes of one kind and color on a gray background."""
    size = int(recipe["size"])
    bg = int(recipe["bg"])
    im = Image.new("RGB", (size, size), (bg, bg, bg))
    draw = ImageDraw.Draw(im)
    color = COLORS[recipe["color"]]
    for cx, cy, r in recipe["spots"]:
        x, y, rad = cx * size, cy * size, r * size
        if recipe["shape"] == "circle":
            draw.ellipse((x - rad, y - rad, x + rad, y + rad), fill=color)
        else:
            draw.polygon(shape_polygon(recipe["shape"], x, y, rad), fill=color)
    scenario = recipe.get("scenario")
    return apply_scenario(im, scenario) if scenario else im


register_renderer(RENDERER, RENDERER_VERSION, render)
