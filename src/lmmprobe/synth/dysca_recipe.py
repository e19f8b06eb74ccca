"""The ``dysca`` recipe of ``synth generate``: Dysca's items as lmmprobe samples and image jobs.

Items are Dysca's prompt-question-answer records (`lmmprobe.synth.dysca_pqa`), drawn from one
stream ``Random(seed)`` over the chosen groups, ``n`` per group (Dysca's ``--prompt_num``), so
``--seed 2024`` gives the items of Dysca's own ``pqa_generate.py``. Each item's image is drawn by
a diffusion pipeline from Dysca's prompt and negative prompt, with a starting-noise seed of its
own (``Random(f"{seed}:{index}:image")``). Each of the item's questions becomes one sample:

- ``multi choice`` → ``single_choice`` with Dysca's options in Dysca's (shuffled) order;
- ``true or false`` → ``true_false`` with choices ``True``, ``False``;
- ``image caption`` → ``free_form`` with Dysca's reference.

``metadata.subtask`` is Dysca's ``question_majority`` (the 20 subtasks, and ``face`` for a face
item's free-form question); ``granularity`` is ``coarse`` for style, background and color, else
``fine``, as Dysca's post-processing labels it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from lmmprobe.schema import ImageRef, Sample
from lmmprobe.synth.dysca_pqa import generate_pqa

__all__ = ["DyscaItem", "dysca_items", "dysca_samples"]

_QUESTION_TYPES = {
    "multi choice": ("multiple_choice", "single_choice", "mc"),
    "true or false": ("true_false", "true_false", "tf"),
    "image caption": ("free_form", "free_form", "ff"),
}
_COARSE = frozenset({"style", "background", "color"})


@dataclass(frozen=True)
class DyscaItem:
    """One Dysca item: its record, what was drawn, and the image recipe.

    Attributes:
        index: Position in the set (all groups, in Dysca's order).
        seed: The set's seed.
        group: Dysca's foreground group (``face``, ``animal``... ``text``).
        record: Dysca's record (``prompt``, ``negative_prompt``, ``q_a``).
        details: What was drawn (style name, background, foreground, text...).
        recipe: The diffusion renderer's recipe: ``size``, ``seed``, ``prompt``,
            ``negative_prompt``.

    """

    index: int
    seed: int
    group: str
    record: dict[str, Any]
    details: dict[str, Any]
    recipe: dict[str, Any]

    @property
    def id(self) -> str:
        """Stable item id, shared by the item's questions."""
        return f"dysca-{self.seed}-{self.index:06d}"

    @property
    def prompt(self) -> str:
        """Dysca's prompt for the item's image."""
        return str(self.record["prompt"])

    @property
    def text(self) -> str | None:
        """The scene text the image must show (text group), else None."""
        value = self.details.get("text")
        return None if value is None else str(value)


@cache
def dysca_items(
    seed: int, per_group: int, groups: tuple[str, ...], size: int
) -> tuple[DyscaItem, ...]:
    """Every item of a Dysca-recipe set, in order (made once per process and settings).

    Args:
        seed: Seed of the set (Dysca's own is 2024).
        per_group: Items drawn per group (fewer remain where a prompt repeats, as in Dysca).
        groups: Dysca groups to make.
        size: Image side in pixels.

    """
    items: list[DyscaItem] = []
    for group, records in generate_pqa(seed, per_group, groups, details=True):
        for record in records:
            index = len(items)
            details = record.pop("metadata")
            image_seed = random.Random(f"{seed}:{index}:image").randrange(2**31)
            recipe = {
                "size": size,
                "seed": image_seed,
                "prompt": record["prompt"],
                "negative_prompt": record["negative_prompt"],
            }
            items.append(DyscaItem(index, seed, group, record, details, recipe))
    return tuple(items)


def dysca_samples(item: DyscaItem, image: ImageRef, *, scenario: str = "clean") -> list[Sample]:
    """The item's questions as samples about `image` (module docstring)."""
    out: list[Sample] = []
    base: dict[str, Any] = {
        "task": "synth",
        "recipe": "dysca",
        "group": item.group,
        "item": item.id,
        "scenario": scenario,
        "style": item.details["style"],
        "background": item.details.get("background"),
    }
    for k, qa in enumerate(item.record["q_a"]):
        if not qa["question"]:
            continue  # Dysca asks nothing here (never under the groups' own tasks)
        question_type, formulation, tag = _QUESTION_TYPES[qa["question_type"]]
        majority = qa["question_majority"]
        meta = {
            **base,
            "subtask": majority,
            "dysca_task": qa["task"],
            "granularity": "coarse" if majority in _COARSE else "fine",
            "question_type": question_type,
        }
        sample_id = f"{item.id}-{tag}{k}@{scenario}"
        if formulation == "free_form":
            out.append(
                Sample(
                    id=sample_id,
                    images=[image],
                    question=qa["question"],
                    answer=[qa["answer"]],
                    formulation="free_form",
                    metadata=meta,
                )
            )
            continue
        options = list(qa["options"])
        out.append(
            Sample(
                id=sample_id,
                images=[image],
                question=qa["question"],
                choices=options,
                answer=options.index(qa["answer"]),
                formulation=formulation,
                metadata={**meta, "prompt_style": "dysca"},
            )
        )
    return out
