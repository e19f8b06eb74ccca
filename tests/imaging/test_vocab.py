"""The drawing vocabularies: sizes, invariants, and that every glyph draws well."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from PIL import Image, ImageDraw
from scipy import ndimage

from lmmprobe.imaging import _masks, colors, vocab
from lmmprobe.imaging.procedural import render

REQUIRED_GROUPS = {"animal", "food", "plant", "object", "vehicle"}
REQUIRED_BACKGROUNDS = {
    "solid", "gradient", "sky", "sunset", "grass", "water", "stripes", "checker", "dots",
    "noise", "brick", "sand", "night", "wood", "clouds",
}  # fmt: skip
REQUIRED_STYLES = {
    "pencil_sketch", "pixel_art", "grayscale", "sepia", "pop_art", "comic", "watercolor",
    "oil_painting", "neon", "halftone", "mosaic", "blueprint",
}  # fmt: skip
# Unicode blocks of people, body parts and smileys (the vocabulary avoids them).
PEOPLE_AND_FACES = (
    (0x1F385, 0x1F385), (0x1F3C2, 0x1F3C4), (0x1F3C7, 0x1F3C7), (0x1F3CA, 0x1F3CC),
    (0x1F442, 0x1F450), (0x1F466, 0x1F478), (0x1F47C, 0x1F47C), (0x1F481, 0x1F483),
    (0x1F486, 0x1F487), (0x1F574, 0x1F575), (0x1F600, 0x1F64F), (0x1F6B4, 0x1F6B6),
    (0x1F910, 0x1F92F), (0x1F970, 0x1F97A), (0x1F9B0, 0x1F9B9), (0x1F9D0, 0x1F9DF),
)  # fmt: skip
NAMES = sorted(vocab.COLORS)
PALETTE = np.array([vocab.COLORS[n] for n in NAMES], np.float32)


def nearest_color(pixels: np.ndarray) -> np.ndarray:
    """Index into NAMES of the Dysca color nearest to each RGB pixel (N, 3)."""
    d = ((pixels[:, None, :].astype(np.float32) - PALETTE[None]) ** 2).sum(-1)
    return np.asarray(d.argmin(1))


def test_colors_are_the_demo_colors() -> None:
    assert vocab.COLORS is colors.COLORS
    assert set(vocab.COLORS) == {
        "red",
        "orange",
        "yellow",
        "green",
        "blue",
        "purple",
        "white",
        "black",
    }


def test_glyph_groups_and_class_names() -> None:
    assert set(vocab.GLYPHS) >= REQUIRED_GROUPS
    assert sum(len(c) for c in vocab.GLYPHS.values()) >= 150
    names = [n for classes in vocab.GLYPHS.values() for n in classes]
    assert len(names) == len(set(names)), "class names must be unique across groups"
    for group, classes in vocab.GLYPHS.items():
        assert len(classes) >= 20, group
    for name in names:
        assert re.fullmatch(r"[a-z]+(?:[ -][a-z]+)*", name), name
        # A class named like a color or a shape would make questions ambiguous.
        assert name not in vocab.COLORS and name not in vocab.SHAPES, name
    assert {n: g for g, c in vocab.GLYPHS.items() for n in c} == vocab.GROUP_OF


def test_emojis_are_single_symbols_without_flags_or_people() -> None:
    for name, emoji in ((n, e) for c in vocab.GLYPHS.values() for n, e in c.items()):
        points = [ord(ch) for ch in emoji]
        assert len(points) == 1, f"{name}: one code point, no sequences"
        assert not 0x1F1E6 <= points[0] <= 0x1F1FF, f"{name}: regional indicator (flag)"
        assert not any(lo <= points[0] <= hi for lo, hi in PEOPLE_AND_FACES), (
            f"{name}: person or face"
        )


def _notdef(path: object) -> bytes:
    # U+E000 (private use) is in no subset: what the font draws for a missing glyph.
    font = _masks._font(path, 64)  # type: ignore[arg-type]
    im = Image.new("L", (96, 96))
    ImageDraw.Draw(im).text((8, 8), "\ue000", font=font, fill=255)
    return im.tobytes()


def test_every_glyph_renders_its_own_nonempty_bitmap() -> None:
    seen: dict[bytes, str] = {}
    for name, emoji in ((n, e) for c in vocab.GLYPHS.values() for n, e in c.items()):
        path = _masks.font_file(emoji)
        ink = _masks.emoji_ink(emoji, 64)
        a = np.asarray(ink)
        assert (a > 127).sum() > 100, f"{name}: no ink"
        im = Image.new("L", (96, 96))
        ImageDraw.Draw(im).text((8, 8), emoji, font=_masks._font(path, 64), fill=255)
        assert im.tobytes() != _notdef(path), f"{name}: the font has no glyph (notdef box)"
        key = ink.tobytes() + bytes(ink.size)
        assert key not in seen, f"{name} and {seen.get(key)} draw the same bitmap"
        seen[key] = name


def test_font_subset_map_and_license_are_shipped() -> None:
    folder = _masks.FONT_DIR
    assert (folder / "OFL.txt").read_text().startswith("Copyright")
    assert "SIL Open Font License" in (folder / "README.md").read_text()
    subsets = json.loads((folder / "unicode.json").read_text())
    for key in subsets:
        assert (folder / f"noto-emoji-{key.strip('[]')}-400-normal.woff").is_file()


def _grid_render(classes: list[str], color: str) -> tuple[np.ndarray, np.ndarray]:
    # 25 glyphs in a 5x5 grid at the count subtask's size (r ≈ 0.1 of a 512 image).
    objects = [
        {
            "kind": "glyph",
            "name": n,
            "color": color,
            "x": 0.1 + 0.2 * (i % 5),
            "y": 0.1 + 0.2 * (i // 5),
            "r": 0.095,
        }
        for i, n in enumerate(classes)
    ]
    base = {"size": 512, "seed": 1, "background": "solid", "style": "none"}
    with_objects = np.asarray(render({**base, "objects": objects}), np.int16)
    empty = np.asarray(render({**base, "objects": []}), np.int16)
    return with_objects, np.abs(with_objects - empty).sum(-1) > 30


def _chunks(names: list[str], n: int = 25) -> list[list[str]]:
    return [names[i : i + n] for i in range(0, len(names), n)]


def test_every_glyph_is_one_connected_object() -> None:
    # Counting questions need each object to read as one piece.
    for chunk in _chunks(sorted(vocab.GROUP_OF)):
        _, changed = _grid_render(chunk, "red")
        labels, count = ndimage.label(ndimage.binary_dilation(changed, iterations=2))
        assert count == len(chunk), f"{count} pieces for {len(chunk)} glyphs in {chunk}"
        for i, name in enumerate(chunk):
            cx, cy = int((0.1 + 0.2 * (i % 5)) * 512), int((0.1 + 0.2 * (i // 5)) * 512)
            cell = labels[cy - 51 : cy + 51, cx - 51 : cx + 51]
            assert len(set(np.unique(cell)) - {0}) == 1, f"{name} is in several pieces"


@pytest.mark.parametrize("color", NAMES)
def test_every_glyph_is_dominated_by_its_color(color: str) -> None:
    target = NAMES.index(color)
    for chunk in _chunks(sorted(vocab.GROUP_OF)):
        pixels, changed = _grid_render(chunk, color)
        for i, name in enumerate(chunk):
            x0, y0 = int(0.2 * (i % 5) * 512), int(0.2 * (i // 5) * 512)
            box = (slice(y0, y0 + 102), slice(x0, x0 + 102))
            counts = np.bincount(nearest_color(pixels[box][changed[box]]), minlength=len(NAMES))
            assert counts.argmax() == target, f"{color} {name}: mostly {NAMES[counts.argmax()]}"


def test_shapes_words_and_positions() -> None:
    assert len(vocab.SHAPES) >= 8 and len(set(vocab.SHAPES)) == len(vocab.SHAPES)
    assert {"circle", "square", "triangle", "star"} <= set(vocab.SHAPES)
    assert len(vocab.WORDS) >= 100 and len(set(vocab.WORDS)) == len(vocab.WORDS)
    for word in vocab.WORDS:
        assert re.fullmatch(r"[A-Z]{3,7}", word), word
    assert list(vocab.POSITIONS) == [
        "top left", "top", "top right", "left", "center", "right", "bottom left", "bottom", "bottom right",
    ]  # fmt: skip
    xs = sorted({x for x, _ in vocab.POSITIONS.values()})
    ys = sorted({y for _, y in vocab.POSITIONS.values()})
    assert len(xs) == len(ys) == 3 and all(0 < v < 1 for v in xs + ys)
    assert vocab.POSITIONS["top left"] == (xs[0], ys[0])
    assert vocab.POSITIONS["bottom right"] == (xs[2], ys[2])
    assert vocab.POSITIONS["center"] == (0.5, 0.5)


def test_backgrounds_styles_weathers() -> None:
    assert len(vocab.BACKGROUNDS) >= 15 and set(vocab.BACKGROUNDS) >= REQUIRED_BACKGROUNDS
    assert len(vocab.STYLES) >= 12 and set(vocab.STYLES) >= REQUIRED_STYLES
    assert {"snow", "rain", "fog", "night", "sunny"} <= set(vocab.WEATHERS)
    for table in (vocab.BACKGROUNDS, vocab.WEATHERS):
        phrases = list(table.values())
        assert len(set(phrases)) == len(phrases) and all(p and p == p.strip() for p in phrases)
    phrases = [s.phrase for s in vocab.STYLES.values()]
    assert len(set(phrases)) == len(phrases)
    for name, info in vocab.STYLES.items():
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", name)
        assert isinstance(info.keeps_color, bool) and isinstance(info.keeps_text, bool)
    # Color questions need styles that keep colors, OCR questions legible ones.
    assert sum(s.keeps_color for s in vocab.STYLES.values()) >= 4
    assert sum(s.keeps_text for s in vocab.STYLES.values()) >= 8
    with pytest.raises(dataclasses.FrozenInstanceError):
        vocab.STYLES["sepia"].keeps_color = True  # type: ignore[misc]
    assert not vocab.STYLES["grayscale"].keeps_color and not vocab.STYLES["sepia"].keeps_color
    assert (
        not vocab.STYLES["blueprint"].keeps_color and not vocab.STYLES["pencil_sketch"].keeps_color
    )
    assert 0 < vocab.OCR_MIN_R < 0.2
