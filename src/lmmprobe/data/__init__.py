"""Data sources: lmmprobe JSONL, the built-in demo, and a registry for more."""

from lmmprobe.data.base import (
    FINGERPRINT_VERSION,
    SOURCES,
    DataError,
    LoadResult,
    SampleProblem,
    SampleStream,
    Source,
    StreamedLoad,
    data_fingerprint,
    iter_source,
    load_in_chunks,
    load_source,
    no_valid_samples,
    parse_source_spec,
    sample_fingerprint,
    streaming,
)

__all__ = [
    "FINGERPRINT_VERSION",
    "SOURCES",
    "DataError",
    "LoadResult",
    "SampleProblem",
    "SampleStream",
    "Source",
    "StreamedLoad",
    "data_fingerprint",
    "iter_source",
    "load_in_chunks",
    "load_source",
    "no_valid_samples",
    "parse_source_spec",
    "sample_fingerprint",
    "streaming",
]
