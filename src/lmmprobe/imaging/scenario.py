"""Dysca's recipe scenarios (clean, corruption, print attack): drawing and applying them.

Origin: Dysca (Zhang et al., 2024). The same picture is shown clean, under one of 11 corruptions
(`lmmprobe.imaging.corruptions`), or with a wrong option's text printed on it
(`lmmprobe.imaging.print_attack`). Both the demo source and the synthetic generator record a
scenario as a small dict inside an image recipe (``{"type": "corruption", "kind", "severity",
"seed"}`` or ``{"type": "print_attack", "attack": PrintAttack.to_dict()}``): `draw_scenario`
draws that record and `apply_scenario` is the one place that turns it into pixels.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from PIL import Image

from lmmprobe.imaging.corruptions import CORRUPTIONS, corrupt
from lmmprobe.imaging.print_attack import PrintAttack, apply_print_attack, sample_print_attack

__all__ = ["RECIPE_SCENARIOS", "apply_scenario", "draw_scenario"]

RECIPE_SCENARIOS: tuple[str, ...] = ("clean", "corruption", "print_attack")
"""Scenarios drawn from a recipe alone (Dysca's adversarial one needs a proxy model)."""


def draw_scenario(
    scenario: str,
    rng: random.Random,
    *,
    wrong_options: Sequence[str],
    size: int,
    severity: int,
) -> dict[str, Any]:
    """Draw the recorded parameters of a picture under `scenario` (empty for clean).

    Args:
        scenario: One of `RECIPE_SCENARIOS`.
        rng: The caller's seeded stream; a corruption draws its kind then its seed, a print
            attack its text (from `wrong_options`) then `sample_print_attack`'s parameters.
        wrong_options: Texts a print attack may write (the question's wrong options).
        size: Side of the square picture in px (scales the print attack's font).
        severity: Corruption severity, 1-5.

    Raises:
        ValueError: Unknown scenario.

    """
    if scenario == "clean":
        return {}
    if scenario == "corruption":
        kind = rng.choice(CORRUPTIONS)
        return {
            "type": "corruption",
            "kind": kind,
            "severity": severity,
            "seed": rng.randrange(2**31),
        }
    if scenario == "print_attack":
        attack = sample_print_attack(rng, rng.choice(wrong_options), (size, size))
        return {"type": "print_attack", "attack": attack.to_dict()}
    raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(RECIPE_SCENARIOS)})")


def apply_scenario(image: Image.Image, params: dict[str, Any]) -> Image.Image:
    """Apply recorded scenario parameters; an empty record leaves the image as it is.

    Raises:
        ValueError: Unknown scenario type.

    """
    if not params:
        return image
    if params["type"] == "corruption":
        return corrupt(
            image, params["kind"], severity=int(params["severity"]), seed=int(params["seed"])
        )
    if params["type"] == "print_attack":
        return apply_print_attack(image, PrintAttack.from_dict(params["attack"]))
    raise ValueError(f"unknown scenario type {params['type']!r}")
