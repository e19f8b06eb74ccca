"""The procedural renderer: the picture matches its recipe, deterministically, on any input."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from lmmprobe.imaging import _masks, procedural, vocab
from lmmprobe.imaging.procedural import (
    RENDERER,
    apply_style,
    apply_weather,
    drawable_classes,
    glyph_image,
    render,
    render_class_image,
    text_extent,
)
from lmmprobe.schema import ImageRef

NAMES = sorted(vocab.COLORS)
PALETTE = np.array([vocab.COLORS[n] for n in NAMES], np.float32)
KEEP_COLOR = [s for s, info in vocab.STYLES.items() if info.keeps_color]
LOSE_COLOR = [s for s, info in vocab.STYLES.items() if not info.keeps_color]
KEEP_TEXT = [s for s, info in vocab.STYLES.items() if info.keeps_text]
# Letters a reader could mistake for each other (used to test legibility letter by letter).
CONFUSABLE = dict(
    A="HRV", B="ERD", C="GOE", D="OBP", E="FBC", F="EPT", G="COQ", H="NAM", I="LTJ", J="IUL",
    K="XRH", L="IEJ", M="NWH", N="MHK", O="QDC", P="RFB", Q="OGD", R="PBK", S="BGZ", T="IYF",
    U="VOJ", V="YUA", W="MVN", X="KYA", Y="VTX", Z="NSE",
)  # fmt: skip


def recipe(objects: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {
        "size": 256,
        "seed": 7,
        "background": "solid",
        "style": "none",
        "objects": objects,
        **kw,
    }


def obj(
    kind: str, name: str, color: str = "red", x: float = 0.5, y: float = 0.5, r: float = 0.2
) -> dict[str, Any]:
    return {"kind": kind, "name": name, "color": color, "x": x, "y": y, "r": r}


def pixels(rec: dict[str, Any]) -> np.ndarray:
    return np.asarray(render(rec), np.int16)


def changed(rec: dict[str, Any], threshold: int = 30) -> np.ndarray:
    """Where the recipe's objects changed the picture drawn without them."""
    return np.abs(pixels(rec) - pixels({**rec, "objects": []})).sum(-1) > threshold


def nearest_color(px: np.ndarray) -> np.ndarray:
    d = ((px[:, None, :].astype(np.float32) - PALETTE[None]) ** 2).sum(-1)
    return np.asarray(d.argmin(1))


def dominant(px: np.ndarray) -> str:
    return NAMES[int(np.bincount(nearest_color(px), minlength=len(NAMES)).argmax())]


def digest(im: Image.Image) -> str:
    return hashlib.sha256(im.tobytes()).hexdigest()


# --- the recipe contract --------------------------------------------------------------------


def test_registered_and_drawn_through_image_refs() -> None:
    rec = recipe(
        [obj("glyph", "dog"), obj("text", "APPLE", "black", y=0.85, r=0.06)], weather="snow"
    )
    im = render(rec)
    assert im.mode == "RGB" and im.size == (256, 256)
    ref = ImageRef.from_recipe(RENDERER, rec)
    assert digest(ref.load()) == digest(im)
    assert ref.content_hash() == ImageRef.from_recipe(RENDERER, dict(rec)).content_hash()
    assert procedural.RENDERER == "synth-procedural" and procedural.RENDERER_VERSION == "1"


def test_same_recipe_same_pixels_whatever_came_before() -> None:
    a = recipe(
        [obj("glyph", "cat"), obj("shape", "star", "blue", 0.2, 0.2, 0.1)],
        style="watercolor",
        background="clouds",
    )
    b = recipe(
        [obj("glyph", "horse", "green")], style="halftone", background="brick", weather="rain"
    )
    first = digest(render(a))
    render(b)
    assert digest(render(a)) == first
    assert digest(render(b)) != first


def test_pixels_are_the_same_in_a_fresh_process() -> None:
    # Nothing may depend on process state: string hashing, cache order, import order.
    rec = recipe(
        [obj("glyph", "owl", "purple"), obj("text", "CLOUD", "white", y=0.8, r=0.06)],
        style="oil_painting",
        background="grass",
        weather="fog",
    )
    code = (
        "import hashlib, json, sys; from lmmprobe.imaging.procedural import render; "
        "print(hashlib.sha256(render(json.loads(sys.argv[1])).tobytes()).hexdigest())"
    )
    import json

    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(rec)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == digest(render(rec))


