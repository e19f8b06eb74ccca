"""APEx's select tools: the starting image of a sample, generated or retrieved.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"). Every answer of an APEx experiment starts from one select call:

- ``TextToImageGeneration(class_name, image_type="photo")`` draws the class. APEx prompts
  SDXL-Turbo with "a {image_type} of a {class_name}"; here generation goes through lmmprobe's
  renderers: the procedural renderer (`lmmprobe.imaging.procedural`, offline, draws the classes
  of its vocabulary) by default, or a diffusion renderer when the `SelectContext` holds one (any
  class name, rendered from a recipe).
- ``TextToImageRetrieval(class_name, image_type="photo")`` takes a real image of the class from a
  local labelled collection (`lmmprobe.tools.retrieval`). The name is matched to the collection's
  classes by all-MiniLM-L6-v2 cosine similarity; below APEx's threshold (0.95), for a non-photo
  image type, or without a collection, the tool generates instead and its note says why.

Matching names by meaning needs a sentence embedder, which the caller hands to the
`SelectContext` (APEx passes `lmmprobe.metrics.embedding.SentenceEmbedder`): tools sit below
metrics and never import it. Without one, only exact class names (and ``random``) resolve.

The class name ``random`` picks a class at random (seeded): any drawable class for generation,
any collection class for retrieval. ``random:GROUP`` (an lmmprobe extension) picks within one
group: a vocabulary group of the procedural renderer, or a taxonomy group of the collection
(ImageNet-X's metaclasses, e.g. ``random:dog``).

Selection is seeded: the same call with the same seed gives the same image. Class names are
validated before anything runs: at most 80 characters of letters, digits, spaces and
``' & . , ( ) - :``; no path separators, ``..`` or double underscores.
"""

from __future__ import annotations

import contextlib
import functools
import random
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from PIL import Image
from pydantic import AfterValidator, Field

from lmmprobe.imaging import procedural, vocab
from lmmprobe.tools.registry import SelectedImage, ToolCallError, select_tool
from lmmprobe.tools.retrieval import (
    APEX_MATCH_THRESHOLD,
    ClassMatcher,
    CollectionError,
    Embedder,
    LabelledCollection,
    normalize_class,
)

__all__ = [
    "RANDOM",
    "ClassName",
    "ImageRenderer",
    "ImageType",
    "SelectContext",
    "SelectedImage",
    "active_context",
    "current_context",
    "current_subject",
    "drawable_classes",
    "fit_to",
    "generate_image",
    "image_types",
    "is_random",
    "random_class",
    "text_to_image_generation",
    "text_to_image_retrieval",
]

RANDOM = "random"
"""The class keyword that samples a class (``random:GROUP`` samples within a group)."""

_CLASS_PATTERN = r"^[\w][\w '&.,()\-:]*$"


def _check_class_name(value: str) -> str:
    # The pattern already excludes separators; these catch traversal and dunder tricks that
    # only use allowed characters.
    if ".." in value or "__" in value:
        raise ValueError("class names may not contain '..' or '__'")
    if any(not c.isprintable() for c in value):  # the pattern's "$" lets a final newline pass
        raise ValueError("class names may not contain control characters or line breaks")
    return " ".join(value.split())


ClassName = Annotated[
    str,
    AfterValidator(_check_class_name),
    Field(
        min_length=1,
        max_length=80,
        pattern=_CLASS_PATTERN,
        description="An object class in plain words (e.g. 'dog', 'fire truck'); 'random' for any "
        "class, 'random:GROUP' for any class of a group (e.g. 'random:dog').",
    ),
]
"""A class name as select tools and PasteGeneratedObjectAtRandomPosition accept it."""


def image_types() -> list[str]:
    """The image types generation accepts: ``photo`` and the renderer vocabulary's styles."""
    return ["photo", *sorted(vocab.STYLES)]


