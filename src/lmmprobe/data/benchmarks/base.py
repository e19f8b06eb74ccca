"""The benchmark definition: one `Benchmark` per published benchmark, found by name.

A definition says where the data lives (a hub id at a pinned revision, or the original release
files), how one row becomes a `Sample`, the benchmark's official prompt (cited) and metric,
and its HEMM and ReForm-Eval dimensions. `benchmark` registers it in `BENCHMARKS` and as a data
source of the same name, so ``--data mmbench,split=dev`` loads it (see
`lmmprobe.data.benchmarks.load`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import SOURCES, LoadResult
from lmmprobe.data.benchmarks._fetch import hf_download
from lmmprobe.data.rows import RowError
from lmmprobe.registry import Registry
from lmmprobe.schema import Sample
from lmmprobe.schema.benchmark import PromptTemplate  # re-exported: definitions import it here

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "PromptTemplate",
    "RowContext",
    "RowError",
    "RowReader",
    "benchmark",
]


@dataclass(frozen=True)
class RowContext:
    """Where a row comes from, for a definition's reader.

    Attributes:
        benchmark: The definition being loaded.
        split: The split being read.
        root: The local copy's folder (relative image paths resolve here); None for rows read
            from the hub cache.
        where: ``PATH[split]:N``, for messages.
        index: The row's 0-based position in the split.

    """

    benchmark: Benchmark
    split: str
    root: Path | None
    where: str
    index: int


RowReader = Callable[[Mapping[str, Any], RowContext], Sample | list[Sample] | None]
"""Turns one row into a sample, several samples (a row holding two questions), or None to skip
the row on purpose (ScienceQA rows without an image); raises `RowError(field, reason)` for a bad
row."""

FileReader = Callable[[Path, str], Iterator[tuple[str, Mapping[str, Any]]]]
"""For ``layout="files"``: ``(root, split)`` to ``(where, row)`` pairs."""


@dataclass(frozen=True)
class Benchmark:
    """One published benchmark: its data, reading, prompt and metric.

    Attributes:
        name: Registry and ``--data`` name, lowercase (``mmbench``, ``hemm-nlvr2``).
        title: Display title (``MMBench (dev, English)``).
        citation: The paper.
        license: From the dataset card (``unknown (see card)`` if it says nothing).
        formulation: The `Sample` formulation most rows get.
        metric: The run metric (``RUN_METRICS``) computing the official score.
        prompt: The official prompt.
        to_sample: Reads one row (see `RowReader`).
        fetch: The exact shell command that fetches a local copy into
            ``$LMMPROBE_DATA_DIR/NAME``. Leave it out for data on the Hub: it is then made
            from `hub_id`, `revision` and `include` (``hf download ...``, each word quoted).
            `dataclasses.replace` keeps the old command; pass ``fetch=""`` to make it anew.
        split: The default split.
        splits: The known splits.
        hub_id: The Hugging Face Hub dataset id, if it is there.
        revision: The pinned commit of the hub repository (None: unknown, say so in notes).
        config: The hub config (subset).
        include: Glob patterns of the hub repository's files a copy needs (the fetch command's
            ``--include`` patterns, and what the automatic download takes); empty: every file.
        size: Rows (questions) in the default split, from the card or paper.
        layout: ``hub`` (read with `datasets`) or ``files`` (original release files read by
            `read_files`).
        read_files: For ``layout="files"``.
        hemm: The HEMM catalog task name, where it is one of HEMM's.
        reform: The ReForm-Eval dimension, where it has one.
        notes: Plain sentences ``data show`` prints (an LLM-judge caveat, say).
        needs: A capability lmmprobe lacks; loading it raises `DataError` saying so.
        circular: The official protocol is CircularEval (run it with ``--circular``).
        members: For a suite (``hemm``): the member benchmarks' names.
        schema_confirmed: Where the exact schema was confirmed; ``""`` if it was not.

    """

    name: str
    title: str
    citation: str
    license: str
    formulation: str
    metric: str
    prompt: PromptTemplate
    to_sample: RowReader
    fetch: str = ""
    split: str = "test"
    splits: tuple[str, ...] = ()
    hub_id: str | None = None
    revision: str | None = None
    config: str | None = None
    include: tuple[str, ...] = ()
    size: int | None = None
    layout: str = "hub"
    read_files: FileReader | None = None
    hemm: str | None = None
    reform: str | None = None
    notes: tuple[str, ...] = ()
    needs: str | None = None
    circular: bool = False
    members: tuple[str, ...] = ()
    schema_confirmed: str = ""

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.lower() or "," in self.name or ":" in self.name:
            raise ValueError(
                f"benchmark name {self.name!r}: use a non-empty lowercase name without ',' or ':'"
            )
        if self.layout not in ("hub", "files"):
            raise ValueError(f"benchmark {self.name}: layout must be 'hub' or 'files'")
        if self.layout == "files" and self.read_files is None and not self.members:
            raise ValueError(f"benchmark {self.name}: layout='files' needs read_files")
        if isinstance(self.include, str):  # ("a/*") is a string: each pattern must be one item
            raise ValueError(f"benchmark {self.name}: include must be a tuple of patterns")
        if not self.fetch:
            if self.hub_id is None:
                raise ValueError(f"benchmark {self.name}: give fetch (its data is not on the Hub)")
            # Written once: the command comes from the same fields the automatic download uses.
            command = hf_download(self.name, self.hub_id, self.revision, self.include)
            object.__setattr__(self, "fetch", command)


BENCHMARKS: Registry[Benchmark] = Registry(
    "benchmark",
    # One module imports the built-in definitions (standard_choice, standard_open, hemm).
    builtins=("lmmprobe.data.benchmarks._builtin",),
)
"""Benchmarks by name; ``lmmprobe data list`` shows them. Another package adds one by calling
`benchmark` in a module it registers in the ``lmmprobe.sources`` entry-point group."""


def _source_for(b: Benchmark) -> Callable[..., LoadResult]:
    def load(
        target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> LoadResult:
        # Imported here: the loader pulls in `datasets` helpers, definitions need none of it.
        from lmmprobe.data.benchmarks.load import load_benchmark

        return load_benchmark(b, target, options, strict=strict, limit=limit)

    load.__doc__ = f"{b.title} (benchmark)"
    return load


# The data sources that are not benchmarks: a benchmark may not take their names.
_OTHER_SOURCES = frozenset({"demo", "hf", "imagefolder", "jsonl", "reform", "synth"})


def benchmark(b: Benchmark) -> Benchmark:
    """Register `b` in `BENCHMARKS` and as the data source of its name; returns `b`.

    Raises:
        ValueError: The name is taken by a data source that is not a benchmark (``hf``).

    """
    if b.name in _OTHER_SOURCES:
        raise ValueError(f"benchmark {b.name!r}: a data source of that name already exists")
    size = f"{b.size} rows, " if b.size else ""
    summary = f"{b.title}: {size}{b.formulation}, {b.metric}"
    BENCHMARKS.register(b.name, summary=summary)(b)
    SOURCES.register(
        b.name, summary=f"{b.name}[,split=,path=,limit=,config=]  benchmark: {b.title}"
    )(_source_for(b))
    return b
