"""The orchestrator protocol and registry: the five decisions of APEx's loop, answered as data.

Origin: APEx (Conti et al.): report = init(query) → experiment = design(report) → findings =
discuss(experiment, results) → sufficient = judge(report) → conclusions. An orchestrator makes
those decisions; the loop (`lmmprobe.apex.loop`) validates what it returns, feeds errors back for
healing, runs the experiments and keeps the transcript.

Every step gets the same inputs: the report so far (``discuss`` is about its latest experiment,
`latest_record`), the `PlanningEnv`, and ``retries``: the earlier outputs of the same step that
were rejected, with the error fed back, so an orchestrator can heal them (an empty list asks
for a fresh answer). Each method returns a `Reply`: the output (JSON text, a dict or a pydantic
model — the loop parses and validates it, whatever produced it) and the messages exchanged to
get it, which the loop stores in the report's transcript.

Orchestrators are found by name in `ORCHESTRATORS`, as models and data sources are: each
built-in one (``rules``, ``openai``, ``replay`` in `lmmprobe.apex.orchestrators`) registers its
factory with a decorator, and another package adds one through the ``lmmprobe.orchestrators``
entry-point group. This module sits below the orchestrators and the rules planner's parts
(`lmmprobe.apex.query`, `lmmprobe.apex.plans`), which all speak its types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from lmmprobe.apex.experiments import ExperimentRecord, Report
from lmmprobe.registry import Registry
from lmmprobe.tools.retrieval import LabelledCollection

Role = Literal["system", "user", "assistant", "planner"]


class QueryError(ValueError):
    """The orchestrator cannot plan for this query (the message lists supported forms)."""


class OrchestratorError(RuntimeError):
    """The orchestrator failed outside its output (an API error, a missing replay file)."""


class PlanExhausted(Exception):
    """The orchestrator has no further experiment to design (the loop then concludes)."""


@dataclass(frozen=True)
class Attempt:
    """A rejected output of one step and the error that was fed back."""

    output: str
    error: str


@dataclass
class Reply:
    """What an orchestrator answered and the messages exchanged to get it."""

    output: object
    messages: list[tuple[Role, str]] = field(default_factory=list)


@dataclass
class PlanningEnv:
    """What an orchestrator may plan with, besides the report.

    Attributes:
        models: Model specs under evaluation.
        methods: Inference method per model (likelihood or generate).
        drawable: Classes the procedural renderer draws, with their groups.
        collection: The retrieval collection, when one is configured.
        select_tool: The select tool experiments should use by default.
        catalog: The tool catalog (name, kind, summary, doc, JSON schema).

    """

    models: list[str]
    methods: Mapping[str, str] = field(default_factory=dict)
    drawable: Mapping[str, str] = field(default_factory=dict)
    collection: LabelledCollection | None = None
    select_tool: str = "TextToImageGeneration"
    catalog: list[dict[str, Any]] = field(default_factory=list)

    def groups(self) -> dict[str, list[str]]:
        """Class groups: the collection's taxonomy groups when retrieving, else the renderer's."""
        if self.collection is not None:
            # Retrieval draws only from the collection: its groups (maybe none) are what exists.
            return {g: list(cs) for g, cs in sorted(self.collection.groups().items())}
        out: dict[str, list[str]] = {}
        for c, g in self.drawable.items():
            out.setdefault(g, []).append(c)
        return {g: sorted(cs) for g, cs in sorted(out.items())}

    def classes(self) -> list[str]:
        """Every class experiments can select: the collection's, else the drawable ones."""
        if self.collection is not None:
            return list(self.collection.classes)
        return sorted(self.drawable)


def latest_record(report: Report) -> ExperimentRecord:
    """The experiment the loop asks an orchestrator to discuss: the one it ran last.

    Raises:
        OrchestratorError: The report has no experiment yet.

    """
    if not report.experiments:
        raise OrchestratorError("discuss was asked before any experiment ran")
    return report.experiments[-1]


class Orchestrator(Protocol):
    """Makes APEx's decisions; see the module docstring."""

    name: str

    def init(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Open the report: an `Initialization` (open questions)."""
        ...

    def design(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The next `Experiment`."""
        ...

    def discuss(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """A `Discussion` of the latest experiment (`latest_record`): findings, open questions."""
        ...

    def judge(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """A `Sufficiency` decision: can the query be answered now."""
        ...

    def conclude(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The `Conclusions`."""
        ...


class OrchestratorFactory(Protocol):
    """Builds an orchestrator from the part of its spec after ``NAME:``."""

    def __call__(self, target: str | None) -> Orchestrator:
        """Build it; `target` is None when the spec has no ``:`` (``rules``).

        Raises:
            ValueError: The target is missing, not allowed, or malformed.

        """
        ...


ORCHESTRATORS: Registry[OrchestratorFactory] = Registry(
    "orchestrator",
    entry_point_group="lmmprobe.orchestrators",
    # A built-in orchestrator is one module of apex/orchestrators/, registering itself.
    discover=("lmmprobe.apex.orchestrators",),
)
"""Orchestrators by name (``lmmprobe list orchestrators`` shows them): the built-ins register
themselves on the first lookup or listing; plugins come from the ``lmmprobe.orchestrators``
entry-point group (``name = package.module:factory``)."""

_FORMS = "rules, openai:MODEL@URL or replay:REPORT.json"


def load_orchestrator(spec: str) -> Orchestrator:
    """Build an orchestrator from its spec, through `ORCHESTRATORS`.

    Forms: ``rules`` (offline planner), ``openai:MODEL[@BASE_URL][,option=value...]`` (an
    OpenAI-compatible chat model), ``replay:REPORT.json`` (a saved campaign's experiments), or
    ``NAME[:TARGET]`` for a plugin's.

    Raises:
        ValueError: Unknown name, or a target the orchestrator does not accept.
        OrchestratorError: The replay file cannot be read.

    """
    kind, sep, target = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in ORCHESTRATORS:
        # ValueError as before the registry (callers report bad specs as bad values); the
        # registry's names include plugins.
        raise ValueError(
            f"unknown orchestrator {spec!r}; use {_FORMS} "
            f"(registered: {', '.join(ORCHESTRATORS.names())})"
        )
    return ORCHESTRATORS.get(kind)(target if sep else None)
