"""The ``--as-published`` hook: its protocol, its result and its registry.

A hook (`PublishedFigure`) belongs to one reader (`Origin.tool`: ``mathvista``,
``vlmevalkit``; `ANY_READER` for a benchmark's own script that reads any reader's rows, as
MMMU's) and one lmmprobe benchmark. It returns the tool's figures as the tool writes them
(`Published`): tables of named rows whose cells are the tool's own numbers (a float is given as
its shortest repr, which is what ``json.dump`` and pandas' ``to_csv`` write) or the tool's own
strings where it formats them itself (MathVista's ``"34.8"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lmmprobe.data.base import DataError
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.registry import Registry
from lmmprobe.schema import Sample
from lmmprobe.schema.text import shown_value

__all__ = [
    "ANY_READER",
    "PUBLISHED_FIGURES",
    "Cell",
    "Published",
    "PublishedFigure",
    "PublishedSource",
    "PublishedTable",
    "find_published",
    "published_figure",
]

ANY_READER = "*"
"""`PublishedFigure.tool` of a hook that reads the joined rows of any reader (MMMU's script)."""

Cell = str | int | float
"""One figure as the tool writes it: its own text, a count, or a number (shown by its repr)."""


@dataclass(frozen=True)
class PublishedTable:
    """One table of the tool's figures: a header and named rows."""

    title: str
    columns: tuple[str, ...]
    """The header, the rows' name column first."""
    rows: tuple[tuple[Cell, ...], ...]
    """Each row: its name, then one cell per further column."""

    def cell(self, row: str, column: str) -> Cell:
        """The figure in row `row` (by its name) and column `column`.

        Raises:
            KeyError: No such row or column.

        """
        at = self.columns.index(column)
        for r in self.rows:
            if r[0] == row:
                return r[at]
        raise KeyError(row)


def printed(value: Cell) -> str:
    """A cell as the tool writes it: a float by its shortest repr, the rest as they are."""
    return repr(value) if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Published:
    """A tool's figures for one file, as the tool computes and writes them."""

    definition: str
    """Whose figure: ``MathVista's calculate_score.py``."""
    source: str
    """The code reproduced, with its repository and commit."""
    tables: tuple[PublishedTable, ...]
    notes: tuple[str, ...] = ()
    """Facts worth a reader's attention (the rule version read, guessed letters)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Further keys of ``score --format json``'s ``as_published`` object (MMMU's subjects)."""
    detail: Any = None
    """The hook's own result object (`lmmprobe.predictions.mmmu_published.MmmuPublished`)."""

    def document(self) -> dict[str, Any]:
        """The figures as JSON: each table's rows as objects keyed by the header."""
        return {
            "definition": self.definition,
            "source": self.source,
            "tables": [
                {
                    "title": t.title,
                    "rows": [dict(zip(t.columns, row, strict=True)) for row in t.rows],
                }
                for t in self.tables
            ],
            "notes": list(self.notes),
        } | dict(self.extra)


@dataclass(frozen=True)
class PublishedSource:
    """What a hook is given: the file, what it answers, and its joined rows."""

    path: Path
    """The file or folder ``score`` read."""
    benchmark: str | None
    """The lmmprobe benchmark (``--benchmark``'s name), or None (told from the file)."""
    rows: Sequence[tuple[Sample, ImportedPrediction]] = ()
    """The rows joined to the benchmark (what `ANY_READER` hooks read)."""
    tool_version: str | None = None
    """``--tool-version``: the version of the tool whose rules wrote the file, when told."""
    detail: Mapping[str, str] = field(default_factory=dict)
    """What the reader recorded of the file (`Origin.detail`): the settings it was read with
    (ReForm-Eval's formulation, Dysca's ground truth)."""


class PublishedFigure(Protocol):
    """A reader's ``--as-published`` hook for one benchmark.

    A hook that reads the file again itself, not the joined rows, may say so with a class
    attribute ``reads_rows = False`` (ReForm-Eval's, Dysca's): ``score`` then keeps no row for
    it, and a file of any size is scored in bounded memory.
    """

    @property
    def tool(self) -> str:
        """The reader whose files it reads (`Origin.tool`), or `ANY_READER`."""
        ...

    @property
    def benchmark(self) -> str:
        """The lmmprobe benchmark whose figure it gives."""
        ...

    @property
    def files(self) -> str:
        """The files it reads, in words, listed when no hook fits a file.

        ``VLMEvalKit's MODEL_POPE..._auxmatch tables``.
        """
        ...

    @property
    def versions(self) -> tuple[str, ...]:
        """The tool versions whose figures differ (``--tool-version``), the default last.

        Empty where one version stands for all.
        """
        ...

    def recognises(self, path: Path) -> bool:
        """True when the file itself says it holds this benchmark (read without ``--benchmark``).

        Reads at most the file's name and first row.
        """
        ...

    def figure(self, source: PublishedSource) -> Published:
        """The tool's figures for `source`, exactly as the tool computes them.

        Raises:
            DataError: The file lacks what the tool's figure needs (names the file, row and
                field).

        """
        ...


PUBLISHED_FIGURES: Registry[PublishedFigure] = Registry(
    "published figure",
    entry_point_group="lmmprobe.published_figures",
    discover=("lmmprobe.predictions.as_published",),
)
"""``--as-published`` hooks, named ``READER/BENCHMARK`` (``vlmevalkit/hallusionbench``)."""


def fitting_hooks(tool: str, benchmark: str | None, path: Path) -> list[PublishedFigure]:
    """The hooks that could give `tool`'s figure for `benchmark` (or the one `path` tells).

    A reader's own hook comes before a benchmark script that reads any reader's rows; with no
    benchmark, only the reader's own hooks that recognise `path` (`find_published` picks one).
    """
    hooks = [PUBLISHED_FIGURES.get(name) for name in PUBLISHED_FIGURES.names()]
    mine = [h for h in hooks if h.tool in (tool, ANY_READER)]
    if benchmark is not None:
        fit = [h for h in mine if h.benchmark == benchmark]
        fit.sort(key=lambda h: h.tool == ANY_READER)
        return fit
    return [h for h in mine if h.tool != ANY_READER and h.recognises(path)]


def find_published(tool: str, benchmark: str | None, path: Path) -> PublishedFigure:
    """The hook that gives `tool`'s figure for `benchmark` (or the one `path` says it holds).

    Raises:
        DataError: No hook fits, or the file fits several and ``--benchmark`` would say which.

    """
    hooks = [PUBLISHED_FIGURES.get(name) for name in PUBLISHED_FIGURES.names()]
    fit = fitting_hooks(tool, benchmark, path)
    if benchmark is None and len({h.benchmark for h in fit}) > 1:
        names = ", ".join(sorted({h.benchmark for h in fit}))
        raise DataError(
            f"--as-published: {path} could hold any of {names}: say which with --benchmark"
        )
    if not fit:
        known = sorted(f"{h.benchmark} ({h.files})" for h in hooks)
        what = f"on {benchmark}" if benchmark is not None else "whose name tells the benchmark"
        raise DataError(
            f"--as-published: {path}: no published figure for a {tool} file {what}; there is "
            f"one for: {'; '.join(known)}"
        )
    return fit[0]


def published_figure(hook: PublishedFigure, source: PublishedSource) -> Published:
    """`hook`'s figures for `source`, with ``--tool-version`` checked against its versions.

    Raises:
        DataError: A version the hook does not know (a hook of one version takes none), or
            what the hook raises.

    """
    version = source.tool_version
    if version is not None and version not in hook.versions:
        known = (
            f"versions {' or '.join(hook.versions)}"
            if hook.versions
            else "one version only (it takes no --tool-version)"
        )
        raise DataError(
            f"--tool-version {shown_value(version)!r}: the {hook.benchmark} figure of "
            f"{hook.files} has {known}"
        )
    return hook.figure(source)