def test_the_seed_drives_textures_and_filters() -> None:
    for background in ("grass", "noise", "brick", "clouds", "stripes"):
        a, b = (render(recipe([], background=background, seed=s)) for s in (1, 2))
        assert digest(a) != digest(b), background
    for style in ("watercolor", "mosaic", "vintage"):
        a, b = (render(recipe([obj("glyph", "dog")], style=style, seed=s)) for s in (1, 2))
        assert digest(a) != digest(b), style


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"background": "lava"}, "recipe.background"),
        ({"style": "cubism"}, "recipe.style"),
        ({"weather": "hail"}, "recipe.weather"),
        ({"size": "big"}, "recipe.size"),
        ({"seed": None}, "recipe.seed"),
        ({"objects": [obj("glyph", "griffin")]}, "recipe.objects[0].name"),
        ({"objects": [obj("shape", "blob")]}, "recipe.objects[0].name"),
        ({"objects": [obj("sprite", "dog")]}, "recipe.objects[0].kind"),
        ({"objects": [obj("glyph", "dog", "pink")]}, "recipe.objects[0].color"),
        ({"objects": [obj("glyph", "dog", r=0)]}, "recipe.objects[0].r"),
        ({"objects": [{**obj("glyph", "dog"), "x": "left"}]}, "recipe.objects[0].x"),
        ({"objects": [obj("text", "")]}, "recipe.objects[0].name"),
    ],
)
def test_bad_recipes_name_the_field_and_known_values(bad: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=re_escape(field)) as err:
        render({**recipe([]), **bad})
    if "background" in field:
        assert "sky" in str(err.value) and "brick" in str(err.value)
    if "style" in field:
        assert "watercolor" in str(err.value) and "none" in str(err.value)
    if "color" in field:
        assert "purple" in str(err.value)


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


# --- the picture matches its metadata -------------------------------------------------------


def _layout(n: int, rng: random.Random) -> list[tuple[float, float]]:
    cells = [(x, y) for y in (0.3, 0.72) for x in (1 / 6, 0.5, 5 / 6)]
    rng.shuffle(cells)
    return cells[:n]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_the_number_of_drawn_objects_is_the_count(n: int) -> None:
    rng = random.Random(n)
    classes = sorted(vocab.GROUP_OF)
    for trial in range(4):
        kind, name = (
            ("shape", rng.choice(vocab.SHAPES)) if trial == 3 else ("glyph", rng.choice(classes))
        )
        objects = [
            obj(kind, name, rng.choice(NAMES), x, y, rng.uniform(0.1, 0.13))
            for x, y in _layout(n, rng)
        ]
        mask = changed(recipe(objects, size=384, background="solid"))
        _, count = ndimage.label(ndimage.binary_dilation(mask, iterations=2))
        assert count == n, f"{count} objects drawn for {n} {name}"


def test_objects_sit_at_their_position_and_size() -> None:
    for (x, y), r in [
        ((0.5, 0.5), 0.3),
        ((1 / 6, 1 / 6), 0.12),
        ((5 / 6, 0.5), 0.1),
        ((0.3, 5 / 6), 0.15),
    ]:
        mask = changed(recipe([obj("shape", "square", "blue", x, y, r)], size=300))
        ys, xs = np.nonzero(mask)
        assert abs(xs.mean() - x * 300) < 2 and abs(ys.mean() - y * 300) < 2
        side = xs.max() - xs.min() + 1
        # The halo-inclusive box is 2r wide; the object fills most of it and never spills out.
        assert 0.8 * 2 * r * 300 <= side <= 2 * r * 300 + 1
    big = changed(recipe([obj("glyph", "elephant", r=0.26)])).sum()
    small = changed(recipe([obj("glyph", "elephant", r=0.12)])).sum()
    assert big > 3 * small


def test_text_height_follows_r_and_width_follows_the_word() -> None:
    def box(word: str, r: float) -> tuple[int, int]:
        ys, xs = np.nonzero(changed(recipe([obj("text", word, "black", r=r)], size=512)))
        return xs.max() - xs.min(), ys.max() - ys.min()

    w_cat, h_cat = box("CAT", 0.08)
    w_long, h_long = box("BALLOON", 0.08)
    assert w_long > 2 * w_cat and abs(h_long - h_cat) < 8
    assert 2 * 0.08 * 512 < h_cat < 2 * 0.08 * 512 * 1.5  # caps + halo
    assert box("CAT", 0.12)[1] > 1.4 * h_cat
    for word, r in (("CAT", 0.08), ("BALLOON", 0.08), ("APPLE", 0.11)):
        width, height = text_extent(word, r)
        w, h = box(word, r)
        # The drawn ink (halo included) fits the announced extent.
        assert w <= width * 512 + 1 and h <= height * 512 + 1
        assert w >= 0.9 * width * 512 - 4


