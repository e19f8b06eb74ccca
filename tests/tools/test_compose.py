"""Composition (select, then transforms, seeded) and validation of orchestrator-written calls."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lmmprobe.tools import (
    ToolCall,
    ToolCallError,
    catalog,
    compose,
    get_tool,
    tool_names,
    validate_call,
)
from lmmprobe.tools.compose import MAX_STRING, derive_seed
from lmmprobe.tools.select import SelectContext

GEN = {"tool": "TextToImageGeneration", "args": {"class_name": "dog"}}


@pytest.fixture(scope="module")
def context() -> SelectContext:
    return SelectContext(size=96)


def test_catalog_separates_kinds_and_serializes():
    everything = {t["name"]: t for t in catalog()}
    select = {t["name"] for t in catalog("select")}
    transform = {t["name"] for t in catalog("transform")}
    assert select == {"TextToImageGeneration", "TextToImageRetrieval"}
    assert select | transform == set(everything) and not select & transform
    apex = {
        "AddGaussianNoise", "AddJPEGCompression", "ApplyCutMix", "ApplyMixUp",
        "ChangeBrightness", "ChangeContrast", "CropRandomShuffleAndRecompose",
        "DefocusBlurImage", "EditImageStyle", "EditImageWeather", "FlipImage", "Identity",
        "OverlayColor", "PasteGeneratedObjectAtRandomPosition",
        "PasteGeometricShapeAtRandomPosition", "PasteTextAtRandomPosition", "RotateImage",
        "ZoomAtRandomPosition",
    }  # fmt: skip
    assert apex <= transform
    for entry in everything.values():
        assert set(entry) == {"name", "kind", "summary", "doc", "schema"}
        assert entry["summary"] and entry["doc"] and entry["schema"]["type"] == "object"
    gen = everything["TextToImageGeneration"]["schema"]["properties"]
    assert gen["image_type"]["default"] == "photo" and gen["class_name"]["maxLength"] == 80
    style = everything["EditImageStyle"]["schema"]["properties"]["style"]
    assert "grayscale" in style["enum"]  # the orchestrator sees the vocabulary
    assert everything["ApplyMixUp"]["schema"]["properties"]["alpha"]["default"] == 0.7
    assert everything["ApplyCutMix"]["schema"]["properties"]["alpha"]["default"] == 1.0
    json.dumps(catalog())
    assert tool_names("select") == sorted(select)


def test_validate_call_fills_defaults_and_accepts_models():
    call = validate_call({"tool": "RotateImage"}, "transform")
    assert call == ToolCall(tool="RotateImage", args={"angle": 90.0})
    again = validate_call(ToolCall(tool="TextToImageGeneration", args={"class_name": "dog"}))
    assert again.args == {"class_name": "dog", "image_type": "photo"}


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        ({"tool": "Rotate"}, "transform", "unknown transform tool 'Rotate'; known: AddGaussianNoise"),
        ({"tool": "RotateImage"}, "select", "RotateImage is a transform tool, not a select tool"),
        (GEN, "transform", "TextToImageGeneration is a select tool"),
        ({"tool": "os.system"}, None, "is a dotted module path"),
        ({"tool": "lmmprobe.tools.transforms.rotate_image"}, None, "dotted module path"),
        ({"tool": "__import__('os').system('ls')"}, None, "is code"),
        ({"tool": "../../etc/passwd"}, None, "is a file path"),
        ({"tool": "R" * 65}, None, "tool name of 65 characters"),
        ({"tool": 3}, None, "must be a string"),
        ("RotateImage(90)", None, "a tool call is an object"),
        ({"tool": "RotateImage", "args": "angle=10"}, None, "malformed tool call"),
        ({"tool": "RotateImage", "extra": 1}, None, "malformed tool call"),
        ({"tool": "RotateImage", "args": {"angle": 1000}}, None, "'angle'=1000"),
        ({"tool": "RotateImage", "args": {"angle": 1000}}, None, "≤ 360"),
        ({"tool": "RotateImage", "args": {"degrees": 1}}, None, "unknown argument 'degrees' (known arguments: angle)"),
        ({"tool": "ChangeBrightness"}, None, "missing required argument 'brightness_factor' (number, ≥ 0"),
        ({"tool": "FlipImage", "args": {"direction": "diagonal"}}, None, "one of 'horizontal', 'vertical'"),
        ({"tool": "PasteTextAtRandomPosition", "args": {"text": "x" * 150}}, None, "length ≤ 100"),
        ({"tool": "PasteTextAtRandomPosition", "args": {"text": "x" * 500}}, None, f"at most {MAX_STRING}"),
        ({"tool": "PasteTextAtRandomPosition", "args": {"repeat": 500}}, None, "≤ 20"),
        ({"tool": "PasteGeneratedObjectAtRandomPosition", "args": {"class_name": "dog", "size": 5}}, None, "≤ 1"),
        ({"tool": "EditImageStyle", "args": {"style": "cubism"}}, None, "known styles: blueprint"),
        ({"tool": "EditImageWeather", "args": {"weather": "hail"}}, None, "known weathers: fog"),
        ({"tool": "TextToImageGeneration", "args": {"class_name": "dog", "image_type": "cartoon"}}, None, "known image types: photo, blueprint"),
    ],
)  # fmt: skip
def test_bad_calls_say_what_to_fix(call, kind, message):
    with pytest.raises(ToolCallError) as info:
        validate_call(call, kind)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "eval('1+1')",
        "exec(open('x').read())",
        "import os; os.remove('x')",
        "../../etc/passwd",
        "..\\..\\windows\\system32",
        "/etc/passwd",
        "~/.ssh/id_rsa",
        "$(rm -rf /)",
        "`id`",
        "{{ config }}",
        "a\x00b",
    ],
)
def test_injection_strings_in_any_field_are_rejected(text):
    calls = [
        {"tool": "PasteTextAtRandomPosition", "args": {"text": text}},
        {"tool": "TextToImageGeneration", "args": {"class_name": text}},
        {"tool": "EditImageStyle", "args": {"style": text}},
        {"tool": "RotateImage", "args": {text: 1}},
    ]
    for call in calls:
        with pytest.raises(ToolCallError):
            validate_call(call)


def test_plain_text_passes():
    for text in ("STOP", "Open 24h", "dog", "it's a cat (really)", "50% off"):
        validate_call({"tool": "PasteTextAtRandomPosition", "args": {"text": text}})


def test_nothing_an_orchestrator_writes_runs(tmp_path: Path, context: SelectContext):
    marker = tmp_path / "pwned"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    attempts = [
        ({"tool": code}, []),
        (GEN, [{"tool": code}]),
        ({"tool": "TextToImageGeneration", "args": {"class_name": code}}, []),
        (GEN, [{"tool": "PasteTextAtRandomPosition", "args": {"text": code}}]),
    ]
    for select, transforms in attempts:
        with pytest.raises(ToolCallError):
            compose(select, transforms, seed=0, context=context)
    assert not marker.exists()


def test_compose_is_deterministic_and_records_provenance(context: SelectContext):
    transforms = [
        {"tool": "RotateImage", "args": {"angle": 90}},
        {"tool": "AddGaussianNoise"},
        {"tool": "PasteTextAtRandomPosition", "args": {"text": "cat", "repeat": 2}},
    ]
    a = compose(GEN, transforms, seed=7, context=context)
    b = compose(GEN, transforms, seed=7, context=context)
    c = compose(GEN, transforms, seed=8, context=context)
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
    assert a.provenance == b.provenance and a.class_name == "dog"
    assert not np.array_equal(np.asarray(a.image), np.asarray(c.image))
    p = a.provenance
    assert p["seed"] == 7 and p["renderer"] == "procedural" and p["collection"] is None
    assert p["select"]["tool"] == "TextToImageGeneration" and p["select"]["source"] == "generated"
    assert [t["tool"] for t in p["transforms"]] == [t["tool"] for t in transforms]
    assert p["transforms"][1]["args"] == {"variance_factor": 1.4}  # defaults recorded
    assert [t["seed"] for t in p["transforms"]] == [derive_seed(7, i) for i in (1, 2, 3)]
    json.dumps(p)
    assert a.image.size == (96, 96)


def test_compose_applies_transforms_in_order(context: SelectContext):
    base = compose(GEN, [], seed=3, context=context)
    rotated = compose(
        GEN, [{"tool": "RotateImage", "args": {"angle": 90}}], seed=3, context=context
    )
    expected = get_tool("RotateImage")(base.image, angle=90)
    assert np.array_equal(np.asarray(rotated.image), np.asarray(expected))
    flip_then_dark = compose(
        GEN,
        [{"tool": "FlipImage"}, {"tool": "ChangeBrightness", "args": {"brightness_factor": 0.5}}],
        seed=3,
        context=context,
    )
    manual = get_tool("ChangeBrightness")(get_tool("FlipImage")(base.image), brightness_factor=0.5)
    assert np.array_equal(np.asarray(flip_then_dark.image), np.asarray(manual))


def test_compose_validates_every_call_before_running(context: SelectContext):
    with pytest.raises(ToolCallError, match="unknown transform tool 'Blur'"):
        compose(GEN, [{"tool": "Identity"}, {"tool": "Blur"}], seed=0, context=context)
    with pytest.raises(ToolCallError, match="RotateImage is a transform tool"):
        compose({"tool": "RotateImage"}, [], seed=0, context=context)


def test_derive_seed():
    assert derive_seed(5, 0) == 5
    assert derive_seed(5, 1) != derive_seed(5, 2) != derive_seed(6, 1)
    assert derive_seed(5, 1) == derive_seed(5, 1)
