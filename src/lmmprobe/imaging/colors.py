"""Named colours: Dysca's eight, as objects are filled and as the print attack writes them.

Origin: Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating
Perception Ability of LVLMs") names eight colours for foreground attributes: red, orange,
yellow, green, blue, purple, white and black. This module is the one place those names live.

- `COLORS` fills drawn objects (the demo's shapes, the procedural renderer's glyphs, shapes and
  words). The shades are a little softer than the pure named colours, so a halo, an inner line
  and a corruption still read against them; the renderers' versions pin these values.
- `PRINT_COLORS` is the print attack's text palette: the same names, plus pink, resolved as the
  CSS named colours (Pillow's `ImageColor`), where Dysca's "pink" is CSS ``hotpink``.
"""

from __future__ import annotations

from typing import Final

from PIL import ImageColor

__all__ = ["COLORS", "COLOR_NAMES", "PRINT_COLORS"]

RGB = tuple[int, int, int]

COLORS: Final[dict[str, RGB]] = {
    "red": (220, 30, 30),
    "orange": (245, 140, 20),
    "yellow": (245, 225, 30),
    "green": (30, 160, 50),
    "blue": (30, 70, 220),
    "purple": (130, 40, 170),
    "white": (250, 250, 250),
    "black": (10, 10, 10),
}
"""Dysca's eight colours → the RGB objects are filled with."""

COLOR_NAMES: Final[tuple[str, ...]] = tuple(COLORS)
"""The eight colour names, in Dysca's order."""

# The print palette's name → CSS colour name, for the one name whose CSS colour differs.
_CSS_NAME: Final[dict[str, str]] = {"pink": "hotpink"}


def _css(name: str) -> RGB:
    r, g, b = ImageColor.getrgb(_CSS_NAME.get(name, name))[:3]
    return (r, g, b)


PRINT_COLORS: Final[dict[str, RGB]] = {name: _css(name) for name in (*COLOR_NAMES, "pink")}
"""The print attack's nine text colours: name → RGB (the CSS colour of the name)."""
