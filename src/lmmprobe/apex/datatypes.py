"""Visual data types the rules orchestrator can plan experiments about, with their synonyms.

Origin: the 27 visual data types of Udandarao et al. ("Visual data-type understanding does not
emerge from scaling vision-language models", ICLR 2024), in the four groups APEx (Conti et al.)
evaluates — geometric, pixel, style and semantic — plus one data type per remaining APEx
transform tool and the procedural renderer's other styles and weathers, so every transform can
be asked about by name ("Can models identify RotateImage?").

The table is data: ``apex/data/data_types.json``, one entry per data type with the fields of
`DataType`, validated when this module is imported. Each entry says how to make the data type
from registry tools (a strong version, and a mild one when the effect has a severity), how to
ask whether an image shows it, and what to call it among alternatives. Where the offline
procedural renderer has no equivalent of a style (it draws "comic", not "cartoon"), the
nearest style it has stands in and the entry's ``stand_in`` says so; the report repeats that
note. To add a data type, add an entry to the file: the 27 APEx ones come first, in group order.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lmmprobe.tools.compose import ToolCall

Group = Literal["geometric", "pixel", "style", "semantic"]
GROUPS: tuple[Group, ...] = ("geometric", "pixel", "style", "semantic")

DATA_FILE = "data/data_types.json"
"""The table's path inside the ``lmmprobe.apex`` package."""


class DataType(BaseModel):
    """A visual data type and the tool calls that make it (one entry of the data file)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description='Canonical name ("left rotation").')
    group: Group = Field(description="geometric, pixel, style or semantic.")
    label: str = Field(min_length=1, description='Answer text among alternatives ("rotated left").')
    question: str = Field(min_length=1, description="Yes/no question: does an image show it?")
    strong: tuple[ToolCall, ...] = Field(
        min_length=1, description="Transform calls making a clear instance."
    )
    mild: tuple[ToolCall, ...] | None = Field(
        default=None,
        min_length=1,
        description="Transform calls making a subtle instance, when the effect has a severity.",
    )
    synonyms: tuple[str, ...] = Field(
        default=(), description="Other ways a query may name it (whole words, any case)."
    )
    apex27: bool = Field(default=True, description="One of Udandarao et al.'s 27 data types.")
    stand_in: str | None = Field(
        default=None, description="Why the calls only approximate the data type offline."
    )

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name, then the synonyms."""
        return (self.name, *self.synonyms)

    def calls(self, severity: Literal["strong", "mild"] = "strong") -> list[ToolCall]:
        """Fresh copies of the transform calls for one severity (mild falls back to strong)."""
        chosen = self.mild if severity == "mild" and self.mild is not None else self.strong
        return [ToolCall(tool=c.tool, args=dict(c.args)) for c in chosen]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    data_types: list[DataType] = Field(min_length=1)


def _load() -> tuple[DataType, ...]:
    """Read and validate the table.

    Raises:
        ValueError: The file is not valid JSON or an entry breaks the schema (the message names
            the file and the entry).

    """
    path = resources.files("lmmprobe.apex").joinpath(DATA_FILE)
    try:
        table = _Table.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(
            f"lmmprobe/apex/{DATA_FILE} is not a valid data type table: {exc}"
        ) from exc
    seen: set[str] = set()
    for i, d in enumerate(table.data_types):
        if d.name in seen:
            raise ValueError(f"lmmprobe/apex/{DATA_FILE}: data_types[{i}] repeats {d.name!r}")
        seen.add(d.name)
    return tuple(table.data_types)


NONE_LABEL = "no change"
"""Answer text of the untransformed alternative in discrimination experiments."""

DATA_TYPES: tuple[DataType, ...] = _load()
"""Every data type the rules orchestrator knows (the 27 APEx ones first, in group order)."""

APEX27: tuple[DataType, ...] = tuple(d for d in DATA_TYPES if d.apex27)


def group_members(group: Group) -> list[DataType]:
    """The 27-type members of a group, in the published order."""
    return [d for d in APEX27 if d.group == group]


def _norm(text: str) -> str:
    # CamelCase tool names become words ("RotateImage" → "rotate image") so both read alike.
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


# The first data type to claim a name keeps it (the table's order decides).
_INDEX: dict[str, DataType] = {}
for _d in DATA_TYPES:
    for _n in _d.names:
        _INDEX.setdefault(_norm(_n), _d)


def find_data_type(text: str) -> tuple[DataType, str] | None:
    """The data type a phrase names: the longest name or synonym found as whole words.

    Returns:
        The data type and the words that matched, or None.

    """
    words = f" {_norm(text)} "
    best: tuple[DataType, str] | None = None
    for name, dtype in _INDEX.items():
        if f" {name} " in words and (best is None or len(name) > len(best[1])):
            best = (dtype, name)
    return best


def by_name(name: str) -> DataType:
    """The data type with this canonical name or synonym.

    Raises:
        KeyError: Unknown name.

    """
    found = _INDEX.get(_norm(name))
    if found is None:
        raise KeyError(f"unknown data type {name!r}")
    return found
