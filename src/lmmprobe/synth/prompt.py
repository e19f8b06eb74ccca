"""Text-to-image prompts P built from an item's recipe, Dysca style.

Origin: Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating
Perception Ability of LVLMs") turns its metadata M = (foreground, attributes, background,
style) into a prompt P for Stable Diffusion XL with one template per style, and keeps an image
only when CLIP finds it consistent with P. So P has two readers here: the diffusion renderer
(`lmmprobe.synth.diffusion`) draws from it, and the CLIP cleaning filter scores the image
against it. It therefore says what M says and nothing more:

- the foreground, with counts, colours and sizes ("three red dogs", "a large red dog and a small
  blue cat"), and, for a single object away from the centre, where it is ("in the top left
  corner");
- words to be written, quoted ('the word "APPLE" written in black letters');
- the background and the weather in the vocabulary's phrases;
- the style through a template with its typical texture words ("a watercolor painting of ...,
  soft brush strokes").

Styles that do not keep colours (`StyleInfo.keeps_color` is false: grayscale, sepia, pencil
sketch...) get no colour words, since the image cannot show them. Everything is deterministic:
the same recipe always gives the same text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.imaging import vocab

__all__ = ["NEGATIVE_BASE", "STYLE_TEMPLATES", "build_prompt", "negative_prompt"]

STYLE_TEMPLATES: dict[str, str] = {
    "none": "an image of {subject}",
    "photo": "a photo of {subject}, photorealistic, high quality",
    "pencil_sketch": "a pencil sketch of {subject}, graphite lines on paper",
    "pixel_art": "pixel art of {subject}, 8-bit",
    "grayscale": "a black and white photo of {subject}",
    "sepia": "a sepia photo of {subject}, old brown tones",
    "pop_art": "a pop art print of {subject}, bold flat colors",
    "comic": "a comic book drawing of {subject}, bold ink outlines",
    "watercolor": "a watercolor painting of {subject}, soft brush strokes",
    "oil_painting": "an oil painting of {subject}, thick brush strokes on canvas",
    "neon": "a neon glow drawing of {subject}, glowing lines",
    "halftone": "a halftone print of {subject}, dot pattern",
    "mosaic": "a mosaic of {subject}, made of small square tiles",
    "blueprint": "a blueprint of {subject}, white lines on blue paper",
    "vintage": "a vintage photo of {subject}, faded colors",
    "emboss": "an embossed relief of {subject}, raised gray surface",
}
"""Style name → template with a ``{subject}`` slot: every `vocab.STYLES` key plus ``none``
(no style words beyond "an image of") and ``photo``."""

NEGATIVE_BASE: tuple[str, ...] = (
    "blurry",
    "low quality",
    "lowres",
    "jpeg artifacts",
    "deformed",
    "watermark",
    "signature",
)
"""Negative-prompt terms every image gets: common text-to-image failure modes."""

# Styles drawn or painted by hand should not look like photos, and photographic styles should
# not look drawn: each style pushes away from the other family.
_PHOTO_LIKE = frozenset({"photo", "grayscale", "sepia", "vintage"})
_STYLE_NEGATIVE: dict[str, tuple[str, ...]] = {
    **{s: ("painting", "drawing", "cartoon") for s in _PHOTO_LIKE},
    "none": (),
    "grayscale": ("painting", "drawing", "cartoon", "color"),
    "sepia": ("painting", "drawing", "cartoon", "vivid colors"),
    "pencil_sketch": ("photo", "color", "paint"),
    "blueprint": ("photo", "shading"),
    "emboss": ("photo", "vivid colors"),
}

_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")

# Plurals English does not form with -s / -es / -ies.
_IRREGULAR: dict[str, str] = {
    "mouse": "mice",
    "goose": "geese",
    "tooth": "teeth",
    "foot": "feet",
    "knife": "knives",
    "leaf": "leaves",
    "loaf": "loaves",
    "sheaf": "sheaves",
    "scarf": "scarves",
    "wolf": "wolves",
    "cactus": "cacti",
    "bow and arrow": "bows and arrows",
    "tomato": "tomatoes",
    "potato": "potatoes",
    "mosquito": "mosquitoes",
    "hero": "heroes",
}
# Nouns whose plural is the singular.
_INVARIANT = frozenset(
    {"sheep", "fish", "deer", "moose", "bison", "shrimp", "squid", "dice", "salmon"}
)
# Nouns that are plural or uncountable: counted through a unit ("a pair of jeans", "two bowls
# of rice"), so that every count reads as English and the image still shows the noun.
_UNITS: dict[str, str] = {
    "jeans": "pair",
    "shorts": "pair",
    "glasses": "pair",
    "sunglasses": "pair",
    "goggles": "pair",
    "scissors": "pair",
    "headphones": "pair",
    "french fries": "serving",
    "rice": "bowl",
    "salad": "bowl",
    "spaghetti": "plate",
    "honey": "pot",
    "milk": "glass",
    "coffee": "cup",
    "bubble tea": "cup",
    "beer": "mug",
    "popcorn": "box",
    "butter": "block",
    "bacon": "strip",
    "corn": "ear",
    "wheat": "sheaf",
    "bamboo": "stalk",
    "yarn": "ball",
    "broccoli": "head",
    "garlic": "bulb",
    "cheese": "wedge",
    "bread": "loaf",
    "sushi": "piece",
}
_CORNERS = frozenset({"top left", "top right", "bottom left", "bottom right"})
# Radii differing by this factor or more are worded as "large" and "small".
_SIZE_RATIO = 1.5
_KINDS = ("glyph", "shape", "text")


def build_prompt(recipe: Mapping[str, Any]) -> str:
    """The text-to-image prompt P that describes a recipe.

    Objects of the same kind, name and colour are counted ("three red dogs"); different ones are
    listed ("a red dog and a blue star"). When the groups' radii differ by 1.5× or more they are
    called large and small. A lone object away from the centre gets its place on the 3×3 grid
    ("in the top left corner"). Text objects become quoted words.

    Args:
        recipe: A recipe: ``objects`` (each with ``kind`` glyph | shape | text, ``name``,
            optional ``color``, ``x``, ``y``, ``r``), optional ``background``, ``style``
            (``none`` when absent) and ``weather``.

    Returns:
        The prompt, e.g. ``"a watercolor painting of three red dogs against a blue sky, in
        the snow, soft brush strokes"``.

    Raises:
        ValueError: The recipe has no objects, or names an unknown kind, colour, background,
            style or weather.

    """
    style = _style(recipe)
    keeps_color = style in ("none", "photo") or vocab.STYLES[style].keeps_color
    groups = _groups(recipe)
    things = [g for g in groups if g.kind != "text"]
    texts = [g for g in groups if g.kind == "text"]

    sizes = _size_words([g.radius for g in things])
    phrases = [_noun_phrase(g, size, keeps_color) for g, size in zip(things, sizes, strict=True)]
    subject = _join(phrases)
    if texts:
        words = _text_phrase(texts, keeps_color, on_objects=bool(subject))
        subject = f"{subject}, with {words}" if subject else words
    lone = recipe["objects"][0] if len(recipe["objects"]) == 1 else None
    if lone is not None:
        place = _place(lone)
        if place:
            subject = f"{subject} {place}"

    background, weather = _scene(recipe)
    if background:
        subject = f"{subject} against {background}"
    if weather:
        subject = f"{subject}, {weather}"
    return STYLE_TEMPLATES[style].format(subject=subject)


def negative_prompt(recipe: Mapping[str, Any]) -> str:
    """The negative prompt for a recipe: what the image must not look like.

    Every image avoids the `NEGATIVE_BASE` failure modes. Images without words also avoid
    text (diffusion models like to scribble letters, which would leak into OCR and confuse the
    other subtasks); images with words avoid misspellings instead. Single objects avoid
    duplicates, since the count is part of the ground truth. Styles push away from the other
    family (photographic vs drawn).

    Args:
        recipe: A recipe, as for `build_prompt`.

    Returns:
        Comma-separated negative terms.

    Raises:
        ValueError: As for `build_prompt`.

    """
    style = _style(recipe)
    groups = _groups(recipe)
    _scene(recipe)  # the same recipes are refused by both functions
    terms = list(NEGATIVE_BASE)
    if any(g.kind == "text" for g in groups):
        terms += ["misspelled text", "extra letters"]
    else:
        terms += ["text", "letters", "words"]
    if all(g.count == 1 for g in groups):
        terms.append("duplicates")
    if style in _STYLE_NEGATIVE:
        terms += _STYLE_NEGATIVE[style]
    else:
        terms += ["photo", "photorealistic"]
    return ", ".join(dict.fromkeys(terms))


# --------------------------------------------------------------------------- internals


class _Group:
    """Objects of one kind, name and colour: worded once, with their count."""

    def __init__(self, kind: str, name: str, color: str | None) -> None:
        self.kind, self.name, self.color = kind, name, color
        self.count = 0
        self.radii: list[float] = []

    @property
    def radius(self) -> float:
        return sum(self.radii) / len(self.radii) if self.radii else 0.0


def _style(recipe: Mapping[str, Any]) -> str:
    style = recipe.get("style") or "none"
    if style not in STYLE_TEMPLATES:
        raise ValueError(
            f"recipe style {style!r} is unknown; known: {', '.join(sorted(STYLE_TEMPLATES))}"
        )
    return str(style)


def _scene(recipe: Mapping[str, Any]) -> tuple[str, str]:
    """The background and weather phrases ("" when absent)."""
    background, weather = recipe.get("background"), recipe.get("weather")
    if background is not None and background not in vocab.BACKGROUNDS:
        raise ValueError(
            f"recipe background {background!r} is unknown; "
            f"known: {', '.join(sorted(vocab.BACKGROUNDS))}"
        )
    if weather is not None and weather not in vocab.WEATHERS:
        raise ValueError(
            f"recipe weather {weather!r} is unknown; known: {', '.join(sorted(vocab.WEATHERS))}"
        )
    return (
        vocab.BACKGROUNDS[background] if background is not None else "",
        vocab.WEATHERS[weather] if weather is not None else "",
    )


def _groups(recipe: Mapping[str, Any]) -> list[_Group]:
    objects = recipe.get("objects")
    if not isinstance(objects, Sequence) or isinstance(objects, str) or not objects:
        raise ValueError("recipe needs a non-empty list of objects")
    groups: dict[tuple[str, str, str | None], _Group] = {}
    for i, obj in enumerate(objects):
        if not isinstance(obj, Mapping):
            raise ValueError(f"recipe objects[{i}] must be a dict, got {type(obj).__name__}")
        kind, name, color = obj.get("kind"), obj.get("name"), obj.get("color")
        if kind not in _KINDS:
            raise ValueError(f"recipe objects[{i}].kind must be one of {_KINDS}, got {kind!r}")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"recipe objects[{i}].name must be a non-empty string")
        if color is not None and color not in vocab.COLORS:
            raise ValueError(
                f"recipe objects[{i}].color {color!r} is unknown; known: {', '.join(vocab.COLORS)}"
            )
        key = (str(kind), name.strip(), color)
        group = groups.setdefault(key, _Group(*key))
        group.count += 1
        if "r" in obj:
            group.radii.append(float(obj["r"]))
    return list(groups.values())


def _size_words(radii: list[float]) -> list[str]:
    """Size words per group ("large", "small", "medium-sized") when their radii differ enough."""
    if len(radii) < 2 or min(radii) <= 0 or max(radii) / min(radii) < _SIZE_RATIO:
        return [""] * len(radii)
    lo, hi = min(radii), max(radii)
    words = []
    for r in radii:
        big, small = r / lo >= _SIZE_RATIO, hi / r >= _SIZE_RATIO
        words.append("medium-sized" if big and small else "large" if big else "small")
    return words


def _count_word(n: int) -> str:
    return _NUMBERS[n] if n < len(_NUMBERS) else str(n)


def _article(phrase: str) -> str:
    first = phrase.split()[0].lower()
    vowel_sound = first[0] in "aeiou" and not first.startswith(("uni", "use", "eu", "one"))
    return "an" if vowel_sound or first.startswith("hour") else "a"


def _plural(noun: str) -> str:
    """English plural of a (possibly multi-word) noun: the head word is inflected.

    The head is the last word ("hot dog" → "hot dogs"), or the word before "of" ("statue of
    liberty" → "statues of liberty").
    """
    if noun in _IRREGULAR:
        return _IRREGULAR[noun]
    words = noun.split(" ")
    head = words.index("of") - 1 if "of" in words[1:] else len(words) - 1
    words[head] = _plural_word(words[head])
    return " ".join(words)


def _plural_word(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _INVARIANT:
        return word
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _noun_phrase(group: _Group, size: str, keeps_color: bool) -> str:
    """A counted noun phrase: "three red dogs", "a large blue star", "two bowls of rice"."""
    adjectives = [a for a in (size, group.color if keeps_color else None) if a]
    unit = _UNITS.get(group.name)
    if unit is not None:
        head = unit if group.count == 1 else _plural(unit)
        noun = f"{head} of {group.name}"
    else:
        noun = group.name if group.count == 1 else _plural(group.name)
    phrase = " ".join([*adjectives, noun])
    if group.count == 1:
        return f"{_article(phrase)} {phrase}"
    return f"{_count_word(group.count)} {phrase}"


def _text_phrase(groups: list[_Group], keeps_color: bool, *, on_objects: bool) -> str:
    """Quoted words: 'the word "APPLE" written in black letters', 'the words "A" and "B"'.

    Words drawn beside other objects are "written on it" when no colour is said, so the phrase
    never ends on a dangling "written".
    """
    parts = []
    for group in groups:
        quoted = f'"{group.name}"'
        if group.count > 1:
            quoted = f"{quoted} {_count_word(group.count)} times"
        parts.append((quoted, group.color if keeps_color else None))
    noun = "the word" if len(parts) == 1 else "the words"
    colors = {c for _, c in parts}
    if len(colors) == 1:
        color = colors.pop()
        listed = _join([q for q, _ in parts])
        if color:
            return f"{noun} {listed} written in {color} letters"
        return f"{noun} {listed} written on it" if on_objects else f"{noun} {listed}"
    return f"{noun} {_join([f'{q} in {c} letters' if c else q for q, c in parts])}"


def _join(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _place(obj: Mapping[str, Any]) -> str:
    """Where a lone object sits on the 3×3 grid; nothing when it is in the centre cell."""
    if "x" not in obj or "y" not in obj:
        return ""
    x, y = float(obj["x"]), float(obj["y"])
    name = min(
        vocab.POSITIONS,
        key=lambda n: (vocab.POSITIONS[n][0] - x) ** 2 + (vocab.POSITIONS[n][1] - y) ** 2,
    )
    if name == "center":
        return ""
    if name in _CORNERS:
        return f"in the {name} corner"
    return f"at the {name}" if name in ("top", "bottom") else f"on the {name}"
