"""Typed rows of a report's tables (`lmmprobe.report.ReportTables`), shared by every format.

Percentages are on the 0-100 scale, metric values are fractions (as ``results.json`` holds
them), t-test statistics may be NaN (no variance) or infinite (equal non-zero differences), as
scipy gives; the JSON format writes both as null.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from lmmprobe.metrics import MetricValue

__all__ = [
    "ApexRow",
    "BlindGapRow",
    "BreakdownRow",
    "CardRow",
    "GroupTestRow",
    "LeaderboardRow",
    "RankAgreementRow",
    "RunRow",
    "SensitivityRow",
    "SubtaskCell",
    "TTestRow",
]


class RunRow(BaseModel):
    """One run of the report."""

    run_id: str
    status: str
    data: str = Field(description="The run's data spec.")
    models: list[str] = Field(description="Entry labels of its models.")
    blind: bool = Field(description="Asked without images (Dysca's blind setting).")
    created_at: float | None = Field(default=None, description="Unix time the run started.")
    lmmprobe: str | None = Field(default=None, description="lmmprobe version of the run.")
    git_commit: str | None = None
    samples: int | None = Field(default=None, description="Samples of its data.")
    setting: list[str] = Field(
        default_factory=list,
        description="Other settings the run changed (likelihood, repeats 3...; blind apart).",
    )
    judged_by: str | None = Field(
        default=None,
        description="The run's judges and judge protocols with their versions (``--judge``).",
    )
    judge_cost: float | None = Field(
        default=None,
        description="Dollars its priced judges cost over its models' answers (apart from the "
        "models' own ``cost``); None where no judge is priced.",
    )


class LeaderboardRow(BaseModel):
    """One (run, model) entry with its run-level metrics."""

    label: str = Field(description="Unique display name of the entry.")
    model: str = Field(description="The model spec.")
    run_id: str
    blind: bool
    n: int = Field(description="Rows: every (sample, repeat) row, errors included.")
    judged: int = Field(
        default=0, description="Rows with a right/wrong verdict: accuracy's n (no captions)."
    )
    metrics: dict[str, MetricValue] = Field(description="Metric name → value, 95% CI, n.")


class BreakdownRow(BaseModel):
    """One group of one ``--by`` key for one entry, as its run's ``results.json`` stores it.

    The figures are the stored ones (``breakdown`` and ``breakdown_counts``), those results.md
    prints under "MODEL by KEY": a list-valued key puts a row in the group of each item.
    """

    label: str = Field(description="Entry label.")
    run_id: str
    key: str = Field(description="The metadata key (``--by KEY``).")
    group: str = Field(
        description="The group as the breakdown names it (``(missing)``: rows lacking the key)."
    )
    rows: int = Field(description="Every (sample, repeat) row of the group, errors included.")
    judged: int = Field(description="Rows with a right/wrong verdict: accuracy's n.")
    metrics: dict[str, MetricValue] = Field(
        description="Headline metric name → value, 95% CI, n (fractions, as results.json)."
    )


class SubtaskCell(BaseModel):
    """Accuracy of one entry on one subtask."""

    value: float = Field(description="Accuracy in percent.")
    n: int = Field(description="Judged rows (with a right/wrong verdict): accuracy's n.")


class SensitivityRow(BaseModel):
    """Dysca's sensitivities and ReForm-Eval's instability of one entry (None: not computed)."""

    label: str
    S_tf: float | None = Field(default=None, description="True/false accuracy, percent.")
    S_mc: float | None = Field(default=None, description="Multiple-choice accuracy, percent.")
    TFSQ: float | None = None
    MCSQ: float | None = None
    SQ: float | None = None
    SC: float | None = Field(default=None, description="Covariate-shift sensitivity.")
    instability: float | None = Field(default=None, description="Mean entropy in nats.")
    scenario_deltas: dict[str, float] = Field(
        default_factory=dict, description="Scenario → accuracy points against clean."
    )


class BlindGapRow(BaseModel):
    """Accuracy with images minus without, for one model on one data spec."""

    model: str
    data: str
    normal: str = Field(description="Label of the entry with images.")
    blind: str = Field(description="Label of the blind entry.")
    normal_accuracy: float | None = Field(description="Percent.")
    blind_accuracy: float | None = Field(description="Percent.")
    gap: float = Field(description="Percentage points.")
    by_subtask: dict[str, float] = Field(default_factory=dict, description="Subtask → points.")


class TTestRow(BaseModel):
    """HEMM's paired t-test between two categories (or groups) A and B."""

    dimension: str
    a: str
    b: str
    n: int = Field(description="Pairs.")
    units: list[str] = Field(default_factory=list, description="What was paired.")
    mean_a: float | None = None
    mean_b: float | None = None
    mean_diff: float | None = None
    statistic: float | None = None
    p_value: float | None = None
    significant: bool = False
    ci_low: float | None = None
    ci_high: float | None = None


class GroupTestRow(TTestRow):
    """A t-test between two groups of models of a modeling dimension, pairing over tasks."""

    models_a: list[str]
    models_b: list[str]
    note: str | None = Field(default=None, description="Why the pair could not be tested.")


class CardRow(BaseModel):
    """One model's card as the report shows it."""

    model: str
    entries: list[str] = Field(description="Entry labels of the model.")
    groups: dict[str, str | None] = Field(
        description="`lmmprobe.holistic.MODEL_DIMENSIONS` field → the model's group."
    )
    parameter_count: int | None = None
    pretraining_data_count: int | None = None
    proprietary: bool | None = None
    notes: str | None = None


class RankAgreementRow(BaseModel):
    """Spearman and Kendall between the model rankings of two runs on different data."""

    run_a: str
    data_a: str
    run_b: str
    data_b: str
    metric: str
    models: list[str]
    n: int
    spearman_rho: float
    spearman_p: float
    kendall_tau: float
    kendall_p: float


class ApexRow(BaseModel):
    """An APEx campaign folder among the report's arguments."""

    path: str
    query: str | None = None
    status: str | None = None
    experiments: int = 0
