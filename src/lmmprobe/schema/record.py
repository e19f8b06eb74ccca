"""What a run's results say that its stored rows cannot tell: `RunRecord`.

Every figure of a run's results is computed from its rows in the store (`RowSource`); the rest
of ``results.json`` (the run's id, status, spec and manifest, what its data source gave, each
model's request counts and how its answers were judged) is what the step that ran or judged
it knows. That step hands it over as this plain record, so the results are built from the
record and the stored rows alone: ``report`` imports neither the runner's objects nor the
judging step's. It sits in `schema` because the steps that fill it (``run``, ``judge``,
``predictions``) and ``report``, which reads it, all build on `schema`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmmprobe.schema.spec import RunSpec

__all__ = ["ModelRecord", "RunRecord"]


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """One model of a run, as its rows cannot tell it.

    Attributes:
        spec: The model spec (the run's name for it; results are keyed by it).
        stats: Its request counts and usage, as ``results.json`` records them (``requests``,
            ``cached``, ``called``, ``refused``, ``not_sent`` where some were, ``errors``,
            tokens, ``mean_latency_s``, ``redacted``).
        judge: How its answers were judged, as ``results.json`` records it (judges,
            protocols, what decided each answer, each judge's calls, agreement); None when
            the run was not judged or this model's answers were not.

    """

    spec: str
    stats: Mapping[str, Any]
    judge: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run, as its rows cannot tell it: the caller's part of its results.

    Attributes:
        run_id: The run's id.
        spec: Its spec.
        status: Its status (``complete``, ``stopped_budget``, ...).
        store: The store the run is in.
        manifest: Its manifest (models' identities, data fingerprint, versions).
        source: The data spec it read.
        samples: Valid samples its data gave.
        invalid: Rows of its data skipped as invalid.
        problems: The first invalid rows, each ``file:line: field: reason``.
        models: Its models, in the run's order.

    """

    run_id: str
    spec: RunSpec
    status: str
    store: Path
    manifest: Mapping[str, Any]
    source: str
    samples: int
    invalid: int = 0
    problems: tuple[str, ...] = ()
    models: tuple[ModelRecord, ...] = field(default=())
