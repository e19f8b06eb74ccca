"""Benchmarks by name: definitions, their registry, and the helpers definitions use.

``--data mmbench,split=dev`` loads a registered benchmark from ``path=``, from
``$LMMPROBE_DATA_DIR/mmbench``, or from the Hugging Face Hub (see `load`); ``lmmprobe data
list`` shows every one. A definition is one `Benchmark` passed to `benchmark`.
"""

from lmmprobe.data.benchmarks._answers import as_index
from lmmprobe.data.benchmarks._images import image_ref, image_refs
from lmmprobe.data.benchmarks.base import (
    BENCHMARKS,
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    RowReader,
)
from lmmprobe.data.benchmarks.register import benchmark

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "PromptTemplate",
    "RowContext",
    "RowError",
    "RowReader",
    "as_index",
    "benchmark",
    "image_ref",
    "image_refs",
]