@pytest.mark.parametrize(
    "kind,name", [("glyph", "cow"), ("glyph", "bicycle"), ("shape", "star"), ("text", "ZEBRA")]
)
def test_dominant_color_is_the_named_color_on_every_background(kind: str, name: str) -> None:
    r = 0.07 if kind == "text" else 0.1
    for background in vocab.BACKGROUNDS:
        for i, color in enumerate(NAMES):
            # Vary the place too: objects must read right anywhere in the picture.
            x, y = (
                list(vocab.POSITIONS.values())[i % 9] if kind != "text" else (0.5, 0.2 + 0.08 * i)
            )
            rec = recipe([obj(kind, name, color, x, y, r)], size=384, background=background, seed=i)
            # The object's pixels: where it changes a plain picture (robust to any background).
            mask = changed({**rec, "background": "solid"})
            assert dominant(pixels(rec)[mask]) == color, f"{color} {name} on {background}"


def _fill_mask(rec: dict[str, Any], color: str) -> np.ndarray:
    return (pixels({**rec, "style": "none"}) == np.array(vocab.COLORS[color])).all(-1)


def _color_failures(
    style: str, backgrounds: tuple[str, ...], stop_at_first: bool = False
) -> list[str]:
    """Objects at the count subtask's size, in every color and grid cell, read by dominant color."""
    positions = list(vocab.POSITIONS.values())
    failures = []
    for background in backgrounds:
        for color in NAMES:
            # A thin, detailed glyph (the hard case) and a solid shape.
            for kind, name in (("glyph", "giraffe"), ("shape", "heart")):
                objects = [obj(kind, name, color, x, y, 0.1) for x, y in positions]
                rec = {
                    "size": 512,
                    "seed": 5,
                    "background": background,
                    "style": style,
                    "objects": objects,
                }
                styled, fill = pixels(rec), _fill_mask(rec, color)
                for x, y in positions:
                    box = (
                        slice(int((y - 0.1) * 512), int((y + 0.1) * 512)),
                        slice(int((x - 0.1) * 512), int((x + 0.1) * 512)),
                    )
                    got = dominant(styled[box][fill[box]])
                    if got != color:
                        failures.append(
                            f"{color} {name} at ({x:.2f}, {y:.2f}) on {background} reads {got}"
                        )
                        if stop_at_first:
                            return failures
    return failures


@pytest.mark.parametrize("style", KEEP_COLOR)
def test_color_keeping_styles_keep_the_color(style: str) -> None:
    failures = _color_failures(style, ("solid", "grass", "night", "sunset"))
    assert not failures, f"{style}: {failures[:5]}"


@pytest.mark.parametrize("style", LOSE_COLOR)
def test_other_styles_really_lose_some_color(style: str) -> None:
    # The same check as above fails somewhere, so the flag is not needlessly False.
    assert _color_failures(style, ("solid", "grass", "night", "sunset"), stop_at_first=True), (
        f"{style} keeps every color: mark it keeps_color=True"
    )


