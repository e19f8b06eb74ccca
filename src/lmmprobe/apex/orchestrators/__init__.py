"""APEx orchestrators: ``rules`` (offline planner), ``openai:MODEL@URL`` (an LLM), ``replay:FILE``."""

from lmmprobe.apex.orchestrators.base import (
    Attempt,
    Orchestrator,
    OrchestratorError,
    PlanExhausted,
    PlanningEnv,
    QueryError,
    Reply,
    load_orchestrator,
)

__all__ = [
    "Attempt",
    "Orchestrator",
    "OrchestratorError",
    "PlanExhausted",
    "PlanningEnv",
    "QueryError",
    "Reply",
    "load_orchestrator",
]
