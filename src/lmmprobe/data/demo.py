"""Built-in demo source: seeded color / shape / count questions about drawn shapes.

Origin: written for lmmprobe (no external data, no license constraints). Images are drawn with
Pillow on demand from a recipe, so the job runs with nothing on disk and thousands of samples
cost almost no memory. The colors are Dysca's eight. Questions are multiple choice (4 options,
distractors from the same list, seeded shuffle) and true/false (negative with p = 0.5).
"""

from __future__ import annotations

import math
import random
from typing import Any

from PIL import Image, ImageDraw

from lmmprobe.data.base import SOURCES, DataError, LoadResult
from lmmprobe.schema import ImageRef, Sample, register_renderer
from lmmprobe.schema._trusted import trusted

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "orange": (245, 140, 20),
    "yellow": (245, 225, 30),
    "green": (30, 160, 50),
    "blue": (30, 70, 220),
    "purple": (130, 40, 170),
    "white": (250, 250, 250),
    "black": (10, 10, 10),
}
COLOR_NAMES: tuple[str, ...] = tuple(COLORS)
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "star", "hexagon")
COUNTS: tuple[str, ...] = ("1", "2", "3", "4")
RENDERER = "demo-shapes"
RENDERER_VERSION = "1"
SUBTASKS: tuple[str, ...] = ("color", "shape", "count", "color_tf")


def shape_polygon(shape: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    """Vertices of a named shape (not circle) of radius `r` centred at (cx, cy)."""
    if shape == "square":
        return [(cx - r, cy - r), (cx + r, cy - r), (cx + r, cy + r), (cx - r, cy + r)]
    if shape == "triangle":
        return [
            (cx + r * math.cos(a), cy + r * math.sin(a))
            for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)
        ]
    if shape == "diamond":
        return [(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)]
    if shape == "hexagon":
        return [
            (cx + r * math.cos(k * math.pi / 3), cy + r * math.sin(k * math.pi / 3))
            for k in range(6)
        ]
    if shape == "star":
        pts = []
        for k in range(10):
            rad = r if k % 2 == 0 else r * 0.45
            a = -math.pi / 2 + k * math.pi / 5
            pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
        return pts
    raise ValueError(f"unknown shape {shape!r}")


def render(recipe: dict[str, Any]) -> Image.Image:
    """Draw a demo image: `count` shapes of one kind and color on a gray background."""
    size = int(recipe["size"])
    bg = int(recipe["bg"])
    im = Image.new("RGB", (size, size), (bg, bg, bg))
    draw = ImageDraw.Draw(im)
    color = COLORS[recipe["color"]]
    for cx, cy, r in recipe["spots"]:
        x, y, rad = cx * size, cy * size, r * size
        if recipe["shape"] == "circle":
            draw.ellipse((x - rad, y - rad, x + rad, y + rad), fill=color)
        else:
            draw.polygon(shape_polygon(recipe["shape"], x, y, rad), fill=color)
    scenario = recipe.get("scenario")
    if scenario:
        # Imported here: corruptions need albumentations, which a clean demo never does.
        from lmmprobe.tools.scenario import apply_scenario

        im = apply_scenario(im, scenario)
    return im


register_renderer(RENDERER, RENDERER_VERSION, render)

SCENARIOS: tuple[str, ...] = ("clean", "corruption", "print_attack")
"""Dysca's image scenarios the demo can apply (adversarial needs a proxy model; not here)."""


def with_scenario(sample: Sample, scenario: str, rng: random.Random, severity: int) -> Sample:
    """A copy of a demo sample whose image is shown under `scenario` (recorded in metadata).

    Corruption draws one of Dysca's 11 kinds; the print attack writes a wrong option's text
    on the image with parameters drawn from Dysca's grid.
    """
    image = sample.images[0]
    assert image.recipe is not None
    meta = {**sample.metadata, "scenario": scenario}
    if scenario == "clean":
        return sample.model_copy(update={"id": f"{sample.id}@clean", "metadata": meta})
    from lmmprobe.tools import CORRUPTIONS, sample_print_attack

    size = int(image.recipe["size"])
    if scenario == "corruption":
        kind = rng.choice(CORRUPTIONS)
        params: dict[str, Any] = {
            "type": "corruption", "kind": kind, "severity": severity, "seed": rng.randrange(2**31),
        }  # fmt: skip
        meta.update(corruption=kind, severity=severity)
    elif scenario == "print_attack":
        assert sample.choices is not None and isinstance(sample.answer, int)
        wrong = [c for i, c in enumerate(sample.choices) if i != sample.answer]
        attack = sample_print_attack(rng, rng.choice(wrong), (size, size))
        params = {"type": "print_attack", "attack": attack.to_dict()}
        meta["print_attack"] = attack.to_dict()
    else:
        raise DataError(
            f"demo source: unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})"
        )
    shown = ImageRef.from_recipe(RENDERER, {**image.recipe, "scenario": params})
    return sample.model_copy(
        update={"id": f"{sample.id}@{scenario}", "images": [shown], "metadata": meta}
    )


