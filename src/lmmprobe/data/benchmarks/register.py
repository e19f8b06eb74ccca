"""Registering a benchmark: in `BENCHMARKS`, and as the data source of its name.

A definition module calls `benchmark` (re-exported by `lmmprobe.data.benchmarks`); the source it
registers loads through `lmmprobe.data.benchmarks.load`, which this module sits above (the
definition types of `lmmprobe.data.benchmarks.base` sit below both). Each source is tagged
``benchmark`` (`lmmprobe.data.base.BENCHMARK_TAG`), so the data layer tells benchmarks from plain
sources without importing this package.
"""

from __future__ import annotations

import difflib

from lmmprobe.data.base import BENCHMARK_TAG, SOURCES, SampleStream, Streaming, streaming
from lmmprobe.data.benchmarks.base import BENCHMARKS, Benchmark
from lmmprobe.data.benchmarks.load import stream_benchmark
from lmmprobe.metrics.run_metric import RUN_METRICS

__all__ = ["benchmark"]


def _source_for(b: Benchmark) -> Streaming:
    # A streaming source: `iter_source` reads its rows one at a time, `load_source` its list.
    def stream(
        target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> SampleStream:
        return stream_benchmark(b, target, options, strict=strict, limit=limit)

    stream.__doc__ = f"{b.title} (benchmark)"
    return streaming(stream)


# The data sources that are not benchmarks: a benchmark may not take their names.
_OTHER_SOURCES = frozenset({"demo", "hf", "imagefolder", "jsonl", "reform", "synth"})


def benchmark(b: Benchmark) -> Benchmark:
    """Register `b` in `BENCHMARKS` and as the data source of its name; returns `b`.

    Raises:
        ValueError: The name is taken by a data source that is not a benchmark (``hf``), or
            the metric is not a registered run metric (the message names close ones).

    """
    if b.name in _OTHER_SOURCES:
        raise ValueError(f"benchmark {b.name!r}: a data source of that name already exists")
    if b.metric is not None and b.metric not in RUN_METRICS:
        close = difflib.get_close_matches(b.metric, RUN_METRICS.names(), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise ValueError(
            f"benchmark {b.name!r}: metric {b.metric!r} is not a registered run metric; "
            f"{hint}(`lmmprobe list metrics` shows them)"
        )
    size = f"{b.size} rows, " if b.size else ""
    metric = b.metric or f"no metric (needs {b.needs})"
    summary = f"{b.title}: {size}{b.formulation}, {metric}"
    BENCHMARKS.register(b.name, summary=summary)(b)
    SOURCES.register(
        b.name,
        summary=f"{b.name}[,split=,path=,limit=,config=]  benchmark: {b.title}",
        tag=BENCHMARK_TAG,
    )(_source_for(b))
    return b
