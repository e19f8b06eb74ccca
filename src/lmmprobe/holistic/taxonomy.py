"""HEMM's task taxonomy: the six dimensions a task is annotated along, as typed schemas.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models")
describes every dataset by the kind of multimodal interaction it needs (redundancy, uniqueness,
synergy), whether it needs fine-grained perception, more or less reasoning, external knowledge,
its information flow (querying, translation, editing, fusion) and its real-world use case
(multimedia, affect, science, health, HCI). Scores are then compared across these categories.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["CATEGORIES", "DIMENSIONS", "TaskDimensions", "TaskEntry"]

Interaction = Literal["redundancy", "uniqueness", "synergy"]
Granularity = Literal["fine", "coarse"]
Reasoning = Literal["more", "less"]
Knowledge = Literal["yes", "no"]
Flow = Literal["querying", "translation", "editing", "fusion"]
UseCase = Literal["multimedia", "affect", "science", "health", "HCI"]

DIMENSIONS: tuple[str, ...] = (
    "interaction",
    "granularity",
    "reasoning",
    "knowledge",
    "flow",
    "use_case",
)
"""The six task dimensions, in HEMM's table order."""

CATEGORIES: dict[str, tuple[str, ...]] = {
    "interaction": ("redundancy", "uniqueness", "synergy"),
    "granularity": ("fine", "coarse"),
    "reasoning": ("more", "less"),
    "knowledge": ("yes", "no"),
    "flow": ("querying", "translation", "editing", "fusion"),
    "use_case": ("multimedia", "affect", "science", "health", "HCI"),
}
"""The categories of each dimension, in a stable display order."""


def _canonical(dimension: str, value: Any) -> Any:
    """Match a category case-insensitively; YAML booleans stand for yes/no."""
    allowed = CATEGORIES[dimension]
    if isinstance(value, bool):
        # YAML 1.1 reads bare yes/no as booleans; for knowledge (and granularity written as
        # "fine: yes") they mean the obvious thing.
        if dimension == "knowledge":
            return "yes" if value else "no"
        if dimension == "granularity":
            return "fine" if value else "coarse"
        return value
    if isinstance(value, str):
        text = value.strip().replace("-", "_").replace(" ", "_")
        for category in allowed:
            if text.casefold() == category.casefold():
                return category
        if dimension == "granularity" and text.casefold() in ("fine_grained", "yes"):
            return "fine"
        if dimension == "granularity" and text.casefold() in ("not_fine_grained", "no"):
            return "coarse"
    return value


class TaskDimensions(BaseModel):
    """Where a task sits on each of HEMM's six dimensions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interaction: Interaction = Field(
        description="Multimodal interaction the task needs: information shared by image and "
        "text (redundancy), present in one modality only (uniqueness), or emerging only from "
        "both together (synergy)."
    )
    granularity: Granularity = Field(
        description="Whether the task needs fine-grained perception (small details, exact "
        "attributes) or only a coarse view."
    )
    reasoning: Reasoning = Field(
        description="Whether the task needs more reasoning (several steps, comparisons) or less."
    )
    knowledge: Knowledge = Field(
        description="Whether the task needs knowledge from outside the image and text."
    )
    flow: Flow = Field(
        description="Information flow: querying (answer about the input), translation (map "
        "one modality to another), editing (change the input), fusion (combine modalities)."
    )
    use_case: UseCase = Field(
        description="Real-world use case: multimedia, affect, science, health or HCI."
    )

    @field_validator(*DIMENSIONS, mode="before")
    @classmethod
    def _case_insensitive(cls, value: Any, info: Any) -> Any:
        return _canonical(info.field_name, value)

    def category(self, dimension: str) -> str:
        """The task's category on `dimension` (one of `DIMENSIONS`).

        Raises:
            KeyError: `dimension` is not one of `DIMENSIONS`.

        """
        if dimension not in DIMENSIONS:
            raise KeyError(
                f"unknown dimension {dimension!r}; choose one of {', '.join(DIMENSIONS)}"
            )
        value: str = getattr(self, dimension)
        return value


class TaskEntry(BaseModel):
    """One annotated task (dataset, synthetic subtask or formulation) of the catalog."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Display name, e.g. 'OK-VQA'.")
    dimensions: TaskDimensions = Field(description="The task's six dimension categories.")
    metric: str = Field(
        min_length=1,
        description="Main metric, e.g. 'bartscore', 'accuracy', 'clip_i'.",
    )
    bounded: bool = Field(
        description="Whether the metric has a fixed best value (`maximum`); if not, "
        "normalization needs a per-dataset maximum such as BARTScore's identity score."
    )
    description: str = Field(default="", description="What the task asks, in a sentence.")
    maximum: float | None = Field(
        default=None,
        description="Best value of a bounded metric; None means 1.0. Ignored when unbounded.",
    )
    aliases: tuple[str, ...] = Field(
        default=(),
        description="Other names the task is looked up by (case and punctuation do not matter).",
    )
    source: str = Field(
        default="user",
        description="Where the annotation comes from: 'hemm' (HEMM's table 1), 'lmmprobe' "
        "(our own tasks) or 'user' (a file you passed).",
    )

    @field_validator("name")
    @classmethod
    def _strip_name(cls, value: str) -> str:
        value = value.strip()
        # Lookups ignore everything but letters and digits, so a name needs at least one.
        if not any(ch.isalnum() for ch in value):
            raise ValueError("name needs at least one letter or digit")
        return value

    @property
    def best(self) -> float | None:
        """The metric's best value when bounded (`maximum` or 1.0), else None."""
        if not self.bounded:
            return None
        return 1.0 if self.maximum is None else self.maximum