def _letter_scores(word: str, style: str, background: str, color: str) -> list[float]:
    """For each letter, how much better it matches itself than any look-alike letter.

    There is no OCR engine offline, so a small template reader stands in: the word's footprint
    (picture with it minus picture without it) is compared letter by letter with footprints of
    single letters drawn at the same place under the same style, but on another background
    and seed, so only the letter shapes can match, not the textures.
    """
    size, r, y = 512, vocab.OCR_MIN_R, 0.5
    sprite = _masks.text_masks(word)
    width = round(sprite.bands.width * r * size / sprite.half)
    x0 = round(size / 2 - width / 2)
    centres = [x0 + c * width for c in _masks.letter_centers(word)]

    def lum(objects: list[dict[str, Any]], bg: str, seed: int) -> np.ndarray:
        rec = {"size": size, "seed": seed, "background": bg, "style": style, "objects": objects}
        return np.asarray(render(rec).convert("L"), np.float32)

    other_bg = "gradient" if background != "gradient" else "solid"
    query = lum([obj("text", word, color, 0.5, y, r)], background, 1) - lum([], background, 1)
    empty = lum([], other_bg, 2)
    half_h, half_w, cy = round(1.2 * r * size), round(0.5 * r * size), round(y * size)
    scores = []
    for letter, cx in zip(word, centres, strict=True):
        win = (slice(cy - half_h, cy + half_h), slice(round(cx) - half_w, round(cx) + half_w))

        def unit(a: np.ndarray) -> np.ndarray:
            a = ndimage.gaussian_filter(a, 1.0)
            a = a - a.mean()
            return a / (np.linalg.norm(a) + 1e-6)

        q = unit(query[win])
        match = {
            c: float(
                (
                    q
                    * unit(
                        (lum([obj("text", c, color, cx / size, y, r)], other_bg, 2) - empty)[win]
                    )
                ).sum()
            )
            for c in letter + CONFUSABLE[letter]
        }
        scores.append(match[letter] - max(v for c, v in match.items() if c != letter))
    return scores


@pytest.mark.parametrize("style", KEEP_TEXT)
def test_text_keeping_styles_keep_words_legible(style: str) -> None:
    for word, background, color in (("BRIDGE", "solid", "black"), ("ZEBRA", "sky", "white")):
        scores = _letter_scores(word, style, background, color)
        assert min(scores) > 0, f"{style}: letters of {word} misread ({scores})"


def test_text_is_drawn_and_words_differ() -> None:
    masks = {}
    for word in ("APPLE", "OCEAN", "TIGER"):
        rec = recipe([obj("text", word, "black", 0.5, 0.5, 0.08)], size=384, background="wood")
        masks[word] = changed(rec)
        ink = (pixels(rec) == np.array(vocab.COLORS["black"])).all(-1)
        assert ink[140:245, :].sum() > 1500, f"{word}: no ink in the text box"
        assert not ink[:100].any() and not ink[290:].any()
    assert len({m.tobytes() for m in masks.values()}) == 3


# --- every background, style and weather ----------------------------------------------------


def _scene(size: int = 256, seed: int = 3) -> dict[str, Any]:
    return recipe(
        [
            obj("glyph", "dog", "orange", 0.35, 0.4, 0.2),
            obj("shape", "star", "blue", 0.75, 0.3, 0.12),
            obj("text", "LIGHT", "white", 0.5, 0.82, 0.06),
        ],
        size=size,
        seed=seed,
    )


def test_every_background_is_distinct_and_textured_as_named() -> None:
    images = {
        b: np.asarray(render({**_scene(), "background": b}), np.int16) for b in vocab.BACKGROUNDS
    }
    assert len({im.tobytes() for im in images.values()}) == len(images)
    bare = {
        b: np.asarray(render({**_scene(), "objects": [], "background": b}), np.float32)
        for b in vocab.BACKGROUNDS
    }
    for b, im in bare.items():
        if b != "solid":
            assert im.std(axis=(0, 1)).max() > 6, f"{b} is flat"
    sky, grass, night = (bare[b].mean(axis=(0, 1)) for b in ("sky", "grass", "night"))
    assert sky[2] > sky[0] + 40 and grass[1] > grass[0] + 30 and grass[1] > grass[2] + 30
    assert night.mean() < 60
    assert bare["solid"].std(axis=(0, 1)).max() < 1


def test_every_style_changes_pixels_and_styles_differ() -> None:
    base = render(_scene())
    outs = {s: apply_style(base, s, seed=1) for s in vocab.STYLES}
    for s, im in outs.items():
        assert im.size == base.size and im.mode == "RGB"
        diff = np.abs(np.asarray(im, np.int16) - np.asarray(base, np.int16)).mean()
        assert diff > 4, f"{s} barely changes the picture ({diff:.1f})"
    assert len({digest(im) for im in outs.values()}) == len(outs)
    # A style in the recipe is the same filter, drawn with the recipe's seed.
    rec = {**_scene(), "style": "comic"}
    assert digest(render(rec)) == digest(apply_style(base, "comic", seed=rec["seed"]))
    gray = np.asarray(outs["grayscale"], np.int16)
    assert (gray[..., 0] == gray[..., 1]).all() and (gray[..., 1] == gray[..., 2]).all()


