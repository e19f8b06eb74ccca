"""Model cards: HEMM's modeling dimensions of a model, read from YAML and attached to specs.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models") groups
models by size (parameters: <= 4B small, > 4B medium, proprietary models large), modality
processing (images interleaved with text, or processed separately), training type (modular
fine-tuning of pretrained parts, or end-to-end), pretraining data size (<= 100M examples small,
> 100M medium, proprietary large), pretraining data diversity, and instruction tuning, then
compares the groups' normalized scores.

A card file maps model specs (as given on the command line) to cards::

    hf:/models/llava-1.5-7b:
      parameters: 7B            # a count is bucketed: 7B -> medium
      modality_processing: separate
      training_type: modular
      pretraining_data_size: 558K
      data_diversity: non_diverse
      instruction_tuning: true
      notes: LLaVA-1.5 (Liu et al., 2023)
    openai:gpt-4o:
      proprietary: true         # parameters and data size default to large
      modality_processing: interleaved
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lmmprobe._secrets import shown_spec
from lmmprobe.holistic._files import (
    TaxonomyError,
    describe_validation,
    first_field,
    read_mapping,
    where,
)

__all__ = [
    "MODEL_DIMENSIONS",
    "ModelCard",
    "bucket_data_size",
    "bucket_parameters",
    "card_for",
    "group_models",
    "load_model_cards",
    "parse_count",
]

Bucket = Literal["small", "medium", "large"]

MODEL_DIMENSIONS: tuple[str, ...] = (
    "parameters",
    "modality_processing",
    "training_type",
    "pretraining_data_size",
    "data_diversity",
    "instruction_tuning",
)
"""Card fields models are grouped by (`group_models`)."""

SMALL_MODEL_MAX = 4_000_000_000
"""Largest parameter count HEMM calls small."""

SMALL_DATA_MAX = 100_000_000
"""Largest pretraining set (examples) HEMM calls small."""

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}
_COUNT = re.compile(r"^\s*([0-9][0-9_,]*(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)\s*([kmbgt]?)\s*$", re.I)
_BUCKETS = ("small", "medium", "large")


def parse_count(value: Any) -> int | None:
    """Read a count such as ``7_000_000_000``, ``7e9``, ``"7B"``, ``"558K"`` or ``"1.6 b"``.

    Args:
        value: A number or a string with an optional K/M/B/T suffix.

    Returns:
        The count, or None when `value` is not a count (e.g. a bucket name).

    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return round(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    match = _COUNT.match(value)
    if match is None:
        return None
    number = float(match.group(1).replace(",", "").replace("_", ""))
    return round(number * _SUFFIX[match.group(2).lower()])


def bucket_parameters(count: int) -> Bucket:
    """HEMM's size bucket of an open model: <= 4B parameters small, more medium."""
    return "small" if count <= SMALL_MODEL_MAX else "medium"


def bucket_data_size(count: int) -> Bucket:
    """HEMM's pretraining-data bucket of an open model: <= 100M examples small, more medium."""
    return "small" if count <= SMALL_DATA_MAX else "medium"


def _bucket_field(data: dict[str, Any], field: str, count_field: str, bucket: Any) -> None:
    value = data.get(field)
    if value is None or (isinstance(value, str) and value.strip().lower() in _BUCKETS):
        if isinstance(value, str):
            data[field] = value.strip().lower()
        return
    count = parse_count(value)
    if count is None:
        return  # left for the Literal check, which names the field and the allowed values
    given = data.get(count_field)
    if given is not None and parse_count(given) != count:
        raise ValueError(f"{field}={value!r} disagrees with {count_field}={given!r}")
    data[field] = bucket(count)
    data[count_field] = count


class ModelCard(BaseModel):
    """HEMM's modeling dimensions of one model; every field may be left unknown (None)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parameters: Bucket | None = Field(
        default=None,
        description="Size bucket. Give a count (7B, 1.6e9) to have it bucketed as HEMM does "
        "(<= 4B small, > 4B medium); 'large' is HEMM's bucket of proprietary models.",
    )
    parameter_count: int | None = Field(
        default=None, ge=0, description="Total parameters, when known."
    )
    modality_processing: Literal["interleaved", "separate"] | None = Field(
        default=None,
        description="Whether images are interleaved with the text tokens in one sequence, or "
        "encoded separately and handed to the language model.",
    )
    training_type: Literal["modular", "end_to_end"] | None = Field(
        default=None,
        description="Modular fine-tuning of pretrained parts (e.g. a frozen LLM and vision "
        "encoder joined by an adapter), or training end to end.",
    )
    pretraining_data_size: Bucket | None = Field(
        default=None,
        description="Pretraining data bucket. Give a count (558K, 1.4B) to have it bucketed "
        "(<= 100M small, > 100M medium); 'large' is HEMM's bucket of proprietary models.",
    )
    pretraining_data_count: int | None = Field(
        default=None, ge=0, description="Pretraining examples (e.g. image-text pairs), when known."
    )
    data_diversity: Literal["diverse", "non_diverse"] | None = Field(
        default=None,
        description="Whether the pretraining data is diverse (many sources and kinds) or not.",
    )
    instruction_tuning: bool | None = Field(
        default=None, description="Whether the model was instruction-tuned."
    )
    proprietary: bool = Field(
        default=False,
        description="A closed model; its parameters and data size default to 'large'.",
    )
    notes: str = Field(default="", description="Free text: paper, checkpoint, caveats.")

    @model_validator(mode="before")
    @classmethod
    def _bucket_counts(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        _bucket_field(data, "parameters", "parameter_count", bucket_parameters)
        _bucket_field(data, "pretraining_data_size", "pretraining_data_count", bucket_data_size)
        for name in ("training_type", "data_diversity", "modality_processing"):
            value = data.get(name)
            if isinstance(value, str):
                text = value.strip().lower().replace("-", "_").replace(" ", "_")
                aliases = {
                    "modular_fine_tune": "modular",
                    "modular_fine_tuning": "modular",
                    "not_diverse": "non_diverse",
                    "nondiverse": "non_diverse",
                    "endtoend": "end_to_end",
                }
                data[name] = aliases.get(text, text)
        if data.get("proprietary") is True:
            data.setdefault("parameters", "large")
            data.setdefault("pretraining_data_size", "large")
        return data

    def category(self, dimension: str) -> str | None:
        """The card's group on a `MODEL_DIMENSIONS` field, as text ("yes"/"no" for booleans).

        Raises:
            KeyError: `dimension` is not one of `MODEL_DIMENSIONS`.

        """
        if dimension not in MODEL_DIMENSIONS:
            raise KeyError(
                f"unknown model dimension {dimension!r}; choose one of "
                f"{', '.join(MODEL_DIMENSIONS)}"
            )
        value = getattr(self, dimension)
        if value is None:
            return None
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)


def load_model_cards(path: str | Path) -> dict[str, ModelCard]:
    """Read and validate a YAML (or ``.json``) file mapping model specs to cards.

    Args:
        path: The card file.

    Returns:
        Model spec -> card, in file order.

    Raises:
        TaxonomyError: The file is unreadable or a card is invalid; the message names the file
            (and line, for YAML), the model and the field.
        ImportError: pyyaml is missing (``pip install 'lmmprobe[holistic]'``).

    """
    p = Path(path)
    data, lines = read_mapping(p)
    cards: dict[str, ModelCard] = {}
    for spec, body in data.items():
        at = where(p, lines, spec)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise TaxonomyError(
                f"{at}: model {shown_spec(spec)!r}: expected a mapping of card fields, got "
                f"{type(body).__name__}"
            )
        try:
            cards[spec] = ModelCard(**body)
        except ValidationError as exc:
            at = where(p, lines, spec, first_field(exc))  # the field's own line
            raise TaxonomyError(
                f"{at}: model {shown_spec(spec)!r}: {describe_validation(exc)}"
            ) from exc
        except ValueError as exc:  # pragma: no cover - validators raise inside ValidationError
            raise TaxonomyError(f"{at}: model {shown_spec(spec)!r}: {exc}") from exc
    return cards


_BACKEND = re.compile(r"^[a-z][a-z0-9_+-]*:(?!//)", re.I)


def _forms(spec: str) -> set[str]:
    """Names a spec may be matched by: itself, without its backend, and its last path part."""
    text = spec.strip()
    forms = {text.casefold()}
    bare = _BACKEND.sub("", text, count=1)
    # "openai:MODEL@URL": the model name is what a card would be keyed by.
    bare = bare.split("@", 1)[0] if "@" in bare and not bare.startswith("@") else bare
    forms.add(bare.casefold())
    tail = bare.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    if tail:
        forms.add(tail.casefold())
    return forms


def card_for(model_spec: str, cards: Mapping[str, ModelCard]) -> ModelCard | None:
    """The card of a model spec: by exact key, else by a looser match.

    A spec also matches a card keyed by the spec without its backend prefix (``hf:``,
    ``openai:``), without an ``@URL`` suffix, or by the last part of its path, in either
    direction and ignoring case: ``hf:/models/llava-1.5-7b`` finds a card keyed
    ``llava-1.5-7b``.

    Args:
        model_spec: The spec, e.g. ``"hf:/models/llava-1.5-7b"``.
        cards: Cards by spec, e.g. from `load_model_cards`.

    Returns:
        The card, or None when no key matches.

    Raises:
        TaxonomyError: Several cards match loosely and disagree.

    """
    if model_spec in cards:
        return cards[model_spec]
    wanted = _forms(model_spec)
    found = {key: card for key, card in cards.items() if _forms(key) & wanted}
    distinct = {card.model_dump_json() for card in found.values()}
    if len(distinct) > 1:
        raise TaxonomyError(
            f"model {model_spec!r} matches several different cards ({', '.join(found)}); "
            "key its card by the exact spec"
        )
    return next(iter(found.values()), None)


def group_models(
    models: Mapping[str, ModelCard] | list[str],
    dimension: str,
    cards: Mapping[str, ModelCard] | None = None,
) -> dict[str, list[str]]:
    """Group models by a card field, e.g. instruction-tuned vs not.

    Args:
        models: Either cards by model spec (grouped directly), or model specs whose cards are
            found in `cards` with `card_for`.
        dimension: One of `MODEL_DIMENSIONS`.
        cards: Needed when `models` is a list of specs.

    Returns:
        Category -> models in that category (sorted). Models without a card, or whose card
        leaves the field unknown, are left out.

    Raises:
        KeyError: `dimension` is unknown.
        ValueError: `models` is a list and `cards` is None.

    """
    if dimension not in MODEL_DIMENSIONS:
        raise KeyError(
            f"unknown model dimension {dimension!r}; choose one of {', '.join(MODEL_DIMENSIONS)}"
        )
    if isinstance(models, Mapping):
        pairs = list(models.items())
    else:
        if cards is None:
            raise ValueError("group_models needs `cards` when `models` is a list of specs")
        pairs = [(m, c) for m in models if (c := card_for(m, cards)) is not None]
    groups: dict[str, list[str]] = {}
    for model, card in pairs:
        category = card.category(dimension)
        if category is not None:
            groups.setdefault(category, []).append(model)
    return {k: sorted(v) for k, v in sorted(groups.items())}
