"""Dysca's metadata M: what one synthetic image shows, sampled from the vocabularies.

Origin: Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating
Perception Ability of LVLMs"). An item's metadata M = (foreground, attributes, background,
style) maps one-to-one to a prompt P, an image I (drawn by a renderer from the *recipe*) and
the question-answer pairs Q (`lmmprobe.synth.questions`).

Item ``i`` of a set with seed ``s`` is drawn from its own stream ``Random(f"{s}:{i}")``, so
items are independent of each other: a worker process can make any item alone, and a larger
set starts with exactly the items of a smaller one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from lmmprobe.imaging import procedural, vocab

__all__ = [
    "COUNT_RANGE",
    "FINE_SUBTASKS",
    "GROUP_SUBTASKS",
    "SUBTASKS",
    "Item",
    "make_item",
]

GROUP_SUBTASKS: tuple[str, ...] = ("animal", "food", "plant", "object", "vehicle")
"""Recognition subtasks: the foreground is a glyph from the vocabulary group of that name."""

SUBTASKS: tuple[str, ...] = (
    *GROUP_SUBTASKS,
    "color",
    "shape",
    "count",
    "ocr",
    "position",
    "size",
    "background",
    "style",
)
"""Perceptual subtasks of the procedural renderer, in the order items cycle through them."""

FINE_SUBTASKS: frozenset[str] = frozenset({*GROUP_SUBTASKS, "ocr", "count", "size"})
"""Subtasks Dysca's export labels ``granularity: fine`` (the rest are coarse)."""

COUNT_RANGE: tuple[int, int] = (1, 6)
"""Objects drawn for the count subtask (inclusive)."""

# Cells of a 3x2 grid (x, y) for several objects: far enough apart that counting is never
# ambiguous, jittered so the layout is not always the same.
_CELLS: tuple[tuple[float, float], ...] = (
    (1 / 6, 0.3),
    (0.5, 0.3),
    (5 / 6, 0.3),
    (1 / 6, 0.72),
    (0.5, 0.72),
    (5 / 6, 0.72),
)


@dataclass(frozen=True)
class Item:
    """One metadata item M and the recipe its image is drawn from.

    Attributes:
        index: Position in the set (the item's random stream is ``f"{seed}:{index}"``).
        seed: The set's seed.
        subtask: Which perceptual subtask the item's questions ask about.
        recipe: What the renderer draws (size, seed, background, style, objects).
        facts: The ground truth the questions are made from (class, group, color, count...).

    """

    index: int
    seed: int
    subtask: str
    recipe: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Stable item id, shared by the item's questions and scenario variants."""
        return f"synth-{self.seed}-{self.index:06d}"


def _style(rng: random.Random, subtask: str) -> str:
    # A style that hides the asked attribute would make the question unanswerable: color
    # questions only get color-keeping styles and OCR questions only legible ones.
    names = sorted(vocab.STYLES)
    if subtask == "color":
        names = [n for n in names if vocab.STYLES[n].keeps_color]
    elif subtask == "ocr":
        names = [n for n in names if vocab.STYLES[n].keeps_text]
    return rng.choice(names)


def _glyph_class(rng: random.Random, group: str | None = None) -> tuple[str, str]:
    group = group or rng.choice(sorted(vocab.GLYPHS))
    return rng.choice(sorted(vocab.GLYPHS[group])), group


def _jitter(rng: random.Random, value: float, amount: float = 0.03) -> float:
    return round(value + rng.uniform(-amount, amount), 4)


def _obj(kind: str, name: str, color: str, x: float, y: float, r: float) -> dict[str, Any]:
    return {"kind": kind, "name": name, "color": color, "x": x, "y": y, "r": round(r, 4)}


def _single(rng: random.Random, kind: str, name: str, color: str) -> dict[str, Any]:
    return _obj(kind, name, color, _jitter(rng, 0.5), _jitter(rng, 0.5), rng.uniform(0.22, 0.3))


def _several(rng: random.Random, kind: str, name: str, color: str, n: int) -> list[dict[str, Any]]:
    cells = list(_CELLS)
    rng.shuffle(cells)
    return [
        _obj(kind, name, color, _jitter(rng, x), _jitter(rng, y), rng.uniform(0.1, 0.13))
        for x, y in sorted(cells[:n])
    ]


