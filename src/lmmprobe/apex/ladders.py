"""The rules orchestrator's ladders of experiments, easy to hard, kept as data.

Origin: APEx (Conti et al.) plans experiments from easy to hard. Each query family
(`lmmprobe.apex.query`) has a ladder in ``apex/data/ladders.json``, validated when this module
is imported: presence (yes/no) first, then discrimination among alternatives of the same group,
then milder severities or more alternatives; the group family adapts, asking yes/no about the
members the models confused most so far.

A rung of the file states, once each: its ``title`` (the open question it answers), its
``difficulty``, the ``question`` asked, the ``rationale``, ``when`` it applies (a named
condition of the family, e.g. ``mild``: the data type has a mild severity), and how its
``answers`` are made:

- ``presence``: yes = the query's data type (``severity``) on a ``base`` picture ("random", or
  "other group": a group other than the subject's), no = the same picture untouched;
- ``transforms``: one answer per data type of a named list (``members``) plus "no change";
- ``most confused``: yes/no for the data type with the ``rank``-th lowest accuracy so far;
- ``class presence``: yes = the subject, no = the ``contrast`` (another class or group);
- ``classes``: one answer per class of a named list (``members``), optionally after an
  ``extra`` data type, with the query's ``condition`` kept ("same"), left out ("none") or at
  its "other severity".

Texts are `str.format` templates over the family's words (`FAMILIES` lists them, with the
lists and conditions a rung may name). `lmmprobe.apex.plans` turns a query's reading and its
family's ladder into a plan of experiments.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lmmprobe.apex.datatypes import by_name
from lmmprobe.apex.experiments import Difficulty
from lmmprobe.apex.query import Severity

Family = Literal["data_type", "group", "recognition"]
AnswerKind = Literal["presence", "transforms", "most confused", "class presence", "classes"]

DATA_FILE = "data/ladders.json"
"""The ladders' path inside the ``lmmprobe.apex`` package."""


class RungRow(BaseModel):
    """One rung of a ladder as the data file states it (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str = Field(min_length=1, description="The open question the rung answers.")
    difficulty: Difficulty
    question: str = Field(min_length=1, description="The question asked about each image.")
    rationale: str = Field(min_length=1, description="Why this experiment, at this point.")
    answers: AnswerKind
    when: str | None = Field(default=None, description="A condition of the family, or always.")
    members: str | None = Field(default=None, description="A named list (transforms, classes).")
    severity: Severity = "strong"
    base: Literal["random", "other group"] = "random"
    contrast: Literal["other class", "other group"] | None = None
    extra: str | None = Field(default=None, description="A data type applied before the rest.")
    condition: Literal["same", "none", "other severity"] = "same"
    rank: int = Field(default=0, ge=0, description="most confused: 0 = the most confused.")


class Ladder(BaseModel):
    """A family's ladder: the task it plans for and its rungs in order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str = Field(min_length=1)
    rungs: list[RungRow] = Field(min_length=1)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    data_type: Ladder
    group: Ladder
    recognition: Ladder


@dataclass(frozen=True)
class FamilyVocabulary:
    """What a family's rungs may name: template words, named lists, conditions, answer kinds."""

    words: frozenset[str]
    lists: frozenset[str]
    conditions: frozenset[str]
    kinds: frozenset[AnswerKind]


FAMILIES: dict[Family, FamilyVocabulary] = {
    "data_type": FamilyVocabulary(
        words=frozenset({"name", "group", "question", "alternatives", "n_everyone", "other",
                         "other_or_random", "cond"}),
        lists=frozenset({"alternatives", "everyone"}),
        conditions=frozenset({"mild", "no mild"}),
        kinds=frozenset({"presence", "transforms"}),
    ),
    "group": FamilyVocabulary(
        words=frozenset({"group", "first", "second", "n_first", "n_second", "n_all", "cond"}),
        lists=frozenset({"first", "second", "all"}),
        conditions=frozenset({"second"}),
        kinds=frozenset({"transforms", "most confused"}),
    ),
    "recognition": FamilyVocabulary(
        words=frozenset({"label", "a_label", "labels", "two", "four", "n_four", "n_six", "other",
                         "other_class", "condition", "cond", "which"}),
        lists=frozenset({"two", "four", "six"}),
        conditions=frozenset({"contrast class", "contrast group", "no contrast", "condition",
                              "no condition"}),
        kinds=frozenset({"class presence", "classes"}),
    ),
}  # fmt: skip
"""Per family, the names its ladder may use (the code below provides exactly these)."""

_MOST_CONFUSED_WORDS = frozenset({"name", "question", "accuracy"})


def _fields(template: str) -> set[str]:
    return {
        re.split(r"[.\[]", name)[0]
        for _, name, _, _ in string.Formatter().parse(template)
        if name is not None
    }


def check_ladder(family: Family, ladder: Ladder) -> None:
    """Check a ladder against its family's vocabulary.

    Raises:
        ValueError: Naming the rung and field: an unknown template word, list, condition,
            answer kind or data type.

    """
    vocab = FAMILIES[family]
    where = f"lmmprobe/apex/{DATA_FILE}: {family}"
    if unknown := _fields(ladder.task) - vocab.words:
        raise ValueError(f"{where}.task names {sorted(unknown)}; known: {sorted(vocab.words)}")
    for i, row in enumerate(ladder.rungs):
        at = f"{where}.rungs[{i}]"
        words = vocab.words | (_MOST_CONFUSED_WORDS if row.answers == "most confused" else set())
        for name in ("title", "question", "rationale"):
            # Titles are filled when the plan is made, before any adaptive word exists.
            allowed = vocab.words if name == "title" else words
            if unknown := _fields(getattr(row, name)) - allowed:
                raise ValueError(f"{at}.{name} names {sorted(unknown)}; known: {sorted(allowed)}")
        if row.answers not in vocab.kinds:
            raise ValueError(f"{at}.answers={row.answers!r}; {family} uses {sorted(vocab.kinds)}")
        if row.when is not None and row.when not in vocab.conditions:
            raise ValueError(f"{at}.when={row.when!r}; known: {sorted(vocab.conditions)}")
        needs_members = row.answers in ("transforms", "classes")
        if needs_members and row.members not in vocab.lists:
            raise ValueError(f"{at}.members={row.members!r}; known: {sorted(vocab.lists)}")
        if row.answers == "class presence" and row.contrast is None:
            raise ValueError(f"{at}: class presence needs a contrast (other class or other group)")
        if row.extra is not None:
            try:
                by_name(row.extra)
            except KeyError as exc:
                raise ValueError(f"{at}.extra: {exc.args[0]}") from exc


def load_ladders() -> dict[Family, Ladder]:
    """Read and validate the ladders file.

    Raises:
        ValueError: The file breaks its schema; the message names the family, rung and field.

    """
    path = resources.files("lmmprobe.apex").joinpath(DATA_FILE)
    try:
        data = _File.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ValueError(f"lmmprobe/apex/{DATA_FILE} is not a valid ladders file: {exc}") from exc
    ladders: dict[Family, Ladder] = {
        "data_type": data.data_type,
        "group": data.group,
        "recognition": data.recognition,
    }
    for family, ladder in ladders.items():
        check_ladder(family, ladder)
    return ladders


LADDERS: dict[Family, Ladder] = load_ladders()
