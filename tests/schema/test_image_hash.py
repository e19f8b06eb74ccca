"""ImageRef recipe hashes: never stale after an in-place change, never dependent on key order."""

from __future__ import annotations

import hashlib
from typing import Any

import pydantic_core
import pytest
from PIL import Image

from lmmprobe.schema import ImageRef, register_renderer


def _blank(recipe: dict[str, Any]) -> Image.Image:
    return Image.new("RGB", (int(recipe.get("size", 4)), int(recipe.get("size", 4))))


register_renderer("test-hash-blank", "1", _blank)


def fresh(recipe: dict[str, Any]) -> str:
    """The hash of a newly validated reference to `recipe`."""
    return ImageRef.from_recipe("test-hash-blank", recipe).content_hash()


def test_recipe_hash_value_is_pinned() -> None:
    # renderer name, version and the recipe's JSON in sorted key order: cache keys depend on it.
    ref = ImageRef.from_recipe("test-hash-blank", {"size": 8, "a": {"z": [1, 2.5], "b": "x"}})
    expected = hashlib.sha256(
        b'recipe:test-hash-blank:1:{"a":{"b":"x","z":[1,2.5]},"size":8}'
    ).hexdigest()
    assert ref.content_hash() == expected


def test_changing_a_recipe_in_place_changes_the_hash() -> None:
    ref = ImageRef.from_recipe("test-hash-blank", {"size": 8, "a": 1})
    before = ref.content_hash()
    assert ref.recipe is not None
    ref.recipe["b"] = 5
    assert ref.content_hash() != before
    assert ref.content_hash() == fresh({"size": 8, "a": 1, "b": 5})
    ref.recipe["size"] = 9  # an existing key
    assert ref.content_hash() == fresh({"size": 9, "a": 1, "b": 5})
    del ref.recipe["b"], ref.recipe["size"]
    ref.recipe["size"] = 8  # back to the original content, keys now out of order
    assert list(ref.recipe) == ["a", "size"]
    assert ref.content_hash() == before


def test_changing_a_nested_value_in_place_changes_the_hash() -> None:
    ref = ImageRef.from_recipe("test-hash-blank", {"spots": [[0.25, 0.5]], "style": {"w": 1}})
    before = ref.content_hash()
    assert ref.recipe is not None
    ref.recipe["spots"][0][1] = 0.75
    assert ref.content_hash() == fresh({"spots": [[0.25, 0.75]], "style": {"w": 1}})
    ref.recipe["style"]["a"] = 2  # a new key sorting before the old one
    assert ref.content_hash() == fresh({"spots": [[0.25, 0.75]], "style": {"a": 2, "w": 1}})
    ref.recipe["spots"][0][1] = 0.5
    del ref.recipe["style"]["a"]
    assert ref.content_hash() == before


def test_int_to_float_change_in_place_changes_the_hash() -> None:
    # 1 == 1.0 in Python, but their JSON (and so a fresh reference's hash) differs.
    ref = ImageRef.from_recipe("test-hash-blank", {"size": 1})
    ref.content_hash()
    assert ref.recipe is not None
    ref.recipe["size"] = 1.0
    assert ref.content_hash() == fresh({"size": 1.0}) != fresh({"size": 1})


def test_model_construct_hashes_like_a_validated_reference() -> None:
    recipe = {"size": 8, "b": {"y": 1, "x": [{"q": 1, "p": 2}]}, "a": 0}
    validated = ImageRef.from_recipe("test-hash-blank", dict(recipe))
    constructed = ImageRef.model_construct(renderer="test-hash-blank", recipe=recipe)
    assert list(constructed.recipe or {}) == ["size", "b", "a"]  # not canonicalised
    assert constructed.content_hash() == validated.content_hash()
    reordered = dict(reversed(list(recipe.items())))
    again = ImageRef.model_construct(renderer="test-hash-blank", recipe=reordered)
    assert again.content_hash() == validated.content_hash()


def test_model_construct_then_mutated_in_place() -> None:
    ref = ImageRef.model_construct(renderer="test-hash-blank", recipe={"size": 8, "a": 1})
    ref.content_hash()
    assert ref.recipe is not None
    ref.recipe["a"] = 2
    assert ref.content_hash() == fresh({"a": 2, "size": 8})


def test_hash_follows_a_renderer_registered_again() -> None:
    register_renderer("test-hash-reregistered", "1", _blank)
    ref = ImageRef.from_recipe("test-hash-reregistered", {"size": 4})
    v1 = ref.content_hash()
    register_renderer("test-hash-reregistered", "2", _blank)
    v2 = ref.content_hash()
    assert v1 != v2
    assert v2 == ImageRef.from_recipe("test-hash-reregistered", {"size": 4}).content_hash()


def test_copies_hash_their_own_recipe() -> None:
    ref = ImageRef.from_recipe("test-hash-blank", {"size": 8})
    ref.content_hash()
    deep = ref.model_copy(deep=True)
    assert deep.recipe is not None
    deep.recipe["size"] = 9
    assert deep.content_hash() == fresh({"size": 9})
    assert ref.content_hash() == fresh({"size": 8})  # the original's recipe is untouched
    assert ref == ImageRef.from_recipe("test-hash-blank", {"size": 8})


def test_unserialisable_recipe_fails_only_when_hashed() -> None:
    ref = ImageRef.from_recipe("test-hash-blank", {"size": 4, "obj": object()})
    assert ref.kind == "recipe"
    with pytest.raises(pydantic_core.PydanticSerializationError):
        ref.content_hash()
