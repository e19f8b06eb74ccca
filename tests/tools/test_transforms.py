"""APEx transform tools through the registry: schemas, validation, determinism, effects."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from lmmprobe.tools import ToolCallError, call_tool, get_tool, tool_catalog
from lmmprobe.tools.transforms import _psnr

APEX_TOOLS = {
    "Identity", "RotateImage", "FlipImage", "ChangeBrightness", "ChangeContrast", "AddGaussianNoise",
    "AddJPEGCompression", "CropRandomShuffleAndRecompose", "DefocusBlurImage", "OverlayColor",
    "PasteGeometricShapeAtRandomPosition", "PasteTextAtRandomPosition", "ZoomAtRandomPosition",
    "ApplyCorruption", "PrintAttack",
}  # fmt: skip


# APEx gives these no default: the orchestrator must choose.
REQUIRED = {
    "ChangeBrightness": {"brightness_factor": 1.5},
    "ChangeContrast": {"contrast_factor": 1.5},
    "ApplyCorruption": {"kind": "gaussian_blur"},
    "PrintAttack": {"text": "dog"},
}


@pytest.fixture
def image() -> Image.Image:
    im = Image.new("RGB", (128, 96), (200, 200, 200))
    d = ImageDraw.Draw(im)
    d.rectangle((10, 10, 50, 40), fill=(220, 30, 30))
    d.ellipse((70, 40, 110, 80), fill=(30, 70, 220))
    return im


def arr(im: Image.Image) -> np.ndarray:
    return np.asarray(im, dtype=np.int16)


def test_catalog_lists_every_tool_with_a_schema():
    catalog = {t["name"]: t for t in tool_catalog()}
    assert set(catalog) >= APEX_TOOLS
    for t in catalog.values():
        assert t["summary"] and t["doc"] and t["schema"]["type"] == "object"
    rotate = catalog["RotateImage"]["schema"]["properties"]["angle"]
    assert rotate["default"] == 90.0 and rotate["maximum"] == 360
    assert catalog["AddJPEGCompression"]["schema"]["properties"]["target_psnr"]["default"] == 26.0
    assert catalog["AddGaussianNoise"]["schema"]["properties"]["variance_factor"]["default"] == 1.4
    json.dumps(tool_catalog())  # what an orchestrator is shown must serialize


@pytest.mark.parametrize("name", sorted(APEX_TOOLS))
def test_every_tool_keeps_size_and_is_deterministic(name, image):
    args = REQUIRED.get(name, {})
    a = call_tool(image, {"tool": name, "args": args}, seed=3)
    b = call_tool(image, {"tool": name, "args": args}, seed=3)
    assert a.size == image.size and a.mode == "RGB"
    assert np.array_equal(arr(a), arr(b))
    changed = np.abs(arr(a) - arr(image)).mean()
    assert (changed == 0) == (name == "Identity")


def test_effects(image):
    flipped = call_tool(image, {"tool": "FlipImage", "args": {"direction": "horizontal"}})
    assert np.array_equal(arr(flipped), arr(image)[:, ::-1])
    dark = call_tool(image, {"tool": "ChangeBrightness", "args": {"brightness_factor": 0.5}})
    assert arr(dark).mean() < arr(image).mean()
    flat = call_tool(image, {"tool": "ChangeContrast", "args": {"contrast_factor": 0.0}})
    assert arr(flat).std() < 1
    red = call_tool(image, {"tool": "OverlayColor", "args": {"color": "red", "opacity": 1.0}})
    assert (arr(red) == [255, 0, 0]).all()
    noisy = [
        call_tool(image, {"tool": "AddGaussianNoise", "args": {"variance_factor": v}})
        for v in (0.5, 3)
    ]
    assert np.abs(arr(noisy[0]) - arr(image)).mean() < np.abs(arr(noisy[1]) - arr(image)).mean()
    shuffled = call_tool(
        image, {"tool": "CropRandomShuffleAndRecompose", "args": {"grid_size": 2}}, seed=1
    )
    assert sorted(arr(shuffled).ravel()) == sorted(arr(image).ravel())  # same pixels, moved


def test_jpeg_reaches_the_target_psnr():
    x = np.linspace(0, 255, 128)
    smooth = np.stack(
        [np.tile(x, (96, 1)), np.tile(x[::-1], (96, 1)), np.full((96, 128), 128.0)], -1
    )
    smooth += np.random.default_rng(0).normal(0, 12, smooth.shape)
    im = Image.fromarray(np.clip(smooth, 0, 255).astype(np.uint8))
    for target in (24, 30):
        out = call_tool(im, {"tool": "AddJPEGCompression", "args": {"target_psnr": target}})
        assert abs(_psnr(np.asarray(im), np.asarray(out)) - target) < 2


def test_seeds_differ_for_random_tools(image):
    a = call_tool(
        image, {"tool": "PasteTextAtRandomPosition", "args": {"text": "cat", "repeat": 3}}, seed=1
    )
    b = call_tool(
        image, {"tool": "PasteTextAtRandomPosition", "args": {"text": "cat", "repeat": 3}}, seed=2
    )
    assert not np.array_equal(arr(a), arr(b))


@pytest.mark.parametrize(
    "call",
    [
        {"tool": "RotateImage", "args": {"angle": 1000}},
        {"tool": "RotateImage", "args": {"degrees": 10}},
        {"tool": "FlipImage", "args": {"direction": "diagonal"}},
        {"tool": "OverlayColor", "args": {"color": "not-a-color"}},
        {"tool": "PasteTextAtRandomPosition", "args": {"text": "x" * 500}},
        {"tool": "__import__('os').system('ls')", "args": {}},
        {"args": {}},
        {"tool": "ChangeBrightness", "args": {}},
        {"tool": "RotateImage", "args": "angle=10"},
    ],
)
def test_invalid_calls_are_rejected(call, image):
    with pytest.raises(ToolCallError):
        call_tool(image, call)


def test_get_tool_calls_directly(image):
    rotated = get_tool("RotateImage")(image, angle=180)
    assert np.abs(arr(rotated) - arr(image)[::-1, ::-1]).mean() < 5
