"""APEx orchestrators: ``rules`` (offline planner), ``openai:MODEL@URL`` (an LLM), ``replay:FILE``.

Each module registers its orchestrator in `lmmprobe.apex.protocol.ORCHESTRATORS`; the protocol
types are re-exported here.
"""

from lmmprobe.apex.protocol import (
    ORCHESTRATORS,
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
    "ORCHESTRATORS",
    "Attempt",
    "Orchestrator",
    "OrchestratorError",
    "PlanExhausted",
    "PlanningEnv",
    "QueryError",
    "Reply",
    "load_orchestrator",
]
