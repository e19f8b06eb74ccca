"""Generated-content transforms: style and weather edits, pasted objects, CutMix, MixUp."""

from __future__ import annotations

import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from lmmprobe.tools import ToolCallError, call_tool, get_tool
from lmmprobe.tools.generated import cutmix, cutmix_box, mixup, second_image, style_names
from lmmprobe.tools.select import SelectContext, active_context

UNIQUE = (1, 2, 3)  # a color the renderer never paints, so changed pixels are easy to find


@pytest.fixture
def image() -> Image.Image:
    im = Image.new("RGB", (96, 72), (200, 200, 200))
    d = ImageDraw.Draw(im)
    d.rectangle((10, 10, 40, 30), fill=(220, 30, 30))
    d.ellipse((50, 30, 90, 70), fill=(30, 70, 220))
    return im


def arr(im: Image.Image) -> np.ndarray:
    return np.asarray(im, dtype=np.int16)


def run(image: Image.Image, tool: str, seed: int = 0, **args) -> Image.Image:
    return call_tool(image, {"tool": tool, "args": args}, seed=seed)


def test_grayscale_style_makes_channels_equal(image):
    out = run(image, "EditImageStyle", style="grayscale")
    a = arr(out)
    assert out.size == image.size
    assert np.array_equal(a[..., 0], a[..., 1]) and np.array_equal(a[..., 1], a[..., 2])
    assert not np.array_equal(a, arr(image))


@pytest.mark.parametrize("style", ["pencil_sketch", "Pencil Sketch", "oil painting", "sepia"])
def test_styles_by_name_or_phrase(image, style):
    out = run(image, "EditImageStyle", style=style)
    assert out.size == image.size and not np.array_equal(arr(out), arr(image))


def test_every_style_and_weather_keeps_size_and_is_seeded(image):
    from lmmprobe.tools.generated import weather_names

    for tool, key, names in (
        ("EditImageStyle", "style", style_names()),
        ("EditImageWeather", "weather", weather_names()),
    ):
        for name in names:
            a = run(image, tool, seed=4, **{key: name})
            b = run(image, tool, seed=4, **{key: name})
            assert a.size == image.size and np.array_equal(arr(a), arr(b)), (tool, name)


def test_snow_weather_adds_bright_specks(image):
    snowy = run(image, "EditImageWeather", weather="snow")
    assert not np.array_equal(arr(snowy), arr(image))


def test_unknown_style_and_weather_list_the_known_ones(image):
    with pytest.raises(ToolCallError, match=r"unknown style 'cubism'; known styles: .*grayscale"):
        run(image, "EditImageStyle", style="cubism")
    with pytest.raises(ToolCallError, match=r"unknown weather 'hail'; known weathers: .*snow"):
        run(image, "EditImageWeather", weather="hail")


def test_paste_generated_object(image):
    base = Image.new("RGB", (120, 120), UNIQUE)
    one = run(base, "PasteGeneratedObjectAtRandomPosition", seed=2, class_name="dog", size=0.3)
    three = run(
        base, "PasteGeneratedObjectAtRandomPosition", seed=2, class_name="dog", size=0.3, repeat=3
    )
    again = run(
        base, "PasteGeneratedObjectAtRandomPosition", seed=2, class_name="dog", size=0.3, repeat=3
    )
    changed_one = (arr(one) != UNIQUE).any(-1).mean()
    changed_three = (arr(three) != UNIQUE).any(-1).mean()
    assert 0 < changed_one < 0.09 + 1e-9  # at most the 36 × 36 object square
    assert changed_three > 1.5 * changed_one  # three copies cover more than one
    assert np.array_equal(arr(three), arr(again))
    for bad in ({"size": 1.5}, {"size": 0}, {"repeat": 0}, {"repeat": 21}):
        with pytest.raises(ToolCallError):
            run(image, "PasteGeneratedObjectAtRandomPosition", class_name="dog", **bad)


def test_cutmix_box_area_matches_lambda():
    for seed in range(20):
        box, lam = cutmix_box(random.Random(seed), (200, 150), 1.0)
        left, top, right, bottom = box
        assert 0 <= left <= right <= 200 and 0 <= top <= bottom <= 150  # wholly inside
        assert abs((right - left) * (bottom - top) / (200 * 150) - (1 - lam)) < 1e-9
        # λ is Beta-drawn; the box keeps the image's aspect ratio (up to rounding)
        if right - left > 20:
            assert abs((right - left) / (bottom - top) - 200 / 150) < 0.1


def test_cutmix_pastes_a_rectangle_of_the_second_image():
    first = Image.new("RGB", (80, 60), UNIQUE)
    second = Image.fromarray(
        np.random.default_rng(0).integers(10, 250, (60, 80, 3), dtype=np.uint8)
    )
    out, lam = cutmix(first, second, random.Random(3), 1.0)
    changed = (arr(out) != UNIQUE).any(-1)
    ys, xs = np.nonzero(changed)
    box = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
    assert changed[box[1] : box[3], box[0] : box[2]].all()  # a filled rectangle
    assert abs(changed.mean() - (1 - lam)) < 1e-9
    region = arr(out)[box[1] : box[3], box[0] : box[2]]
    assert np.array_equal(region, arr(second)[box[1] : box[3], box[0] : box[2]])


def test_cutmix_tool_changes_one_rectangle():
    base = Image.new("RGB", (90, 90), UNIQUE)
    for seed in range(4):
        out = run(base, "ApplyCutMix", seed=seed)
        changed = (arr(out) != UNIQUE).any(-1)
        if not changed.any():
            continue  # λ near 1: an empty box
        ys, xs = np.nonzero(changed)
        inside = changed[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        assert inside.mean() > 0.9  # the second image fills its box (a few pixels may match)
        assert np.array_equal(arr(out), arr(run(base, "ApplyCutMix", seed=seed)))


def test_mixup_is_the_convex_mix(image):
    assert np.array_equal(arr(run(image, "ApplyMixUp", seed=5, alpha=1.0)), arr(image))
    other = run(image, "ApplyMixUp", seed=5, alpha=0.0)  # the second image alone
    assert not np.array_equal(arr(other), arr(image))
    mixed = run(image, "ApplyMixUp", seed=5)  # APEx's default alpha = 0.7
    expected = 0.7 * arr(image) + 0.3 * arr(other)
    assert np.abs(arr(mixed) - expected).max() <= 1
    assert np.array_equal(arr(mixup(image, other, 0.7)), arr(mixed))
    with pytest.raises(ToolCallError, match="alpha"):
        run(image, "ApplyMixUp", alpha=1.5)


def test_second_image_avoids_the_current_class():
    context = SelectContext(size=64)
    with active_context(context, subject="dog"):
        classes = {second_image(random.Random(s), (32, 32))[1] for s in range(30)}
    assert "dog" not in classes and len(classes) > 5
    image, _ = second_image(random.Random(0), (50, 30))
    assert image.size == (50, 30)


def test_generated_tools_are_transforms():
    for name in (
        "EditImageStyle",
        "EditImageWeather",
        "PasteGeneratedObjectAtRandomPosition",
        "ApplyCutMix",
        "ApplyMixUp",
    ):
        assert get_tool(name).kind == "transform"
