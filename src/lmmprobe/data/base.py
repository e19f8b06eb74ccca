"""Data sources: the registry, load reports with file:line problems, and data fingerprints."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lmmprobe.registry import Registry
from lmmprobe.schema import Sample

MAX_PROBLEMS_SHOWN = 10


@dataclass(frozen=True)
class SampleProblem:
    """Why one input row was rejected, and where it is."""

    source: str
    line: int | None
    field: str | None
    reason: str

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        what = f"{self.field}: {self.reason}" if self.field else self.reason
        return f"{where}: {what}"


class DataError(ValueError):
    """Invalid input in strict mode, or a source that cannot be read at all."""

    def __init__(self, problem: SampleProblem | str) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass
class LoadResult:
    """Samples a source produced, plus what it rejected."""

    samples: list[Sample]
    source: str
    invalid: int = 0
    problems: list[SampleProblem] = field(default_factory=list)

    def add_problem(self, problem: SampleProblem, strict: bool) -> None:
        """Record a rejected row; in strict mode raise instead."""
        if strict:
            raise DataError(problem)
        self.invalid += 1
        if len(self.problems) < MAX_PROBLEMS_SHOWN:
            self.problems.append(problem)


class Source(Protocol):
    """A data source: builds samples from a spec's target and options."""

    def __call__(
        self, target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
    ) -> LoadResult:
        """Load samples; report invalid rows in the result (or raise DataError if strict)."""
        ...


SOURCES: Registry[Source] = Registry("data source")
# The synthetic benchmark lives in a higher layer (it draws with the image tools); it is
# imported only when a spec names it.
SOURCES.register_lazy(
    "synth",
    "lmmprobe.synth.source:load_synth",
    summary="synth[:DIR][,n=52,seed=0,size=256,tasks=a+b,scenario=clean+corruption]  "
    "Dysca-style synthetic questions (generated folder, or made on the fly)",
)


def parse_source_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """Split a data spec: a ``.jsonl`` path, or ``name[:target][,key=value...]``.

    Raises:
        ValueError: An option is not ``key=value``.

    """
    head, *opts = spec.split(",")
    options: dict[str, str] = {}
    for opt in opts:
        k, eq, v = opt.partition("=")
        if not eq:
            raise ValueError(f"data spec {spec!r}: option {opt!r} is not key=value")
        options[k.strip()] = v.strip()
    name, sep, target = head.partition(":")
    if name in SOURCES.names():
        return name, (target if sep else None), options
    if head.endswith(".jsonl") or Path(head).is_file():
        return "jsonl", head, options
    return name, (target if sep else None), options


def load_source(spec: str, *, strict: bool = False, limit: int | None = None) -> LoadResult:
    """Load samples from a data spec through the source registry.

    Args:
        spec: ``demo``, ``demo,n=500,seed=1``, ``path/to/data.jsonl`` or ``jsonl:PATH``.
        strict: Raise `DataError` on the first invalid row instead of skipping it.
        limit: Stop after this many valid samples.

    Raises:
        RegistryError: Unknown source name.
        DataError: Unreadable source, or an invalid row in strict mode.

    """
    import lmmprobe.data.demo
    import lmmprobe.data.hf_dataset
    import lmmprobe.data.imagefolder
    import lmmprobe.data.jsonl
    import lmmprobe.data.reform  # noqa: F401  (register the built-in sources)

    name, target, options = parse_source_spec(spec)
    return SOURCES.get(name)(target, options, strict=strict, limit=limit)


_METADATA_JSON = json.JSONEncoder(sort_keys=True, default=str)
_MEMO_LIMIT = 4096
_metadata_memo: dict[tuple[tuple[str, str], ...], str] = {}


def metadata_json(metadata: dict[str, Any]) -> str:
    """``json.dumps(metadata, sort_keys=True, default=str)``, remembered for flat text dicts.

    Metadata such as ``{"task": ..., "subtask": ...}`` takes few distinct values across a data
    set, so its text is encoded once. Only dicts whose values are all strings are remembered:
    equal memo keys then always encode equally (unlike ``1``, ``1.0`` and ``True``).
    """
    items = tuple(metadata.items())
    for k, v in items:
        if type(k) is not str or type(v) is not str:
            return _METADATA_JSON.encode(metadata)
    known = _metadata_memo.get(items)
    if known is None:
        if len(_metadata_memo) >= _MEMO_LIMIT:
            _metadata_memo.clear()
        known = _metadata_memo[items] = _METADATA_JSON.encode(metadata)
    return known


def _canonical(sample: Sample) -> bytes:
    # Built by hand (length-prefixed fields) rather than with model_dump or one big JSON
    # document: this runs for every sample of every run and must stay cheap.
    images, choices, history = sample.images, sample.choices or (), sample.history
    fields = [
        sample.id,
        *[im.content_hash() for im in images],
        sample.question,
        *choices,
        repr(sample.answer),
        sample.formulation,
        sample.context or "",
        *[f"{t.role}:{t.content}" for t in history],
        metadata_json(sample.metadata) if sample.metadata else "",
    ]
    parts = [f"{len(images)},{len(choices)},{len(history)}"]
    parts += [f"|{len(f)}:{f}" for f in fields]
    return "".join(parts).encode()


def sample_fingerprint(sample: Sample) -> str:
    """Hash of everything in a sample that a model or the scorer sees."""
    return hashlib.sha256(_canonical(sample)).hexdigest()


def data_fingerprint(samples: Iterable[Sample]) -> str:
    """Order-sensitive hash of a sample list: same data, same fingerprint."""
    h = hashlib.sha256()
    for s in samples:
        blob = _canonical(s)
        h.update(f"{len(blob)}:".encode())
        h.update(blob)
    return h.hexdigest()


def require_unique_ids(samples: Sequence[Sample]) -> None:
    """Raise DataError when two samples share an id (results are keyed by it)."""
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise DataError(f"duplicate sample id {s.id!r}")
        seen.add(s.id)