_CELLS = ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75))


def _spots(rng: random.Random, count: int) -> list[list[float]]:
    # Cells of a 2x2 grid keep shapes apart, so counting stays unambiguous.
    if count == 1:
        return [[0.5, 0.5, 0.3]]
    cells = list(_CELLS)
    rng.shuffle(cells)
    return [[cx, cy, 0.16] for cx, cy in cells[:count]]


def _choices(rng: random.Random, truth: str, pool: tuple[str, ...]) -> tuple[list[str], int]:
    options = [truth, *rng.sample([p for p in pool if p != truth], 3)]
    rng.shuffle(options)
    return options, options.index(truth)


def _demo_sample(
    sid: str,
    image: ImageRef,
    question: str,
    choices: list[str],
    answer: int,
    formulation: str,
    meta: dict[str, Any],
) -> Sample:
    # The demo's values are valid by construction (fresh lists and dicts, an index into the
    # choices), so the sample is assembled without validation: thousands are made per run.
    return trusted(
        Sample,
        {
            "id": sid,
            "images": [image],
            "question": question,
            "choices": choices,
            "answer": answer,
            "formulation": formulation,
            "context": None,
            "history": [],
            "metadata": meta,
        },
    )


def make_sample(index: int, rng: random.Random, seed: int, size: int) -> Sample:
    """Build demo sample number `index`, drawing from `rng` (one seeded stream per set)."""
    subtask = SUBTASKS[index % len(SUBTASKS)]
    color = rng.choice(COLOR_NAMES)
    shape = rng.choice(SHAPES)
    count = rng.randint(1, 4)
    recipe = {
        "size": size,
        "bg": rng.randint(110, 150),
        "color": color,
        "shape": shape,
        "spots": _spots(rng, count),
    }
    meta: dict[str, Any] = {"task": "demo", "subtask": subtask, "question_type": "multiple_choice"}
    image = trusted(
        ImageRef, {"path": None, "data_b64": None, "renderer": RENDERER, "recipe": recipe}
    )
    sid = f"demo-{seed}-{index:06d}"
    if subtask == "color_tf":
        asked = color if rng.random() < 0.5 else rng.choice([c for c in COLORS if c != color])
        meta["question_type"] = "true_false"
        subject = "Are the shapes" if count > 1 else "Is the shape"
        return _demo_sample(
            sid,
            image,
            f"{subject} in the image {asked}?",
            ["yes", "no"],
            0 if asked == color else 1,
            "true_false",
            meta,
        )
    are = "are the shapes" if count > 1 else "is the shape"
    if subtask == "color":
        question, truth, pool = f"What color {are} in the image?", color, COLOR_NAMES
    elif subtask == "shape":
        question, truth, pool = "Which shape is shown in the image?", shape, SHAPES
    else:
        question, truth, pool = "How many shapes are in the image?", str(count), COUNTS
    choices, answer = _choices(rng, truth, pool)
    return _demo_sample(sid, image, question, choices, answer, "single_choice", meta)


def _int_opt(options: dict[str, str], name: str, default: int) -> int:
    try:
        return int(options.get(name, default))
    except ValueError as exc:
        raise DataError(f"demo source: option {name}={options[name]!r} is not an integer") from exc


@SOURCES.register(
    "demo",
    summary="demo[,n=120,seed=0,size=128,scenario=clean+corruption+print_attack,severity=3]  "
    "drawn color/shape/count questions",
)
def load_demo(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> LoadResult:
    """Generate the demo set (nothing is read from disk)."""
    unknown = set(options) - {"n", "seed", "size", "scenario", "severity"}
    if target or unknown:
        raise DataError(
            "the demo source takes options n, seed, size, scenario, severity "
            f"(got {target or sorted(unknown)})"
        )
    n = _int_opt(options, "n", 120)
    if limit is not None:
        n = min(n, limit)
    seed = _int_opt(options, "seed", 0)
    size = _int_opt(options, "size", 128)
    # One stream for the whole set: sample i depends on the seed and on i only through the
    # samples before it, so a smaller n (or --limit) gives a prefix of the larger set.
    rng = random.Random(seed)
    samples = [make_sample(i, rng, seed, size) for i in range(n)]
    scenarios = [s for s in options.get("scenario", "").split("+") if s]
    if scenarios:
        # Every base sample is shown once per scenario, so scenarios compare on the same
        # questions; a separate stream keeps the clean set identical with or without them.
        srng = random.Random(f"{seed}:scenario")
        severity = _int_opt(options, "severity", 3)
        samples = [with_scenario(s, sc, srng, severity) for s in samples for sc in scenarios]
    return LoadResult(samples=samples, source="demo")
