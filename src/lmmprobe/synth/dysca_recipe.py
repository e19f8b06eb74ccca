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

With ``postprocess`` (the default of ``synth generate --recipe dysca``), only the questions
Dysca's ``pqa_postprocess.py`` keeps are asked, in its order within each item
(`lmmprobe.synth.dysca_postprocess`); items left without a question are not drawn.

Scenarios (Dysca's ``image_generate/corruption.py`` and ``print_attack.py`` settings, through
lmmprobe's shared scenario code, `lmmprobe.imaging.scenario`):

- ``corruption``: one image per item, one of the 11 corruptions drawn from
  ``Random(f"{seed}:{index}:corruption")``;
- ``print_attack``: one image per question, as Dysca attacks each question's image with one of
  *that question's* wrong options (a true/false question's: the other of True/False), drawn from
  ``Random(f"{seed}:{index}:print_attack:{k}")``. Dysca prints the previous free-form answer's
  attributes on a free-form question's image; here it gets one of the item's multiple-choice
  distractors (our choice: the text stays about this item). Scene-text items get none (Dysca
  skips its OCR task);
- ``adversarial``: one image per item, PGD against the proxy on the item's first
  multiple-choice question (`lmmprobe.synth.adversarial`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from lmmprobe.imaging.scenario import draw_scenario
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.synth.dysca_postprocess import select_questions
from lmmprobe.synth.dysca_pqa import generate_pqa

__all__ = [
    "DyscaItem",
    "applies",
    "dysca_items",
    "dysca_samples",
    "print_attack_texts",
    "scenario_params",
]

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
        asked: Indices into ``record["q_a"]`` of the questions asked, in order (all of them
            unless Dysca's post-processing removed some).

    """

    index: int
    seed: int
    group: str
    record: dict[str, Any]
    details: dict[str, Any]
    recipe: dict[str, Any]
    asked: tuple[int, ...] = ()

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
    seed: int, per_group: int, groups: tuple[str, ...], size: int, postprocess: bool = False
) -> tuple[DyscaItem, ...]:
    """Every item of a Dysca-recipe set, in order (made once per process and settings).

    Args:
        seed: Seed of the set (Dysca's own is 2024, for its generator and post-processing).
        per_group: Items drawn per group (fewer remain where a prompt repeats, as in Dysca).
        groups: Dysca groups to make.
        size: Image side in pixels.
        postprocess: Keep only the questions Dysca's post-processing keeps (its draws from
            ``Random(seed)``, the groups as its source files in Dysca's order); items left
            without a question are left out (their ``index`` stays their place in the draw).

    """
    drawn = generate_pqa(seed, per_group, groups, details=True)
    if postprocess:
        majorities = [
            [[qa["question_majority"] for qa in r["q_a"]] for r in records] for _, records in drawn
        ]
        asked = [ks for per_file in select_questions(majorities, seed) for ks in per_file]
    else:
        asked = [list(range(len(r["q_a"]))) for _, records in drawn for r in records]
    items: list[DyscaItem] = []
    index = -1
    for group, records in drawn:
        for record in records:
            index += 1
            details = record.pop("metadata")
            if not asked[index]:
                continue
            image_seed = random.Random(f"{seed}:{index}:image").randrange(2**31)
            recipe = {
                "size": size,
                "seed": image_seed,
                "prompt": record["prompt"],
                "negative_prompt": record["negative_prompt"],
            }
            items.append(
                DyscaItem(index, seed, group, record, details, recipe, tuple(asked[index]))
            )
    return tuple(items)


def applies(item: DyscaItem, scenario: str) -> bool:
    """Whether `item` is shown under `scenario` (scene-text items never get a print attack)."""
    return not (scenario == "print_attack" and item.group == "text")


def print_attack_texts(item: DyscaItem, k: int) -> list[str]:
    """The texts question `k`'s print attack may write (module docstring)."""
    qa = item.record["q_a"][k]
    if qa["options"]:
        return [o for o in qa["options"] if o != qa["answer"]]
    return [
        o
        for q in item.record["q_a"]
        if q["question_type"] == "multi choice"
        for o in q["options"]
        if o != q["answer"]
    ]


def scenario_params(
    item: DyscaItem, scenario: str, severity: int, k: int | None = None
) -> dict[str, Any]:
    """The recorded parameters of `item` (question `k` for a print attack) under `scenario`.

    Empty for ``clean`` and ``adversarial`` (made by the generator with its proxy model).
    """
    if scenario in ("clean", "adversarial"):
        return {}
    if scenario == "print_attack":
        if k is None:
            raise ValueError("a Dysca print attack is drawn per question: pass k")
        rng = random.Random(f"{item.seed}:{item.index}:print_attack:{k}")
        texts = print_attack_texts(item, k)
    else:
        rng = random.Random(f"{item.seed}:{item.index}:{scenario}")
        texts = []
    size = int(item.recipe["size"])
    return draw_scenario(scenario, rng, wrong_options=texts, size=size, severity=severity)


def dysca_samples(
    item: DyscaItem,
    image: ImageRef,
    *,
    scenario: str = "clean",
    images: Mapping[int, ImageRef] | None = None,
) -> list[Sample]:
    """The item's asked questions as samples about `image` (module docstring).

    Args:
        item: The item.
        image: The picture every question is about.
        scenario: Scenario name recorded in the metadata and the sample ids.
        images: Per question index, its own picture instead (print attacks).

    """
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
    for k in item.asked or range(len(item.record["q_a"])):
        qa = item.record["q_a"][k]
        picture = images[k] if images is not None and k in images else image
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
                    images=[picture],
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
                images=[picture],
                question=qa["question"],
                choices=options,
                answer=options.index(qa["answer"]),
                formulation=formulation,
                metadata={**meta, "prompt_style": "dysca"},
            )
        )
    return out