def _check_image_type(value: str) -> str:
    # A style's phrase ("pencil sketch") or its name in any case stands for the style's key.
    known = {normalize_class(info.phrase): name for name, info in vocab.STYLES.items()}
    known.update({normalize_class(n): n for n in image_types()})
    found = known.get(normalize_class(value))
    if found is None:
        raise ValueError(
            f"unknown image type {value!r}; known image types: {', '.join(image_types())}"
        )
    return found


def _image_type_enum(schema: dict[str, Any]) -> None:
    schema["enum"] = image_types()


ImageType = Annotated[
    str,
    Field(
        min_length=1,
        max_length=40,
        description="Kind of picture: 'photo' (default) or a style of the renderer; "
        "non-photo types are always generated.",
        json_schema_extra=_image_type_enum,
    ),
    AfterValidator(_check_image_type),
]


class ImageRenderer(Protocol):
    """A recipe renderer such as `lmmprobe.synth.diffusion.DiffusionRenderer`."""

    def render(self, recipes: Sequence[Mapping[str, Any]]) -> Sequence[Image.Image]:
        """One image per recipe, in order."""
        ...


@functools.cache
def _shared_embedder(factory: Callable[[], Embedder]) -> Embedder:
    # Loading MiniLM takes about a second: contexts given the same factory share one embedder.
    return factory()


@dataclass
class SelectContext:
    """What select tools (and the generated-content transforms) draw on.

    Attributes:
        renderer: None for the procedural renderer, or a recipe renderer (a
            `DiffusionRenderer`) for open-vocabulary generation.
        collection: The labelled collection retrieval draws from, or None (retrieval then
            always generates).
        size: Side in pixels of generated images; retrieved images are resized and
            center-cropped to it, so answers do not differ by image size.
        match_threshold: Cosine similarity a retrieval class match needs (APEx: 0.95).
        generation_match_threshold: Cosine similarity the procedural renderer needs to draw its
            closest class for a name it does not know (e.g. "puppy" → "dog", 0.80).
        embedder: Zero-argument factory of the sentence embedder that matches class names by
            meaning (e.g. `lmmprobe.metrics.embedding.SentenceEmbedder`), called on first need,
            once per process for a given factory; None: exact class names only.

    """

    renderer: ImageRenderer | None = None
    collection: LabelledCollection | None = None
    size: int = 256
    match_threshold: float = APEX_MATCH_THRESHOLD
    generation_match_threshold: float = 0.8
    embedder: Callable[[], Embedder] | None = None
    _embedder: Embedder | None = field(default=None, init=False, repr=False)
    _drawable_matcher: ClassMatcher | None = field(default=None, init=False, repr=False)
    _collection_matcher: ClassMatcher | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 16 <= self.size <= 2048:
            raise ValueError(f"SelectContext.size must be 16-2048 pixels, got {self.size}")
        for name in ("match_threshold", "generation_match_threshold"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"SelectContext.{name} is a cosine, -1 to 1")

    @property
    def renderer_name(self) -> str:
        """``"procedural"``, or ``"diffusion:<renderer>"`` for a configured renderer."""
        if self.renderer is None:
            return "procedural"
        model = getattr(self.renderer, "model", None)
        return f"diffusion:{model or type(self.renderer).__name__}"

    @property
    def renderer_identity(self) -> dict[str, Any] | None:
        """What decides a configured renderer's images (its ``identity``), else None."""
        identity = getattr(self.renderer, "identity", None)
        return dict(identity) if isinstance(identity, Mapping) else None

    def get_embedder(self) -> Embedder:
        """The sentence embedder (loaded on first call).

        Raises:
            ToolCallError: The context has no embedder factory.

        """
        if self._embedder is None:
            if self.embedder is None:
                raise ToolCallError(
                    "matching class names by meaning needs a sentence embedder, and this "
                    "SelectContext has none: use an exact class name or 'random', or create the "
                    "context with embedder=lmmprobe.metrics.embedding.SentenceEmbedder"
                )
            self._embedder = _shared_embedder(self.embedder)
        return self._embedder

    def drawable_matcher(self) -> ClassMatcher:
        """A matcher over the procedural renderer's classes (built once per embedder)."""
        if self._drawable_matcher is None:
            embedder = self.get_embedder()
            # Embedding the ~400 class names takes seconds on a CPU: contexts sharing an
            # embedder share the matcher (and its embeddings) too.
            try:
                matcher = _DRAWABLE_MATCHERS.get(embedder)
            except TypeError:  # an embedder that cannot be weakly referenced
                matcher = None
            if matcher is None:
                matcher = ClassMatcher(drawable_classes(), lambda: embedder)
                with contextlib.suppress(TypeError):
                    _DRAWABLE_MATCHERS[embedder] = matcher
            self._drawable_matcher = matcher
        return self._drawable_matcher

    def collection_matcher(self) -> ClassMatcher:
        """A matcher over the collection's class names with this context's embedder (built once).

        The known names' embeddings are cached on disk (`ClassMatcher`), so another context
        over the same collection and embedder model pays only for its queries.

        Raises:
            ToolCallError: The context has no collection.

        """
        if self.collection is None:
            raise ToolCallError("no retrieval collection is set")
        if self._collection_matcher is None:
            self._collection_matcher = ClassMatcher(self.collection.classes, self.get_embedder)
        return self._collection_matcher