def _foreground(rng: random.Random, subtask: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Objects to draw and the facts the questions need."""
    color = rng.choice(sorted(vocab.COLORS))
    if subtask in GROUP_SUBTASKS or subtask in ("color", "background", "style"):
        cls, group = _glyph_class(rng, subtask if subtask in GROUP_SUBTASKS else None)
        count = 1 if subtask in GROUP_SUBTASKS else rng.randint(1, 2)
        objects = (
            [_single(rng, "glyph", cls, color)]
            if count == 1
            else _several(rng, "glyph", cls, color, count)
        )
        return objects, {"class": cls, "group": group, "color": color, "count": count}
    if subtask == "shape":
        shape = rng.choice(vocab.SHAPES)
        return [_single(rng, "shape", shape, color)], {"class": shape, "color": color, "count": 1}
    if subtask == "count":
        cls, group = _glyph_class(rng)
        n = rng.randint(*COUNT_RANGE)
        objects = _several(rng, "glyph", cls, color, n)
        return objects, {"class": cls, "group": group, "color": color, "count": n}
    if subtask == "ocr":
        word = rng.choice(vocab.WORDS)
        r = rng.uniform(0.08, 0.11)
        # Long words at a large size would run off the image: shrink the text so the word
        # (halo included) spans at most 85% of the side.
        width, _ = procedural.text_extent(word, r)
        r = min(r, r * 0.85 / width)
        slack = max(0.0, (1.0 - procedural.text_extent(word, r)[0]) / 2 - 0.02)
        x = round(0.5 + rng.uniform(-1.0, 1.0) * min(0.03, slack), 4)
        obj = _obj("text", word, color, x, _jitter(rng, 0.5), r)
        return [obj], {"word": word, "color": color}
    if subtask == "position":
        cls, group = _glyph_class(rng)
        where = rng.choice(sorted(vocab.POSITIONS))
        x, y = vocab.POSITIONS[where]
        obj = _obj("glyph", cls, color, _jitter(rng, x, 0.02), _jitter(rng, y, 0.02), 0.12)
        return [obj], {"class": cls, "group": group, "color": color, "position": where}
    if subtask == "size":
        group = rng.choice(sorted(vocab.GLYPHS))
        big, small = rng.sample(sorted(vocab.GLYPHS[group]), 2)
        colors = rng.sample(sorted(vocab.COLORS), 2)
        # Left or right at random; radii 0.26 vs 0.12 make "larger" unambiguous.
        sides = [0.3, 0.72] if rng.random() < 0.5 else [0.72, 0.3]
        objects = [
            _obj("glyph", big, colors[0], sides[0], _jitter(rng, 0.5), 0.26),
            _obj("glyph", small, colors[1], sides[1], _jitter(rng, 0.5), 0.12),
        ]
        facts = {"class": big, "smaller": small, "group": group, "color": colors[0]}
        return objects, facts
    raise ValueError(f"unknown subtask {subtask!r} (known: {', '.join(SUBTASKS)})")


def make_item(
    index: int, seed: int, *, subtasks: tuple[str, ...] = SUBTASKS, size: int = 512
) -> Item:
    """Sample item `index` of the set with `seed`: subtasks cycle, everything else is drawn.

    Args:
        index: Item number.
        seed: The set's seed.
        subtasks: Subtasks to cycle through (item ``index`` asks ``subtasks[index % n]``).
        size: Image side in pixels.

    """
    unknown = [s for s in subtasks if s not in SUBTASKS]
    if unknown or not subtasks:
        raise ValueError(f"unknown subtasks {unknown} (known: {', '.join(SUBTASKS)})")
    rng = random.Random(f"{seed}:{index}")
    subtask = subtasks[index % len(subtasks)]
    style = _style(rng, subtask)
    background = rng.choice(sorted(vocab.BACKGROUNDS))
    objects, facts = _foreground(rng, subtask)
    facts.update(style=style, background=background)
    recipe = {
        "size": size,
        "seed": rng.randrange(2**31),
        "background": background,
        "style": style,
        "objects": objects,
    }
    return Item(index=index, seed=seed, subtask=subtask, recipe=recipe, facts=facts)
