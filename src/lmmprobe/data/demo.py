"""Built-in demo source: seeded color / shape / count questions about drawn shapes.

Origin: written for lmmprobe (no external data, no license constraints). Images are recipes of
the ``demo-shapes`` renderer (`lmmprobe.imaging.shapes`), drawn on demand, so the job runs with
nothing on disk and thousands of samples cost almost no memory. The colors are Dysca's eight
(`lmmprobe.imaging.colors`); scenarios are Dysca's (`lmmprobe.imaging.scenario`). Questions are multiple choice (4 options,
distractors from the same list, in a seeded order) and true/false (negative with p = 0.5).
All random values are drawn with numpy, a block of samples at a time from a stream seeded by
(seed, block), and looked up in tables built once at import.
"""

from __future__ import annotations

import copy
import itertools
import math
import random

import numpy as np

from lmmprobe.data.base import SOURCES, DataError, LoadResult, int_option
from lmmprobe.imaging.colors import COLOR_NAMES
from lmmprobe.imaging.scenario import RECIPE_SCENARIOS, draw_scenario
from lmmprobe.imaging.shapes import RENDERER, SHAPES
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.schema.image import canonical_recipe

COUNTS: tuple[str, ...] = ("1", "2", "3", "4")
SUBTASKS: tuple[str, ...] = ("color", "shape", "count", "color_tf")
SCENARIOS: tuple[str, ...] = RECIPE_SCENARIOS
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
        return Sample.model_validate({**dict(sample), "id": f"{sample.id}@clean", "metadata": meta})
    if scenario not in SCENARIOS:
        raise DataError(
            f"demo source: unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})"
        )
    assert sample.choices is not None and isinstance(sample.answer, int)
    wrong = [c for i, c in enumerate(sample.choices) if i != sample.answer]
    size = int(image.recipe["size"])
    params = draw_scenario(scenario, rng, wrong_options=wrong, size=size, severity=severity)
    if scenario == "corruption":
        meta.update(corruption=params["kind"], severity=severity)
    else:
        meta["print_attack"] = copy.deepcopy(params["attack"])  # not shared with the recipe
    recipe = canonical_recipe({**image.recipe, "scenario": params})
    shown = ImageRef(renderer=RENDERER, recipe=recipe)
    return Sample.model_validate(
        {**dict(sample), "id": f"{sample.id}@{scenario}", "images": [shown], "metadata": meta}
    )


# Samples are drawn in blocks of this many, each block from its own stream seeded by
# (seed, block number), so sample i depends only on the seed and i: a smaller n (or --limit)
# gives a prefix of the larger set. A multiple of len(SUBTASKS), so the subtask of a block's
# k-th sample is the same in every block.
_BLOCK = 512

_CELLS = ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75))
_ORDERS = tuple(itertools.permutations(_CELLS))


def _spot_table() -> tuple[tuple[list[list[float]], ...], ...]:
    # Spots per count (1-4) and per ordering of the cells of a 2x2 grid, which keep shapes
    # apart so counting stays unambiguous; a uniform ordering makes a uniform ordered choice
    # of cells for every count. One shape alone sits in the middle, larger. The lists are
    # shared by the recipes that use them (as a sample's scenario variants share its recipe's):
    # recipes are never mutated, their content hash is remembered.
    alone = [[0.5, 0.5, 0.3]]
    return (
        (alone,) * len(_ORDERS),
        *(
            tuple([[x, y, 0.16] for x, y in order[:count]] for order in _ORDERS)
            for count in (2, 3, 4)
        ),
    )


def _option_table(pool: tuple[str, ...]) -> tuple[tuple[tuple[tuple[str, ...], int], ...], ...]:
    # Per truth (by its index in `pool`), every (options, answer) a draw can give: the truth at
    # each of the 4 places, the other places an ordered choice of 3 distinct distractors from
    # the rest of the pool. A uniform index into it is a uniform distractor set in a uniform
    # order, as sampling three distractors and shuffling the four options would give.
    return tuple(
        tuple(
            ((*picked[:place], truth, *picked[place:]), place)
            for place in range(4)
            for picked in itertools.permutations([p for p in pool if p != truth], 3)
        )
        for truth in pool
    )