_DRAWABLE_MATCHERS: weakref.WeakKeyDictionary[Any, ClassMatcher] = weakref.WeakKeyDictionary()


# ---------------------------------------------------------------------------------------------
# The context transforms see


@dataclass(frozen=True)
class _Active:
    context: SelectContext
    subject: str | None


_ACTIVE: ContextVar[_Active | None] = ContextVar("lmmprobe_tools_active", default=None)


@functools.cache
def _default_context() -> SelectContext:
    return SelectContext()


@contextmanager
def active_context(context: SelectContext, subject: str | None = None) -> Iterator[None]:
    """Make `context` (and the image's class, `subject`) what transforms see while inside.

    Transforms have the signature ``fn(image, rng, **args)``; the generated-content ones
    (second images, pasted objects, style and weather edits) read the renderer and the current
    image's class from here. `lmmprobe.tools.compose.compose` sets it; outside, transforms use
    the procedural renderer and no subject.
    """
    token = _ACTIVE.set(_Active(context, subject))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def current_context() -> SelectContext:
    """The context set by `active_context`, else a default procedural one."""
    active = _ACTIVE.get()
    return active.context if active is not None else _default_context()


def current_subject() -> str | None:
    """The class of the image being transformed, when `active_context` named it."""
    active = _ACTIVE.get()
    return active.subject if active is not None else None


# ---------------------------------------------------------------------------------------------
# Generation


def drawable_classes() -> dict[str, str]:
    """The classes the procedural renderer draws, each with its vocabulary group."""
    return dict(procedural.drawable_classes())


