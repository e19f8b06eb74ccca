"""Image references: a path, base64 bytes, an in-memory picture, or a deterministic recipe.

Images are loaded lazily and identified by a content hash, so a cache key can name an image
without the image being held in memory.
"""

from __future__ import annotations

import base64 as _b64
import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic_core
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

Renderer = Callable[[dict[str, Any]], Image.Image]

# Renderers for recipe images, registered by name (see `register_renderer`). A recipe image's
# pixels are a pure function of (renderer name, renderer version, recipe), so hashing those
# identifies the content without drawing it.
_RENDERERS: dict[str, tuple[str, Renderer]] = {}


def canonical_recipe(recipe: dict[str, Any]) -> dict[str, Any]:
    """`recipe` with the keys of every dict in it sorted (lists keep their order).

    `ImageRef` validation stores recipes in this form; code that builds recipe references
    without validation (`schema._trusted`) must pass them in it too.
    """
    out = _sorted_keys(recipe)
    assert isinstance(out, dict)
    return out


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        # Ordered by the keys' text, so keys of mixed types (possible from Python) still sort.
        return {k: _sorted_keys(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_sorted_keys(v) for v in value)
    return value


def register_renderer(name: str, version: str, fn: Renderer) -> None:
    """Register a deterministic image renderer usable from `ImageRef.recipe`.

    Args:
        name: Renderer name stored in the recipe reference.
        version: Bumped whenever the renderer's output changes; part of the content hash.
        fn: Function drawing the image from its recipe dictionary.

    """
    _RENDERERS[name] = (version, fn)


class ImageRef(BaseModel):
    """A lazily loaded image with a stable content hash.

    Exactly one of `path`, `data_b64`, `renderer` (with `recipe`) is set for a serializable
    reference; an in-memory picture made with `ImageRef.from_pil` sets none of them.
    """

    model_config = ConfigDict(frozen=False, arbitrary_types_allowed=True)

    path: str | None = Field(
        default=None,
        description="Filesystem path. Data sources resolve paths relative to the dataset file.",
    )
    data_b64: str | None = Field(
        default=None, description="Encoded image bytes (PNG, JPEG...), base64."
    )
    renderer: str | None = Field(
        default=None,
        description="Name of a registered deterministic renderer that draws the image.",
    )
    recipe: dict[str, Any] | None = Field(
        default=None, description="Parameters passed to `renderer`; with it they fix every pixel."
    )

    _image: Image.Image | None = PrivateAttr(default=None)

    @field_validator("recipe")
    @classmethod
    def _canonical_recipe(cls, recipe: dict[str, Any] | None) -> dict[str, Any] | None:
        # Keys sorted at every level, so equal recipes hash equally whatever order they were
        # written in (the hash reads the recipe's JSON in its key order).
        return None if recipe is None else canonical_recipe(recipe)

    @model_validator(mode="after")
    def _one_source(self) -> ImageRef:
        given = [x is not None for x in (self.path, self.data_b64, self.renderer)]
        if sum(given) > 1:
            raise ValueError("an ImageRef takes only one of path, data_b64, renderer")
        if self.renderer is not None and self.recipe is None:
            raise ValueError("an ImageRef with a renderer needs a recipe")
        return self

    @classmethod
    def from_path(cls, path: str | Path) -> ImageRef:
        """Reference an image file (not read until needed)."""
        return cls(path=str(path))

    @classmethod
    def from_base64(cls, data: str) -> ImageRef:
        """Reference base64-encoded image bytes."""
        return cls(data_b64=data)

    @classmethod
    def from_pil(cls, image: Image.Image) -> ImageRef:
        """Wrap an in-memory picture; it is kept in memory for the life of the reference."""
        ref = cls()
        ref._image = image
        return ref

    @classmethod
    def from_recipe(cls, renderer: str, recipe: dict[str, Any]) -> ImageRef:
        """Reference an image drawn on demand by a registered renderer."""
        if renderer not in _RENDERERS:
            raise KeyError(f"no image renderer named {renderer!r}; known: {sorted(_RENDERERS)}")
        return cls(renderer=renderer, recipe=recipe)

    @property
    def kind(self) -> str:
        """One of ``path``, ``base64``, ``recipe``, ``memory``."""
        if self.path is not None:
            return "path"
        if self.data_b64 is not None:
            return "base64"
        if self.renderer is not None:
            return "recipe"
        return "memory"

    def load(self) -> Image.Image:
        """Return the picture as a fully loaded PIL image.

        Files and base64 data are decoded each call (nothing is kept), in-memory pictures are
        returned as they are, and recipes are drawn by their renderer.

        Raises:
            OSError: The file is missing or is not an image Pillow can read.

        """
        if self.path is not None:
            with Image.open(self.path) as im:
                im.load()
                return im
        if self.data_b64 is not None:
            with Image.open(io.BytesIO(_b64.b64decode(self.data_b64))) as im:
                im.load()
                return im
        if self.renderer is not None and self.recipe is not None:
            return _RENDERERS[self.renderer][1](self.recipe)
        if self._image is not None:
            return self._image
        raise ValueError("empty ImageRef: it names no path, data, recipe or picture")

    def content_hash(self) -> str:
        """Hex SHA-256 identifying the image content; computed once and remembered.

        Files and base64 data hash their encoded bytes; in-memory pictures hash mode, size and
        pixels; recipes hash renderer name, renderer version and the recipe's JSON.
        """
        # Remembered in the instance __dict__ (as a cached_property would, minus its lock), so a
        # repeated call costs a dict lookup; a pydantic private attribute would go through the
        # slow __getattr__ path.
        known: str | None = self.__dict__.get("_content_hash")
        if known is None:
            known = self.__dict__["_content_hash"] = self._hash_content()
        return known

    def _hash_content(self) -> str:
        h = hashlib.sha256()
        if self.path is not None:
            with open(self.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        elif self.data_b64 is not None:
            h.update(_b64.b64decode(self.data_b64))
        elif self.renderer is not None:
            version = _RENDERERS[self.renderer][0] if self.renderer in _RENDERERS else "?"
            h.update(f"recipe:{self.renderer}:{version}:".encode())
            # Validated recipes are stored with sorted keys (`canonical_recipe`), so their JSON
            # in key order is canonical. pydantic-core writes it several times faster than the
            # json module would, and this runs for every sample of a run. (A recipe changed
            # later without validation may hash apart from an equal one: a cache miss at worst,
            # never two contents under one hash.)
            h.update(pydantic_core.to_json(self.recipe))
        elif self._image is not None:
            im = self._image
            h.update(f"pixels:{im.mode}:{im.size}:".encode())
            h.update(im.tobytes())
        else:
            raise ValueError("empty ImageRef: it names no path, data, recipe or picture")
        return h.hexdigest()
