"""The task catalog: HEMM's 30 annotated datasets, our own tasks, and any user annotations.

The built-in annotations are data (``holistic/data/*.json``):

- ``hemm_tasks.json``: the 30 datasets of HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation
  of Multimodal Foundation Models"), with the six dimension categories of the paper's table 1
  (a "yes" in its fine-grained column is ``granularity: fine``). Text outputs are scored with
  BARTScore (unbounded: normalized by the identity score); the two image-output datasets,
  MagicBrush and LNCOCO, with CLIP-I (bounded by 1).
- ``lmmprobe_tasks.json``: our own tasks, annotated the same way: the synthetic benchmark's 13
  subtasks (after Dysca; granularity follows Dysca's fine/coarse labels), the demo source's
  tasks, and the formulations (after ReForm-Eval: single choice, true/false, captioning, OCR,
  KIE, plus open-ended and Dysca's free-form). A formulation is annotated as the typical task
  asked in it. The synthetic ``ocr`` subtask and the OCR formulation share one entry.

A user file (YAML, or JSON by extension) maps task names to entries of the same shape::

    MyChartQA:
      dimensions: {interaction: synergy, granularity: fine, reasoning: more,
                   knowledge: no, flow: fusion, use_case: science}
      metric: accuracy
      bounded: true
      description: Questions about charts.
      aliases: [chartqa]

and its entries replace built-in ones of the same name. Names are looked up ignoring case and
punctuation, so "OK-VQA", "ok_vqa" and "okvqa" are one task.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe.holistic._files import (
    KeyLines,
    TaxonomyError,
    describe_validation,
    first_field,
    read_mapping,
    where,
)
from lmmprobe.holistic.taxonomy import TaskDimensions, TaskEntry

__all__ = [
    "BUILTIN_FILES",
    "Catalog",
    "TaxonomyError",
    "load_catalog",
    "load_task_file",
    "normalize_name",
]

BUILTIN_FILES: dict[str, str] = {"hemm": "hemm_tasks.json", "lmmprobe": "lmmprobe_tasks.json"}
"""Source label -> built-in annotation file under ``lmmprobe/holistic/data``."""

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def normalize_name(name: str) -> str:
    """Lookup key of a task name: lowercase letters and digits only ("OK-VQA" -> "okvqa")."""
    return _NON_ALNUM.sub("", name.casefold())


class Catalog:
    """Annotated tasks, looked up by name or alias regardless of case and punctuation."""

    def __init__(self, entries: Iterable[TaskEntry] = ()) -> None:
        """Index the entries; a later entry replaces an earlier one with the same name.

        Args:
            entries: The tasks.

        Raises:
            TaxonomyError: An alias of one task is the name or alias of another.

        """
        self._entries: dict[str, TaskEntry] = {}
        for entry in entries:
            self._entries[normalize_name(entry.name)] = entry
        self._index: dict[str, str] = {}
        for key in self._entries:
            self._index[key] = key
        for key, entry in self._entries.items():
            for alias in entry.aliases:
                akey = normalize_name(alias)
                owner = self._index.get(akey)
                if owner is not None and owner != key:
                    raise TaxonomyError(
                        f"alias {alias!r} of task {entry.name!r} is already the name or an "
                        f"alias of task {self._entries[owner].name!r}"
                    )
                self._index[akey] = key

    def get(self, task: str) -> TaskEntry | None:
        """The entry of `task` (by name or alias), or None when it is not annotated."""
        key = self._index.get(normalize_name(task))
        return self._entries[key] if key is not None else None

    def dimensions(self, task: str) -> TaskDimensions | None:
        """The six dimension categories of `task`, or None when it is not annotated."""
        entry = self.get(task)
        return entry.dimensions if entry is not None else None

    def maximum(self, task: str) -> float | None:
        """Best value of `task`'s metric when bounded (see `TaskEntry.best`), else None."""
        entry = self.get(task)
        return entry.best if entry is not None else None

    def tasks(self, source: str | None = None) -> list[str]:
        """Task names in catalog order, optionally only those from `source` ('hemm', ...)."""
        return [e.name for e in self._entries.values() if source is None or e.source == source]

    def entries(self) -> list[TaskEntry]:
        """All entries in catalog order."""
        return list(self._entries.values())

    def merged(self, other: Iterable[TaskEntry]) -> Catalog:
        """A new catalog with `other`'s entries added, replacing same-named ones."""
        return Catalog([*self._entries.values(), *other])

    def __contains__(self, task: object) -> bool:
        return isinstance(task, str) and self.get(task) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TaskEntry]:
        return iter(list(self._entries.values()))


def _entries_from(
    data: dict[str, Any], lines: KeyLines, path: Path, source: str
) -> list[TaskEntry]:
    # Name clashes first: they are file-level mistakes, whatever the entries hold.
    seen: dict[str, str] = {}
    for name in data:
        key = normalize_name(name)
        if key in seen:
            raise TaxonomyError(
                f"{where(path, lines, name)}: task {name!r} is the same name as {seen[key]!r} "
                "(case and punctuation are ignored)"
            )
        seen[key] = name
    entries: list[TaskEntry] = []
    for name, body in data.items():
        at = where(path, lines, name)
        if not isinstance(body, dict):
            raise TaxonomyError(
                f"{at}: task {name!r}: expected a mapping with dimensions, metric, bounded, "
                f"got {type(body).__name__}"
            )
        if "name" in body or "source" in body:
            at = where(path, lines, name, "name" if "name" in body else "source")
            raise TaxonomyError(
                f"{at}: task {name!r}: 'name' and 'source' are set by the file, remove them"
            )
        try:
            entries.append(TaskEntry(name=name, source=source, **body))
        except ValidationError as exc:
            at = where(path, lines, name, first_field(exc))  # the field's own line
            raise TaxonomyError(f"{at}: task {name!r}: {describe_validation(exc)}") from exc
    return entries


def load_task_file(path: str | Path, *, source: str = "user") -> list[TaskEntry]:
    """Read and validate a task annotation file (YAML, or JSON by extension).

    Args:
        path: The file: a mapping of task names to entries (see the module docstring).
        source: Label stored in each entry's ``source``.

    Returns:
        The entries in file order.

    Raises:
        TaxonomyError: The file is unreadable or an entry is invalid; the message names the
            file (and line, for YAML), the task and the field.

    """
    p = Path(path)
    data, lines = read_mapping(p)
    return _entries_from(data, lines, p, source)


def _builtin(source: str) -> list[TaskEntry]:
    ref = resources.files("lmmprobe.holistic").joinpath("data", BUILTIN_FILES[source])
    with resources.as_file(ref) as path:
        return load_task_file(path, source=source)


def load_catalog(extra: str | Path | None = None) -> Catalog:
    """The built-in catalog (HEMM's 30 datasets and our tasks), plus a user file if given.

    Args:
        extra: Optional YAML (or ``.json``) file of further annotations; its entries replace
            built-in ones of the same name.

    Returns:
        The catalog.

    Raises:
        TaxonomyError: `extra` is unreadable or invalid (the message names file, task and
            field), or an alias clashes with another task.

    """
    entries = [*_builtin("hemm"), *_builtin("lmmprobe")]
    if extra is not None:
        entries.extend(load_task_file(extra))
    return Catalog(entries)