def _groups_of(classes: Mapping[str, str | None]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c, g in classes.items():
        if g is not None:
            out.setdefault(g, []).append(c)
    return {g: sorted(cs) for g, cs in out.items()}


def random_class(
    rng: random.Random,
    classes: Mapping[str, str | None],
    request: str = RANDOM,
    *,
    exclude: str | None = None,
) -> str:
    """Draw a class for ``random`` or ``random:GROUP`` from `classes` (class → group).

    Args:
        rng: The call's random source.
        classes: Candidate classes and their groups.
        request: ``random`` or ``random:GROUP``.
        exclude: A class not to draw (the current image's, for a second image).

    Raises:
        ToolCallError: Unknown group (the message lists the known ones), or nothing to draw.

    """
    _, _, group = request.partition(":")
    group = group.strip()
    pool = sorted(classes)
    if group:
        groups = _groups_of(classes)
        match = next((g for g in groups if normalize_class(g) == normalize_class(group)), None)
        if match is None:
            raise ToolCallError(
                f"no class group {group!r}; groups: {', '.join(sorted(groups)) or '(none)'}"
            )
        pool = groups[match]
    candidates = [c for c in pool if c != exclude] or pool
    if not candidates:
        raise ToolCallError("there is no class to draw from")
    return candidates[rng.randrange(len(candidates))]


def is_random(class_name: str) -> bool:
    """Whether a class name is the ``random`` keyword (with or without a group)."""
    head, _, _ = class_name.partition(":")
    return head.strip().lower() == RANDOM


def fit_to(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Scale `image` to cover `size` and center-crop it to exactly `size` (RGB)."""
    image = image.convert("RGB")
    w, h = size
    if image.size == size:
        return image
    scale = max(w / image.width, h / image.height)
    nw, nh = max(w, round(image.width * scale)), max(h, round(image.height * scale))
    image = image.resize((nw, nh), Image.Resampling.BICUBIC)
    left, top = (nw - w) // 2, (nh - h) // 2
    return image.crop((left, top, left + w, top + h))


def _resolve_drawable(class_name: str, context: SelectContext) -> tuple[str, str | None]:
    classes = drawable_classes()
    exact = {normalize_class(c): c for c in classes}.get(normalize_class(class_name))
    if exact is not None:
        return exact, None
    ranked = context.drawable_matcher().rank(class_name, k=5)
    if ranked and ranked[0][1] >= context.generation_match_threshold:
        best, score = ranked[0]
        return best, (
            f"the procedural renderer has no class {class_name!r}; it drew its closest class "
            f"{best!r} (name cosine {score:.2f})"
        )
    closest = ", ".join(f"{n} ({s:.2f})" for n, s in ranked)
    raise ToolCallError(
        f"the procedural renderer cannot draw {class_name!r}: no drawable class is close enough "
        f"(cosine ≥ {context.generation_match_threshold}); closest: {closest}. Use one of "
        "those names, 'random', or configure a diffusion renderer for other classes"
    )


def _render_procedural(class_name: str, image_type: str, size: int, seed: int) -> Image.Image:
    try:
        image = procedural.render_class_image(
            class_name, image_type=image_type, size=size, seed=seed
        )
    except KeyError as exc:
        raise ToolCallError(f"the procedural renderer cannot draw {class_name!r}") from exc
    except ValueError as exc:  # e.g. an image type the renderer does not know
        raise ToolCallError(f"the procedural renderer rejected the request: {exc}") from exc
    return fit_to(image, (size, size))


def _recipe(class_name: str, image_type: str, size: int, seed: int) -> dict[str, Any]:
    return {
        "size": size,
        "seed": seed,
        "background": None,
        "style": image_type,  # "photo" or a style key: the prompt builder has a template for each
        "objects": [
            {"kind": "glyph", "name": class_name, "color": None, "x": 0.5, "y": 0.5, "r": 0.3}
        ],
    }


def generate_image(
    context: SelectContext,
    class_name: str,
    *,
    seed: int,
    image_type: str = "photo",
    exclude: str | None = None,
) -> SelectedImage:
    """Generate an image of a class through the context's renderer.

    Args:
        context: Renderer and size.
        class_name: The class, ``random`` or ``random:GROUP``.
        seed: Seed of the rendering (and of the random class draw).
        image_type: ``photo`` or another kind of picture (passed to the renderer).
        exclude: A class ``random`` must not draw.

    Returns:
        The generated image, the class drawn, and a note when the class is a near match.

    Raises:
        ToolCallError: The procedural renderer cannot draw anything close to `class_name`.

    """
    rng = random.Random(f"generate:{seed}")
    note: str | None = None
    if is_random(class_name):
        drawn = random_class(rng, drawable_classes(), class_name, exclude=exclude)
    elif context.renderer is None:
        drawn, note = _resolve_drawable(class_name, context)
    else:
        drawn = class_name  # a diffusion renderer draws any name
    render_seed = rng.randrange(2**31)
    if context.renderer is None:
        image = _render_procedural(drawn, image_type, context.size, render_seed)
    else:
        images = context.renderer.render([_recipe(drawn, image_type, context.size, render_seed)])
        image = fit_to(images[0], (context.size, context.size))
    return SelectedImage(image=image, class_name=drawn, source="generated", note=note)


# ---------------------------------------------------------------------------------------------
# The select tools


@select_tool("TextToImageGeneration", "Generate an image of a class (procedural or diffusion).")
def text_to_image_generation(
    rng: random.Random,
    context: SelectContext,
    class_name: ClassName,
    image_type: ImageType = "photo",
) -> SelectedImage:
    """Generate an image of `class_name` as an `image_type` (APEx: "a {image_type} of a {class}").

    The procedural renderer draws the classes of its vocabulary; a name it does not know is
    drawn as its closest class by sentence-embedding similarity when that is close enough (the
    result's note says so), and is rejected otherwise with the closest names to use instead.
    A diffusion renderer, when configured, draws any name. ``random`` draws any drawable class,
    ``random:GROUP`` one of a vocabulary group.
    """
    return generate_image(context, class_name, seed=rng.randrange(2**31), image_type=image_type)


def _fallback(
    context: SelectContext, class_name: str, image_type: str, seed: int, why: str
) -> SelectedImage:
    generated = generate_image(context, class_name, seed=seed, image_type=image_type)
    note = f"{why}; generated instead"
    if generated.note:
        note += f" ({generated.note})"
    return SelectedImage(generated.image, generated.class_name, "generated", note)


@select_tool("TextToImageRetrieval", "Retrieve a real image of a class from the image collection.")
def text_to_image_retrieval(
    rng: random.Random,
    context: SelectContext,
    class_name: ClassName,
    image_type: ImageType = "photo",
) -> SelectedImage:
    """Take a seeded random image of `class_name` from the labelled collection.

    The name is matched to the collection's class names by all-MiniLM-L6-v2 cosine similarity
    (an exact name always matches). Below the threshold (APEx: 0.95), for an `image_type` other
    than ``photo``, or when no collection is configured, the image is generated instead
    (TextToImageGeneration) and the result's note says why. ``random`` takes any class of the
    collection, ``random:GROUP`` any class of a taxonomy group (e.g. ``random:dog`` with
    ImageNet-X's metaclasses). Retrieved images are resized and center-cropped to the
    context's size.
    """
    seed = rng.randrange(2**31)
    collection = context.collection
    if collection is None:
        return _fallback(context, class_name, image_type, seed, "no retrieval collection is set")
    if normalize_class(image_type) != "photo":
        return _fallback(
            context,
            class_name,
            image_type,
            seed,
            f"the collection holds photos and {image_type!r} was asked",
        )
    if is_random(class_name):
        groups = {c: collection.group_of(c) for c in collection.classes}
        chosen = random_class(rng, groups, class_name)
        note = None
    else:
        match = context.collection_matcher().match(class_name, context.match_threshold)
        if not match.matched:
            why = (
                f"no class of {collection.source} matches {class_name!r} (closest "
                f"{match.best!r}, cosine {match.score:.2f} < {context.match_threshold})"
            )
            return _fallback(context, class_name, image_type, seed, why)
        chosen = str(match.best)
        note = (
            None
            if normalize_class(chosen) == normalize_class(class_name)
            else f"matched {class_name!r} to the collection's class {chosen!r} "
            f"(cosine {match.score:.2f})"
        )
    try:
        image, path = collection.pick(chosen, rng)
    except CollectionError as exc:
        raise ToolCallError(f"TextToImageRetrieval: {exc}") from exc
    return SelectedImage(
        fit_to(image, (context.size, context.size)), chosen, "retrieved", note, path
    )