_SPOTS = _spot_table()
_COLOR_OPTIONS = _option_table(COLOR_NAMES)
_SHAPE_OPTIONS = _option_table(SHAPES)
_COUNT_OPTIONS = _option_table(COUNTS)
# The true/false question asks the drawn colour for a pick below _TF_OTHERS (half the picks)
# and the (pick - _TF_OTHERS)-th other colour otherwise.
_OTHER_COLORS = tuple(tuple(c for c in COLOR_NAMES if c != truth) for truth in COLOR_NAMES)
_TF_OTHERS = len(COLOR_NAMES) - 1
_TF_PICKS = 2 * _TF_OTHERS
_BG_MIN, _BG_MAX = 110, 150  # background gray level, inclusive
# Question texts, indexed by whether there is more than one shape.
_COLOR_QUESTION = (
    "What color is the shape in the image?",
    "What color are the shapes in the image?",
)
_TF_QUESTION = tuple(
    {c: f"{subject} in the image {c}?" for c in COLOR_NAMES}
    for subject in ("Is the shape", "Are the shapes")
)
_SHAPE_QUESTION = "Which shape is shown in the image?"
_COUNT_QUESTION = "How many shapes are in the image?"
# Exclusive upper bounds of a block's draws, one row per kind of draw and one column per
# sample: color, shape, count - 1, bg - _BG_MIN, cell ordering, and the options (by subtask: an
# index into the option table, or the true/false pick).
_HIGHS = np.array(
    [
        [len(COLOR_NAMES)] * _BLOCK,
        [len(SHAPES)] * _BLOCK,
        [len(COUNTS)] * _BLOCK,
        [_BG_MAX - _BG_MIN + 1] * _BLOCK,
        [len(_ORDERS)] * _BLOCK,
        [
            len(_COLOR_OPTIONS[0]), len(_SHAPE_OPTIONS[0]), len(_COUNT_OPTIONS[0]), _TF_PICKS
        ] * (_BLOCK // len(SUBTASKS)),
    ],
    dtype=np.int64,
)  # fmt: skip
_DRAW_RANGE = math.lcm(*{int(high) for high in _HIGHS.flat})


def _draws(seed: int, block: int, count: int) -> list[list[int]]:
    # A whole block is drawn whatever `count`, so a block's first samples never depend on it.
    # SeedSequence takes non-negative integers; this zigzag map keeps every int seed distinct.
    entropy = 2 * seed if seed >= 0 else -2 * seed - 1
    rng = np.random.default_rng([entropy, block])
    # One draw below a common multiple of every bound, reduced modulo each bound: exactly
    # uniform, and much faster than drawing with an array of bounds.
    drawn = rng.integers(0, _DRAW_RANGE, _HIGHS.shape) % _HIGHS
    draws: list[list[int]] = drawn[:, :count].tolist()
    return draws


def _block(seed: int, size: int, block: int, count: int) -> list[Sample]:
    # The first `count` samples of block number `block`.
    first = block * _BLOCK
    prefix = f"demo-{seed}-"  # ids are demo-{seed}-{index:06d}; zfill is the faster spelling
    samples: list[Sample] = []
    append = samples.append
    for index, c, s, k, bg, order, pick in zip(
        range(first, first + count), *_draws(seed, block, count), strict=True
    ):
        color = COLOR_NAMES[c]
        # Keys in sorted order, the canonical form validation would store (`canonical_recipe`).
        recipe = {
            "bg": _BG_MIN + bg, "color": color, "shape": SHAPES[s], "size": size,
            "spots": _SPOTS[k][order],
        }  # fmt: skip
        image = ImageRef(renderer=RENDERER, recipe=recipe)
        subtask = index % 4  # SUBTASKS: color, shape, count, color_tf
        if subtask == 3:
            asked = color if pick < _TF_OTHERS else _OTHER_COLORS[c][pick - _TF_OTHERS]
            values = {
                "id": prefix + str(index).zfill(6),
                "images": [image],
                "question": _TF_QUESTION[k > 0][asked],
                "choices": ["yes", "no"],
                "answer": 0 if asked == color else 1,
                "formulation": "true_false",
                "context": None,
                "history": [],
                "metadata": {"task": "demo", "subtask": "color_tf", "question_type": "true_false"},
            }
        else:
            if subtask == 0:
                question, (options, answer) = _COLOR_QUESTION[k > 0], _COLOR_OPTIONS[c][pick]
            elif subtask == 1:
                question, (options, answer) = _SHAPE_QUESTION, _SHAPE_OPTIONS[s][pick]
            else:
                question, (options, answer) = _COUNT_QUESTION, _COUNT_OPTIONS[k][pick]
            values = {
                "id": prefix + str(index).zfill(6),
                "images": [image],
                "question": question,
                "choices": list(options),
                "answer": answer,
                "formulation": "single_choice",
                "context": None,
                "history": [],
                "metadata": {
                    "task": "demo", "subtask": SUBTASKS[subtask], "question_type": "multiple_choice"
                },
            }  # fmt: skip
        append(Sample.model_validate(values))
    return samples


def make_samples(n: int, seed: int, size: int) -> list[Sample]:
    """The first `n` demo samples for `seed`, with images of `size` x `size` pixels.

    Sample i is the same whatever n > i. Subtasks cycle color, shape, count, color_tf; the
    colour, shape, count (1-4), background gray level (110-150), the cells the shapes sit in,
    the distractors and the option order are uniform draws, and the true/false question asks
    the drawn colour half the time.

    Args:
        n: How many samples (none when n <= 0).
        seed: Selects the set.
        size: Image width and height in pixels, recorded in each recipe.

    Returns:
        Samples with ids ``demo-{seed}-{index:06d}``, images drawn on demand from recipes.

    """
    samples: list[Sample] = []
    for block in range(-(-n // _BLOCK)):
        samples += _block(seed, size, block, min(_BLOCK, n - block * _BLOCK))
    return samples


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
    n = int_option(options, "n", 120, "demo source")
    if limit is not None:
        n = min(n, limit)
    seed = int_option(options, "seed", 0, "demo source")
    size = int_option(options, "size", 128, "demo source")
    samples = make_samples(n, seed, size)
    scenarios = [s for s in options.get("scenario", "").split("+") if s]
    if scenarios:
        # Every base sample is shown once per scenario, so scenarios compare on the same
        # questions; a separate stream keeps the clean set identical with or without them.
        srng = random.Random(f"{seed}:scenario")
        severity = int_option(options, "severity", 3, "demo source")
        samples = [with_scenario(s, sc, srng, severity) for s in samples for sc in scenarios]
    return LoadResult(samples=samples, source="demo")
