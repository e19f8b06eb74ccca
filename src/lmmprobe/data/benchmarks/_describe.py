"""A benchmark as ``lmmprobe data list`` / ``data show`` print it: plain JSON-ready values."""

from __future__ import annotations

import difflib
from dataclasses import fields
from typing import Any

from lmmprobe._secrets import redact_spec
from lmmprobe.data.base import DataError, parse_source_spec
from lmmprobe.data.benchmarks.base import BENCHMARKS, Benchmark
from lmmprobe.data.benchmarks.load import DATA_DIR_ENV, has_local_copy, local_copy

_CALLABLES = ("to_sample", "read_files")


def _qualname(fn: Any) -> str | None:
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def describe(b: Benchmark) -> dict[str, Any]:
    """Every field of `b` (readers by their import path), plus where its local copy is.

    Added keys: ``local_copy`` (``$LMMPROBE_DATA_DIR/NAME`` resolved, None when the variable
    is unset) and ``present`` (whether that copy exists; for a suite, every member's).
    """
    out: dict[str, Any] = {}
    for f in fields(b):
        value = getattr(b, f.name)
        if f.name in _CALLABLES:
            value = _qualname(value)
        elif f.name == "prompt":
            value = {
                "template": value.template,
                "source": value.source,
                "option_format": value.option_format,
                "option_sep": value.option_sep,
                "context_format": value.context_format,
            }
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value
    where = local_copy(b)
    out["local_copy"] = str(where) if where is not None else None
    out["present"] = has_local_copy(b)
    return out


def find_benchmark(name: str) -> Benchmark:
    """The benchmark registered as `name`.

    Raises:
        DataError: No such benchmark; the message suggests the closest names.

    """
    if name in BENCHMARKS:
        return BENCHMARKS.get(name)
    known = BENCHMARKS.names()
    close = difflib.get_close_matches(name.lower(), known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise DataError(
        f"no benchmark named {redact_spec(name)!r}{hint} (`lmmprobe data list` shows all {len(known)})"
    )


def official_matcher(data: str) -> str | None:
    """The matcher of the official reading of the benchmark a data spec names, if it has one.

    ``dysca,path=DIR`` gives ``dysca`` (`Benchmark.matcher`); a spec naming no benchmark (a
    JSONL file, ``demo``, ``synth:DIR``) or a malformed one gives None, and the run's own
    checks then report what is wrong with it.
    """
    try:
        name = parse_source_spec(data)[0]
    except ValueError:
        return None
    return BENCHMARKS.get(name).matcher if name in BENCHMARKS else None


__all__ = ["DATA_DIR_ENV", "describe", "find_benchmark", "official_matcher"]
