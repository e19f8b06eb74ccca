"""Dysca's four scenarios: clean, corruption, print attack, adversarial.

Origin: Dysca (Zhang et al., 2024). The same item (and so the same questions) is shown under
each scenario:

- ``clean``: the rendered image;
- ``corruption``: one of Dysca's 11 corruptions (`lmmprobe.imaging.corruptions`) at a severity;
- ``print_attack``: the text of a wrong multiple-choice option printed on the image with
  parameters from Dysca's grid (`lmmprobe.imaging.print_attack`); OCR items are excluded,
  since printed text would change their answer;
- ``adversarial``: PGD against a proxy model (`lmmprobe.synth.adversarial`); needs the model,
  so only `lmmprobe synth generate --proxy` makes it, never the on-the-fly source.

Scenario parameters are drawn from the item's own stream and recorded in the sample metadata
(``corruption``, ``severity``, ``print_attack``, ``adversarial``).
"""

from __future__ import annotations

import random
from typing import Any

from PIL import Image

from lmmprobe.imaging import procedural
from lmmprobe.imaging.scenario import RECIPE_SCENARIOS, apply_scenario, draw_scenario
from lmmprobe.schema import ImageRef, register_renderer
from lmmprobe.synth.metadata import Item

__all__ = [
    "RECIPE_SCENARIOS",
    "RENDERER",
    "SCENARIOS",
    "applies",
    "render",
    "scenario_params",
    "scenario_ref",
]

SCENARIOS: tuple[str, ...] = ("clean", "corruption", "print_attack", "adversarial")
"""Dysca's scenarios, in report order."""

RENDERER = "synth"
"""Recipe renderer name: the procedural image with its scenario applied."""

_VERSION = f"1+{procedural.RENDERER_VERSION}"


def applies(item: Item, scenario: str) -> bool:
    """Whether `item` is shown under `scenario` (OCR items never get a print attack)."""
    return not (scenario == "print_attack" and item.subtask == "ocr")


def scenario_params(
    item: Item, scenario: str, wrong_options: list[str], severity: int
) -> dict[str, Any]:
    """The recorded parameters of `item` under `scenario` (empty for clean and adversarial).

    Args:
        item: The metadata item.
        scenario: One of `SCENARIOS`.
        wrong_options: The item's multiple-choice distractors (print-attack text comes from them).
        severity: Corruption severity, 1-5.

    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    if scenario not in RECIPE_SCENARIOS:
        return {}  # adversarial: made by the generator with its proxy model
    rng = random.Random(f"{item.seed}:{item.index}:{scenario}")
    size = int(item.recipe["size"])
    return draw_scenario(scenario, rng, wrong_options=wrong_options, size=size, severity=severity)


def render(recipe: dict[str, Any]) -> Image.Image:
    """Draw a recipe with the procedural renderer, then apply its ``scenario`` if any."""
    base = {k: v for k, v in recipe.items() if k != "scenario"}
    return apply_scenario(procedural.render(base), recipe.get("scenario") or {})


def scenario_ref(item: Item, params: dict[str, Any]) -> ImageRef:
    """A lazily drawn reference to the item's image under a recipe scenario."""
    recipe = {**item.recipe, "scenario": params} if params else dict(item.recipe)
    return ImageRef.from_recipe(RENDERER, recipe)


register_renderer(RENDERER, _VERSION, render)
