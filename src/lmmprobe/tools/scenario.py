"""Apply a recorded Dysca image scenario (corruption or print attack) to a picture.

Both the demo source and the synthetic generator record a scenario as a small dict
(``{"type": "corruption", "kind", "severity", "seed"}`` or ``{"type": "print_attack",
"attack": PrintAttack.to_dict()}``) inside an image recipe; this is the one place that turns
such a record into pixels.
"""

from __future__ import annotations

from typing import Any

from PIL import Image

__all__ = ["apply_scenario"]


def apply_scenario(image: Image.Image, params: dict[str, Any]) -> Image.Image:
    """Apply recorded scenario parameters; an empty record leaves the image as it is.

    Raises:
        ValueError: Unknown scenario type.

    """
    if not params:
        return image
    # Imported here: corruptions need albumentations, which a clean image never does.
    from lmmprobe.tools.corruptions import corrupt
    from lmmprobe.tools.print_attack import PrintAttack, apply_print_attack

    if params["type"] == "corruption":
        return corrupt(
            image, params["kind"], severity=int(params["severity"]), seed=int(params["seed"])
        )
    if params["type"] == "print_attack":
        return apply_print_attack(image, PrintAttack.from_dict(params["attack"]))
    raise ValueError(f"unknown scenario type {params['type']!r}")
