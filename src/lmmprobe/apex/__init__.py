"""APEx: a research question in, VQA experiments programmed from image tools, a report out.

Origin: APEx (Conti et al., "Automatic benchmarking of large multimodal models via iterative
experiment programming"). Start with `run_campaign` (the ``lmmprobe apex`` command calls it).
"""

from lmmprobe.apex.campaign_report import render_markdown, write_report
from lmmprobe.apex.evaluation import fallback_conclusions
from lmmprobe.apex.experiment_data import ExperimentDataset, ImageCache, build_dataset
from lmmprobe.apex.experiments import (
    Answer,
    Conclusions,
    DatasetInfo,
    Discussion,
    Experiment,
    ExperimentRecord,
    Finding,
    Initialization,
    Interval,
    ModelResult,
    Report,
    Results,
    Settings,
    Sufficiency,
)
from lmmprobe.apex.loop import Campaign, replay_settings, run_campaign
from lmmprobe.apex.orchestrators import (
    ORCHESTRATORS,
    Attempt,
    Orchestrator,
    OrchestratorError,
    PlanningEnv,
    QueryError,
    Reply,
    load_orchestrator,
)

__all__ = [
    "ORCHESTRATORS",
    "Answer",
    "Attempt",
    "Campaign",
    "Conclusions",
    "DatasetInfo",
    "Discussion",
    "Experiment",
    "ExperimentDataset",
    "ExperimentRecord",
    "Finding",
    "ImageCache",
    "Initialization",
    "Interval",
    "ModelResult",
    "Orchestrator",
    "OrchestratorError",
    "PlanningEnv",
    "QueryError",
    "Reply",
    "Report",
    "Results",
    "Settings",
    "Sufficiency",
    "build_dataset",
    "fallback_conclusions",
    "load_orchestrator",
    "render_markdown",
    "replay_settings",
    "run_campaign",
    "write_report",
]
