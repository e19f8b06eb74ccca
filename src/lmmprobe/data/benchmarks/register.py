"""Registering a benchmark: in `BENCHMARKS`, and as the data source of its name.

A definition module calls `benchmark` (re-exported by `lmmprobe.data.benchmarks`); the source it
registers loads through `lmmprobe.data.benchmarks.load`, which this module sits above (the
definition types of `lmmprobe.data.benchmarks.base` sit below both). Each source is tagged
``benchmark`` (`lmmprobe.data.base.BENCHMARK_TAG`), so the data layer tells benchmarks from plain
sources without importing this package.
"""

from __future__ import annotations

from collections.abc import Callable

from lmmprobe.data.base import BENCHMARK_TAG, SOURCES, LoadResult
from lmmprobe.data.benchmarks.base import BENCHMARKS, Benchmark
from lmmprobe.data.benchmarks.load import load_benchmark

__all__ = ["benchmark"]


def _source_for(b: Benchmark) -> Callable[..., LoadResult]:
    def load(
        target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> LoadResult:
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
        b.name,
        summary=f"{b.name}[,split=,path=,limit=,config=]  benchmark: {b.title}",
        tag=BENCHMARK_TAG,
    )(_source_for(b))
    return b
