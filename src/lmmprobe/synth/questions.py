"""Dysca's question rules: three questions per metadata item, ground truth known by construction.

Origin: Dysca (Zhang et al., 2024). Every item yields

- a multiple-choice question: 4 options, the truth and 3 distractors drawn from the same
  vocabulary list (for recognition subtasks, the same group), shuffled with the item's stream;
- a true/false question: with p = 0.5 about a negative drawn from the same list (answer
  "no"), else about the truth (answer "yes");
- a free-form question, Dysca's ``Please describe the image. You can describe it from these
  aspects: ...``, whose reference is the comma-joined attributes of M (e.g. ``red color dog, on
  a blue sky background, watercolor style``), scored by sentence-embedding similarity.

Choice questions carry ``metadata.prompt_style = "dysca"`` so that, by default, they are asked
with Dysca's instruction wording (see `FormulateConfig.prompt_style`).
"""

from __future__ import annotations

import random
from typing import Any

from lmmprobe.imaging import vocab
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.synth.metadata import COUNT_RANGE, FINE_SUBTASKS, GROUP_SUBTASKS, Item

__all__ = [
    "FREE_FORM_PROMPT",
    "QUESTION_TYPES",
    "free_form_reference",
    "item_questions",
    "plural",
]

QUESTION_TYPES: tuple[str, ...] = ("multiple_choice", "true_false", "free_form")
"""Dysca's three question types (``metadata.question_type``)."""

FREE_FORM_PROMPT = "Please describe the image. You can describe it from these aspects: {aspects}."
"""Dysca's free-form instruction."""

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six")
_IRREGULAR = {
    "mouse": "mice",
    "goose": "geese",
    "sheep": "sheep",
    "fish": "fish",
    "deer": "deer",
    "ox": "oxen",
    "bison": "bison",
    "shrimp": "shrimp",
    "squid": "squid",
    "leaf": "leaves",
    "knife": "knives",
    "loaf": "loaves",
    "wolf": "wolves",
    "tooth": "teeth",
    "foot": "feet",
    "cactus": "cacti",
    "octopus": "octopuses",
    "bus": "buses",
    "taxi": "taxis",
    "potato": "potatoes",
    "tomato": "tomatoes",
    "mango": "mangoes",
}