def test_every_weather_changes_pixels_and_weathers_differ() -> None:
    base = render(_scene())
    outs = {w: apply_weather(base, w, seed=2) for w in vocab.WEATHERS}
    for w, im in outs.items():
        diff = np.abs(np.asarray(im, np.int16) - np.asarray(base, np.int16)).mean()
        assert diff > 4, f"{w} barely changes the picture ({diff:.1f})"
    assert len({digest(im) for im in outs.values()}) == len(outs)
    mean = {w: np.asarray(im, np.float32).mean() for w, im in outs.items()}
    assert mean["night"] < np.asarray(base, np.float32).mean() - 40
    assert mean["fog"] > np.asarray(base, np.float32).mean()
    rec = {**_scene(), "weather": "rain", "style": "sepia"}
    expected = apply_style(apply_weather(base, "rain", seed=rec["seed"]), "sepia", seed=rec["seed"])
    assert digest(render(rec)) == digest(expected)


@pytest.mark.parametrize("size", [(300, 200), (97, 131), (640, 480)])
def test_styles_and_weathers_work_on_any_picture(size: tuple[int, int]) -> None:
    rng = np.random.default_rng(0)
    im = Image.fromarray(rng.integers(0, 255, (size[1], size[0], 4), dtype=np.uint8), "RGBA")
    for s in vocab.STYLES:
        out = apply_style(im, s, seed=3)
        assert out.size == size and out.mode == "RGB", s
        assert digest(out) == digest(apply_style(im, s, seed=3))
    for w in vocab.WEATHERS:
        out = apply_weather(im, w, seed=3)
        assert out.size == size and out.mode == "RGB", w
    assert digest(apply_style(im, "pencil sketch")) == digest(apply_style(im, "pencil_sketch"))
    assert digest(apply_style(im.convert("RGB"), "none")) == digest(im.convert("RGB"))
    with pytest.raises(ValueError, match="known"):
        apply_style(im, "cubism")
    with pytest.raises(ValueError, match="known"):
        apply_weather(im, "hail")


# --- helpers for APEx's tools ----------------------------------------------------------------


def test_glyph_image_is_a_transparent_sprite_in_the_color() -> None:
    sprite = glyph_image("rabbit", "green", 128)
    assert sprite.mode == "RGBA" and sprite.size == (128, 128)
    a = np.asarray(sprite)
    assert a[0, 0, 3] == 0 and a[-1, -1, 3] == 0
    opaque = a[..., 3] == 255
    assert opaque.mean() > 0.2
    assert dominant(a[..., :3][opaque]) == "green"
    assert glyph_image("star", (10, 200, 240), 64).size == (64, 64)
    assert digest(glyph_image("rabbit", "green", 128)) == digest(sprite)
    with pytest.raises(KeyError, match="diffusion"):
        glyph_image("griffin", "red", 64)
    with pytest.raises(ValueError, match="color"):
        glyph_image("rabbit", "pink", 64)


def test_render_class_image() -> None:
    im = render_class_image("penguin", seed=4)
    assert im.size == (512, 512) and im.mode == "RGB"
    assert digest(im) == digest(render_class_image("penguin", seed=4))
    assert digest(im) != digest(render_class_image("penguin", seed=5))
    small = render_class_image("hexagon", size=128, color="yellow", background="night")
    _ys, xs = np.nonzero((np.asarray(small) == np.array(vocab.COLORS["yellow"])).all(-1))
    assert len(xs) > 0.2 * 128 * 128 and abs(xs.mean() - 64) < 8
    sketch = render_class_image("penguin", image_type="pencil sketch", size=128, seed=4)
    assert digest(sketch) == digest(
        render_class_image("penguin", image_type="pencil_sketch", size=128, seed=4)
    )
    assert digest(sketch) != digest(render_class_image("penguin", size=128, seed=4))
    with pytest.raises(KeyError, match="diffusion renderer"):
        render_class_image("eiffel tower")
    with pytest.raises(ValueError, match="style"):
        render_class_image("penguin", image_type="cubism")


def test_drawable_classes() -> None:
    classes = drawable_classes()
    assert {n: g for n, g in classes.items() if g != "shape"} == vocab.GROUP_OF
    assert {n for n, g in classes.items() if g == "shape"} == set(vocab.SHAPES)
    for name in random.Random(0).sample(sorted(classes), 12):
        assert render_class_image(name, size=64).size == (64, 64)
