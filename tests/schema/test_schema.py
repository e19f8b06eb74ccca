"""Schemas: Sample validation rules and ImageRef loading and hashing."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from pydantic import ValidationError

from lmmprobe.schema import (
    MAX_TOKEN_COUNT,
    ErrorInfo,
    GenerationParams,
    ImageRef,
    Response,
    Sample,
    Usage,
    register_renderer,
    token_count,
)
from lmmprobe.schema.spec import MAX_BOOTSTRAP, RunSpec


def choice(**kw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": "s", "question": "Q?", "choices": ["a", "b", "c"], "answer": 0}
    fields.update(kw)
    return fields


def open_ended(**kw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": "o",
        "question": "Q?",
        "answer": ["ref"],
        "formulation": "open_ended",
    }
    fields.update(kw)
    return fields


# --- Sample --------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [0, 1, 2])
def test_valid_choice_answers(answer: int) -> None:
    s = Sample(**choice(answer=answer))
    assert s.answer == answer
    assert s.gold_text == "abc"[answer]
    assert s.is_choice


@pytest.mark.parametrize("answer", [3, 10, -1])
def test_answer_out_of_range(answer: int) -> None:
    with pytest.raises(ValidationError, match="out of range"):
        Sample(**choice(answer=answer))


@pytest.mark.parametrize("answer", [0, 1])
def test_true_false_gets_yes_no(answer: int) -> None:
    s = Sample(id="t", question="Is it red?", answer=answer, formulation="true_false")
    assert s.choices == ["yes", "no"]
    assert s.gold_text == ["yes", "no"][answer]


def test_true_false_answer_out_of_range() -> None:
    with pytest.raises(ValidationError, match="out of range"):
        Sample(id="t", question="Is it red?", answer=2, formulation="true_false")


@pytest.mark.parametrize("choices", [None, [], ["only"]])
def test_single_choice_needs_two_choices(choices: Any) -> None:
    with pytest.raises(ValidationError, match="choices"):
        Sample(**choice(choices=choices))


@pytest.mark.parametrize("answer", ["b", ["b"]])
def test_single_choice_needs_integer_answer(answer: Any) -> None:
    with pytest.raises(ValidationError, match="integer"):
        Sample(**choice(answer=answer))


@pytest.mark.parametrize("answer", [[], 0, 3])
def test_open_ended_needs_references(answer: Any) -> None:
    with pytest.raises(ValidationError, match="reference"):
        Sample(**open_ended(answer=answer))


@pytest.mark.parametrize("make", [choice, open_ended])
@pytest.mark.parametrize("answer", [True, False])
def test_bool_answer_rejected(make: Any, answer: bool) -> None:
    with pytest.raises(ValidationError, match="boolean"):
        Sample(**make(answer=answer))


def test_string_answer_wrapped_into_list() -> None:
    s = Sample(**open_ended(answer="a red ball"))
    assert s.answer == ["a red ball"]
    assert s.gold_text == "a red ball"
    assert not s.is_choice


def test_references_kept_in_order() -> None:
    s = Sample(**open_ended(answer=["first", "second"]))
    assert s.answer == ["first", "second"]
    assert s.gold_text == "first"


@pytest.mark.parametrize("field", ["id", "question"])
def test_empty_id_or_question_rejected(field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        Sample(**choice(**{field: ""}))


def test_unknown_formulation_rejected() -> None:
    with pytest.raises(ValidationError, match="formulation"):
        Sample(**choice(formulation="multiple"))


def test_sample_round_trips_through_json(tmp_path: Path) -> None:
    path = tmp_path / "x.png"
    Image.new("RGB", (3, 3), (9, 9, 9)).save(path)
    s = Sample(
        **choice(
            images=[ImageRef.from_path(path)],
            context="ctx",
            history=[{"role": "user", "content": "hi"}],
            metadata={"task": "t"},
        )
    )
    again = Sample.model_validate_json(s.model_dump_json())
    assert again == s
    assert again.images[0].content_hash() == s.images[0].content_hash()


# --- ImageRef ------------------------------------------------------------------------------------


def _png_bytes(
    size: tuple[int, int] = (6, 4), color: tuple[int, int, int] = (10, 200, 30)
) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def test_from_path_loads_and_hashes_file_bytes(tmp_path: Path, write_png) -> None:
    path = write_png(tmp_path / "a.png", size=(6, 4), color=(1, 2, 3))
    ref = ImageRef.from_path(path)
    assert ref.kind == "path"
    im = ref.load()
    assert im.size == (6, 4)
    assert im.mode == "RGB"
    assert im.getpixel((0, 0)) == (1, 2, 3)
    digest = ref.content_hash()
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == ImageRef.from_path(str(path)).content_hash()


def test_from_base64_loads_and_hashes() -> None:
    data = _png_bytes()
    ref = ImageRef.from_base64(base64.b64encode(data).decode())
    assert ref.kind == "base64"
    assert ref.load().size == (6, 4)
    assert ref.load().getpixel((5, 3)) == (10, 200, 30)
    assert ref.content_hash() == hashlib.sha256(data).hexdigest()


def test_same_bytes_via_path_and_base64_hash_equal(tmp_path: Path) -> None:
    data = _png_bytes(color=(99, 1, 1))
    path = tmp_path / "same.png"
    path.write_bytes(data)
    via_path = ImageRef.from_path(path)
    via_b64 = ImageRef.from_base64(base64.b64encode(data).decode())
    assert via_path.content_hash() == via_b64.content_hash()


def test_from_pil_loads_and_hashes() -> None:
    im = Image.new("RGB", (5, 5), (4, 5, 6))
    ref = ImageRef.from_pil(im)
    assert ref.kind == "memory"
    assert ref.load() is im
    assert len(ref.content_hash()) == 64
    assert ref.content_hash() == ImageRef.from_pil(im.copy()).content_hash()


def test_different_pixels_hash_differently(tmp_path: Path, write_png) -> None:
    a = Image.new("RGB", (5, 5), (4, 5, 6))
    b = a.copy()
    b.putpixel((2, 2), (4, 5, 7))
    assert ImageRef.from_pil(a).content_hash() != ImageRef.from_pil(b).content_hash()
    pa = write_png(tmp_path / "a.png", color=(0, 0, 0))
    pb = write_png(tmp_path / "b.png", color=(0, 0, 1))
    assert ImageRef.from_path(pa).content_hash() != ImageRef.from_path(pb).content_hash()
    ba = base64.b64encode(_png_bytes(color=(0, 0, 0))).decode()
    bb = base64.b64encode(_png_bytes(color=(0, 0, 1))).decode()
    assert ImageRef.from_base64(ba).content_hash() != ImageRef.from_base64(bb).content_hash()


def test_same_pixels_other_mode_or_size_hash_differently() -> None:
    rgb = Image.new("RGB", (4, 2), (0, 0, 0))
    assert (
        ImageRef.from_pil(rgb).content_hash() != ImageRef.from_pil(rgb.convert("L")).content_hash()
    )
    assert (
        ImageRef.from_pil(Image.new("L", (4, 2))).content_hash()
        != ImageRef.from_pil(Image.new("L", (2, 4))).content_hash()
    )


def _draw_box(recipe: dict[str, Any]) -> Image.Image:
    im = Image.new("RGB", (recipe["size"], recipe["size"]), (255, 255, 255))
    ImageDraw.Draw(im).rectangle((0, 0, recipe["box"], recipe["box"]), fill=(0, 0, 0))
    return im


register_renderer("test-box", "1", _draw_box)


def test_from_recipe_loads_and_hashes() -> None:
    ref = ImageRef.from_recipe("test-box", {"size": 12, "box": 3})
    assert ref.kind == "recipe"
    im = ref.load()
    assert im.size == (12, 12)
    assert im.getpixel((1, 1)) == (0, 0, 0)
    assert im.getpixel((10, 10)) == (255, 255, 255)
    same = ImageRef.from_recipe("test-box", {"box": 3, "size": 12})  # key order is irrelevant
    assert ref.content_hash() == same.content_hash()
    other = ImageRef.from_recipe("test-box", {"size": 12, "box": 4})
    assert ref.content_hash() != other.content_hash()


def test_recipe_hash_changes_with_renderer_version() -> None:
    recipe = {"size": 8, "box": 2}
    register_renderer("test-box-versioned", "1", _draw_box)
    v1 = ImageRef.from_recipe("test-box-versioned", recipe).content_hash()
    register_renderer("test-box-versioned", "2", _draw_box)
    v2 = ImageRef.from_recipe("test-box-versioned", recipe).content_hash()
    assert v1 != v2


def test_unknown_renderer() -> None:
    with pytest.raises(KeyError, match="no-such-renderer"):
        ImageRef.from_recipe("no-such-renderer", {})


@pytest.mark.parametrize(
    "fields",
    [
        {"path": "a.png", "data_b64": "AAAA"},
        {"path": "a.png", "renderer": "test-box", "recipe": {}},
        {"data_b64": "AAAA", "renderer": "test-box", "recipe": {}},
        {"path": "a.png", "data_b64": "AAAA", "renderer": "test-box", "recipe": {}},
    ],
)
def test_only_one_source_allowed(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="only one"):
        ImageRef(**fields)


def test_renderer_needs_recipe() -> None:
    with pytest.raises(ValidationError, match="recipe"):
        ImageRef(renderer="test-box")


def test_empty_ref_cannot_load_or_hash() -> None:
    ref = ImageRef()
    with pytest.raises(ValueError):
        ref.load()
    with pytest.raises(ValueError):
        ref.content_hash()


def test_missing_file_raises_oserror(tmp_path: Path) -> None:
    ref = ImageRef.from_path(tmp_path / "missing.png")
    with pytest.raises(OSError):
        ref.load()
    with pytest.raises(OSError):
        ref.content_hash()


def test_not_an_image_raises_oserror(tmp_path: Path) -> None:
    path = tmp_path / "text.png"
    path.write_text("hello")
    with pytest.raises(OSError):
        ImageRef.from_path(path).load()


# --- Request / Response details users rely on ----------------------------------------------------


def test_response_ok_flag() -> None:
    assert Response(key="k", text="(A)").ok
    failed = Response(key="k", error=ErrorInfo(type="timeout", message="slow", retryable=True))
    assert not failed.ok
    assert failed.text is None


@pytest.mark.parametrize(
    "fields", [{"temperature": -0.1}, {"top_p": 0.0}, {"top_p": 1.5}, {"max_new_tokens": 0}]
)
def test_generation_params_bounds(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GenerationParams(**fields)


def test_recipe_keys_are_sorted_at_every_level() -> None:
    ref = ImageRef.from_recipe(
        "test-box", {"size": 12, "box": 3, "extra": {"b": 1, "a": [{"y": 1, "x": 2}]}}
    )
    assert ref.recipe == {"box": 3, "extra": {"a": [{"x": 2, "y": 1}], "b": 1}, "size": 12}
    assert list(ref.recipe or {}) == ["box", "extra", "size"]
    assert list((ref.recipe or {})["extra"]["a"][0]) == ["x", "y"]


# --- ImageRef copies never keep a stale hash ------------------------------------------------------


def test_image_ref_fields_cannot_be_reassigned() -> None:
    ref = ImageRef.from_recipe("test-box", {"size": 12, "box": 3})
    with pytest.raises(ValidationError, match="frozen"):
        ref.recipe = {"size": 12, "box": 4}


def test_updated_copy_is_validated_and_hashes_its_own_content(tmp_path: Path) -> None:
    ref = ImageRef.from_recipe("test-box", {"size": 12, "box": 3})
    before = ref.content_hash()  # remembered on `ref`
    moved = ref.model_copy(update={"recipe": {"size": 12, "box": 4}})
    assert (
        moved.content_hash()
        == ImageRef.from_recipe("test-box", {"size": 12, "box": 4}).content_hash()
    )
    assert moved.content_hash() != before
    # Validated like a new reference: the recipe in canonical key order, one source only.
    assert list(moved.model_copy(update={"recipe": {"z": 1, "a": 2}}).recipe or {}) == ["a", "z"]
    with pytest.raises(ValidationError, match="only one"):
        ref.model_copy(update={"path": str(tmp_path / "a.png")})


def test_plain_copy_keeps_the_hash_and_equality() -> None:
    ref = ImageRef.from_recipe("test-box", {"size": 12, "box": 3})
    fresh = ImageRef.from_recipe("test-box", {"size": 12, "box": 3})
    ref.content_hash()
    assert ref == fresh  # a remembered hash does not make equal references unequal
    for copied in (ref.model_copy(), ref.model_copy(deep=True)):
        assert copied == ref and copied.content_hash() == fresh.content_hash()


def test_updated_copy_of_a_picture_keeps_the_picture() -> None:
    im = Image.new("RGB", (3, 3), (9, 9, 9))
    ref = ImageRef.from_pil(im)
    # No source field named: the copy is still the same in-memory picture.
    assert ref.model_copy(update={"path": None}).content_hash() == ref.content_hash()


class _Count(int):
    """An integer type other than int itself: read by `token_count`'s general path."""


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_a_plain_int_count_reads_as_the_general_path_reads_it(value: int) -> None:
    # Plain ints and None are read before the (slow) protocol check; any other integer type
    # still takes it, and both must agree.
    read = min(value, MAX_TOKEN_COUNT) if value >= 0 else None  # a negative count is no count
    assert token_count(value) == token_count(_Count(value)) == read


def test_token_count_edge_values() -> None:
    assert token_count(None) is None
    assert token_count(True) is None and token_count(False) is None
    assert token_count(12.0) == 12 and token_count(1.5) is None and token_count("3") is None
    assert token_count(-1) is None and token_count(-3.0) is None and token_count(0) == 0
    # A negative count is unknown, as a missing one (it was 0: free to a budget).
    assert Usage.model_validate({"prompt_tokens": -4, "completion_tokens": 2**40}) == Usage(
        prompt_tokens=None, completion_tokens=MAX_TOKEN_COUNT
    )


def test_a_run_spec_through_the_python_api_bounds_its_bootstrap() -> None:
    """RunSpec is the API's way in: 10^8 resamples would be a MemoryError deep in the results
    step (re-test 11 #12), so the spec refuses it where the CLI's --bootstrap does."""
    assert RunSpec(bootstrap=MAX_BOOTSTRAP).bootstrap == MAX_BOOTSTRAP
    with pytest.raises(ValidationError, match="bootstrap"):
        RunSpec(bootstrap=MAX_BOOTSTRAP + 1)