def plural(noun: str) -> str:
    """English plural of a (possibly multi-word) class name: the last word is inflected."""
    head, _, last = noun.rpartition(" ")
    if last in _IRREGULAR:
        word = _IRREGULAR[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        word = last + "es"
    elif last.endswith("y") and last[-2:-1] not in tuple("aeiou"):
        word = last[:-1] + "ies"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


def _article(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _mc(rng: random.Random, truth: str, pool: list[str]) -> tuple[list[str], int]:
    """Four options: the truth and three distinct distractors from `pool`, shuffled."""
    others = sorted({p for p in pool if p != truth})
    if len(others) < 3:
        raise ValueError(f"{truth!r}: need 3 distractors, the list has {len(others)}")
    options = [truth, *rng.sample(others, 3)]
    rng.shuffle(options)
    return options, options.index(truth)


def _tf(rng: random.Random, truth: str, pool: list[str]) -> tuple[str, bool]:
    """What a true/false question asks about: the truth, or with p = 0.5 a negative."""
    if rng.random() < 0.5:
        return rng.choice(sorted({p for p in pool if p != truth})), False
    return truth, True


def _counted(n: int, noun: str, color: str | None = None) -> str:
    words = [_NUMBER_WORDS[n]] + ([color] if color else [])
    return " ".join([*words, noun if n == 1 else plural(noun)])


def free_form_reference(item: Item) -> str:
    """The reference description: M's attributes joined by commas, as Dysca writes them."""
    f = item.facts
    background = vocab.BACKGROUNDS[f["background"]]
    if not background.endswith("background"):
        background += " background"
    style = vocab.STYLES[f["style"]].phrase
    if item.subtask == "ocr":
        subject = f'the word "{f["word"]}" written in {f["color"]}'
    elif item.subtask == "size":
        subject = f"a large {f['class']} and a small {f['smaller']}"
    elif f.get("count", 1) > 1:
        subject = _counted(f["count"], f["class"], f["color"])
    else:
        subject = f"{f['color']} color {f['class']}"
    if item.subtask == "position":
        subject += f" at the {f['position']}"
    return f"{subject}, on {background}, {style} style"


_ASPECTS: dict[str, str] = {
    "color": "object, color, background, style",
    "shape": "shape, color, background, style",
    "count": "objects, number, color, background, style",
    "ocr": "text, color, background, style",
    "position": "object, position, background, style",
    "size": "objects, size, background, style",
    "background": "object, background, style",
    "style": "object, background, style",
}


def _choice_question(item: Item) -> tuple[str, str, list[str], str]:
    """(multiple-choice question, truth, the list distractors come from, true/false template)."""
    f = item.facts
    s = item.subtask
    if s in GROUP_SUBTASKS:
        pool = sorted(vocab.GLYPHS[f["group"]])
        return f"What {s} is in the image?", f["class"], pool, "Is there {x} in the image?"
    if s == "color":
        subject = f"the {f['class']}" if f["count"] == 1 else f"the {plural(f['class'])}"
        verb = "is" if f["count"] == 1 else "are"
        return (
            f"What color {verb} {subject} in the image?",
            f["color"],
            sorted(vocab.COLORS),
            f"{verb.capitalize()} {subject} in the image {{x}}?",
        )
    if s == "shape":
        return (
            "What shape is in the image?",
            f["class"],
            list(vocab.SHAPES),
            "Is there {x} in the image?",
        )
    if s == "count":
        lo, hi = COUNT_RANGE
        return (
            f"How many {plural(f['class'])} are in the image?",
            str(f["count"]),
            [str(n) for n in range(lo, hi + 1)],
            f"Are there exactly {{x}} {plural(f['class'])} in the image?",
        )
    if s == "ocr":
        return (
            "What word is written in the image?",
            f["word"],
            list(vocab.WORDS),
            'Is the word "{x}" written in the image?',
        )
    if s == "position":
        return (
            f"Where is the {f['class']} in the image?",
            f["position"],
            sorted(vocab.POSITIONS),
            f"Is the {f['class']} at the {{x}} of the image?",
        )
    if s == "size":
        pool = sorted(vocab.GLYPHS[f["group"]])
        return (
            "Which object is the largest in the image?",
            f["class"],
            pool,
            "Is the {x} the largest object in the image?",
        )
    if s == "background":
        pool = [vocab.BACKGROUNDS[b] for b in sorted(vocab.BACKGROUNDS)]
        return (
            "What is the background of the image?",
            vocab.BACKGROUNDS[f["background"]],
            pool,
            "Is the background of the image {x}?",
        )
    if s == "style":
        pool = [vocab.STYLES[n].phrase for n in sorted(vocab.STYLES)]
        return (
            "What is the style of the image?",
            vocab.STYLES[f["style"]].phrase,
            pool,
            "Is the image in {x} style?",
        )
    raise ValueError(f"unknown subtask {s!r}")


def _tf_text(template: str, asked: str, subtask: str) -> str:
    if subtask in GROUP_SUBTASKS or subtask == "shape":
        asked = _article(asked)
    return template.format(x=asked)


def item_questions(item: Item, image: ImageRef, *, scenario: str = "clean") -> list[Sample]:
    """The item's three questions (multiple choice, true/false, free form) about `image`.

    The choices are drawn from the item's own stream, so every scenario variant of an item
    asks exactly the same questions.
    """
    rng = random.Random(f"{item.seed}:{item.index}:questions")
    question, truth, pool, tf_template = _choice_question(item)
    if item.subtask == "size":
        # The smaller object is in the image: it is the one distractor that must be offered,
        # and the negative a true/false question asks about.
        smaller = item.facts["smaller"]
        rest = sorted({p for p in pool if p not in (truth, smaller)})
        options = [truth, smaller, *rng.sample(rest, 2)]
        rng.shuffle(options)
        answer = options.index(truth)
        asked, holds = (smaller, False) if rng.random() < 0.5 else (truth, True)
    else:
        options, answer = _mc(rng, truth, pool)
        asked, holds = _tf(rng, truth, pool)
    base: dict[str, Any] = {
        "task": "synth",
        "subtask": item.subtask,
        "item": item.id,
        "scenario": scenario,
        "style": item.facts["style"],
        "background": item.facts["background"],
        "granularity": "fine" if item.subtask in FINE_SUBTASKS else "coarse",
    }
    suffix = f"@{scenario}"
    aspects = _ASPECTS.get(item.subtask, f"{item.subtask}, color, background, style")
    return [
        Sample(
            id=f"{item.id}-mc{suffix}",
            images=[image],
            question=question,
            choices=options,
            answer=answer,
            formulation="single_choice",
            metadata={**base, "question_type": "multiple_choice", "prompt_style": "dysca"},
        ),
        Sample(
            id=f"{item.id}-tf{suffix}",
            images=[image],
            question=_tf_text(tf_template, asked, item.subtask),
            choices=["yes", "no"],
            answer=0 if holds else 1,
            formulation="true_false",
            metadata={**base, "question_type": "true_false", "prompt_style": "dysca"},
        ),
        Sample(
            id=f"{item.id}-ff{suffix}",
            images=[image],
            question=FREE_FORM_PROMPT.format(aspects=aspects),
            answer=[free_form_reference(item)],
            formulation="free_form",
            metadata={**base, "question_type": "free_form"},
        ),
    ]
