"""A benchmark as ``lmmprobe data list`` / ``data show`` print it: plain JSON-ready values."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import fields
from typing import Any

from lmmprobe._secrets import redact_spec
from lmmprobe.data.base import DataError, parse_source_spec
from lmmprobe.data.benchmarks.base import BENCHMARKS, GROUPS, Benchmark
from lmmprobe.data.benchmarks.load import DATA_DIR_ENV, has_local_copy, local_copy

_CALLABLES = ("to_sample", "read_files")


def _qualname(fn: Any) -> str | None:
    if fn is None:
        return None
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def groups_of(benchmarks: Iterable[Benchmark]) -> dict[str, list[str]]:
    """Each benchmark's `GROUPS`, in `GROUPS` order, from the definitions' own data.

    A benchmark is in the groups its definition names (`Benchmark.groups`), in those of every
    set naming it as a member (HEMM's suite makes its members ``hemm``, the ``openvlm`` set its
    columns ``leaderboard``), and, where it names none and no set gives it one, a set is in the
    groups all its members share (ReForm-Eval's dimension suites). A benchmark in no family
    (`Group.family`) is ``standard``. A member a set names that is not among `benchmarks` is
    passed over.
    """
    found = {b.name: b for b in benchmarks}
    groups: dict[str, set[str]] = {name: set(b.groups) for name, b in found.items()}
    for b in found.values():
        for member in b.members:
            if member in groups:
                groups[member] |= set(b.groups)
    for name, b in found.items():
        members = [groups[m] for m in b.members if m in groups]
        if members and not b.groups:
            groups[name] |= set.intersection(*members)
    out = {}
    for name, named in groups.items():
        if not any(GROUPS[g].family for g in named):
            named.add("standard")
        out[name] = [g for g in GROUPS if g in named]
    return out


def benchmark_groups(b: Benchmark) -> list[str]:
    """`b`'s groups among the registered benchmarks (`groups_of`); `b` itself need not be one."""
    known = [BENCHMARKS.get(name) for name in BENCHMARKS.names() if name != b.name]
    return groups_of([*known, b])[b.name]


def describe(b: Benchmark, groups: list[str] | None = None) -> dict[str, Any]:
    """Every field of `b` (readers by their import path), plus its groups and local copy.

    Added keys: ``groups`` (replacing the definition's own: every group it is in, see
    `groups_of`), ``local_copy`` (``$LMMPROBE_DATA_DIR/NAME`` resolved, None when the
    variable is unset) and ``present`` (whether that copy exists; for a suite, every
    registered member's).

    Args:
        b: The definition.
        groups: Its groups when already worked out for every benchmark (`groups_of`, as
            ``data list`` does once); `benchmark_groups` otherwise.

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
    out["groups"] = benchmark_groups(b) if groups is None else list(groups)
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

    ``dysca,path=DIR`` gives ``dysca`` (`Benchmark.matcher`); a set whose members read their
    answers with a matcher of their own (``openvlm``: MME's, POPE's, VLMEvalKit's) gives
    ``benchmark``, each row read by its own benchmark's matcher (`run.scoring.matcher_for`); a
    spec naming no benchmark (a JSONL file, ``demo``, ``synth:DIR``) or a malformed one gives
    None, and the run's own checks then report what is wrong with it.
    """
    try:
        name = parse_source_spec(data)[0]
    except ValueError:
        return None
    if name not in BENCHMARKS:
        return None
    found = BENCHMARKS.get(name)
    if found.members and benchmark_matchers(data):
        return "benchmark"
    return found.matcher


def benchmark_matchers(data: str) -> dict[str, str]:
    """Each benchmark of a data spec (a set's members, or the one named) by its own matcher.

    Only benchmarks that name a matcher (`Benchmark.matcher`) are listed; the run's
    ``FormulateConfig.matchers`` under the matcher ``benchmark``. A spec naming no benchmark
    gives an empty mapping.
    """
    try:
        name = parse_source_spec(data)[0]
    except ValueError:
        return {}
    if name not in BENCHMARKS:
        return {}
    found = BENCHMARKS.get(name)
    named = [BENCHMARKS.get(m) for m in found.members if m in BENCHMARKS] or [found]
    return {b.name: b.matcher for b in named if b.matcher is not None}


__all__ = [
    "DATA_DIR_ENV",
    "benchmark_groups",
    "benchmark_matchers",
    "describe",
    "find_benchmark",
    "groups_of",
    "official_matcher",
]
