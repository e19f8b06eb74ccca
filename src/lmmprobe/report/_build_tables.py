"""The numbers a report shows, computed once for every format (HTML, Markdown, CSV, JSON).

What is computed, and after whom:

- the leaderboard: each model's run-level metrics with 95% cluster-bootstrap intervals, as the
  run's ``results.json`` holds them (recomputed from the stored rows for unfinished runs);
- the ``--by KEY`` breakdowns: each model's headline metrics per group of each key, as the
  run's results hold them (``breakdown``, ``breakdown_counts``: what results.md prints);
- per-subtask accuracy (the models × subtasks heatmap) and per-scenario, per-subtask accuracy
  (Dysca, Zhang et al. 2024, figure 7: one radar per scenario);
- Dysca's sensitivities: question type (SQ, from TFSQ and MCSQ), covariate shift (SC), the
  scenario deltas against clean; ReForm-Eval's instability (Li et al. 2023) when samples were
  asked more than once;
- blind-setting gaps: a model's accuracy with images minus without (Dysca's blind setting);
- dimension means along HEMM's task dimensions (Liang et al. 2024): per-dataset min-max
  normalized scores averaged per category of each task dimension, through `lmmprobe.holistic`;
  paired t-tests, paired as HEMM pairs them, between the categories of a task dimension (pairing
  over models) and, with model cards, between the groups of a modeling dimension (pairing over
  datasets). ``definitions`` picks lmmprobe's definitions (the default) or HEMM's released code
  for the normalization, the category statistics and the t-tests' inputs
  (`lmmprobe.holistic.aggregate`; `definitions_sentence` says which in words);
- agreement between benchmarks (Dysca's validation, Zhang et al. 2024): Spearman's rho and
  Kendall's tau between the model rankings of two runs on different data.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field
from pydantic_core import PydanticSerializationError

from lmmprobe.data.jsonl import read_json_file
from lmmprobe.holistic import DimensionRow
from lmmprobe.metrics import MetricValue, blind_gap, compute_metrics, headline_metrics, instability
from lmmprobe.metrics.builtin.hemm_bart import MODEL_ENV as BART_MODEL_ENV
from lmmprobe.metrics.builtin.hemm_bart import NAME as HEMM_BART
from lmmprobe.metrics.builtin.hemm_bart import hemm_task_score
from lmmprobe.metrics.outcome import OutcomeCounts, count_outcomes
from lmmprobe.metrics.synth import accuracy_percent
from lmmprobe.report._collect import Entry, ReportData
from lmmprobe.report.model import Manifest, RowCounts, Sensitivity
from lmmprobe.report.results import no_text_to_score, row_counts, sensitivity_metrics
from lmmprobe.report.rows import (
    ApexRow,
    BlindGapRow,
    BreakdownRow,
    CardRow,
    GroupTestRow,
    LeaderboardRow,
    RankAgreementRow,
    RunRow,
    SensitivityRow,
    SubtaskCell,
    TTestRow,
)
from lmmprobe.report.settings import origin_setting, run_setting
from lmmprobe.schema import Score

if TYPE_CHECKING:
    from lmmprobe.holistic import Catalog, TTestResult

log = logging.getLogger(__name__)

SUBTASK_KEYS: tuple[str, ...] = ("subtask", "task")
"""Metadata keys naming a sample's subtask, most specific first."""

ALL = "all"
"""Group label of rows whose metadata names no subtask (or no scenario)."""

DIMENSION_KEY = "dimension"
"""Metadata key naming the dimension a subtask belongs to (ReForm-Eval's datasets carry their
capability dimension here): the subtask table then groups its columns by dimension and adds
each dimension's mean over its subtasks, as ReForm-Eval's paper tables do."""

COUNTED_BY_JUDGED: tuple[str, ...] = (
    "accuracy",
    "balanced_accuracy",
    "unparsed_rate",
    "truncated_rate",
)
"""Metrics whose n is the rows scored right or wrong (accuracy's n); the others count every
row. A breakdown table gives its main metric's own count beside it, as the terminal does."""

RANK_METRICS: tuple[str, ...] = ("accuracy", "circular_accuracy", "freeform_score")
"""Metrics two runs' rankings are compared on: the first that both give for 3+ common models."""

ALPHA = 0.05
"""Significance level of the report's t-tests."""

TEST_BOOTSTRAP = 1000
"""Bootstrap resamples of a t-test's interval of the mean difference."""

ReportDefinitions = Literal["lmmprobe", "hemm"]
"""Definitions of the dimension analysis: lmmprobe's own (default) or HEMM's released code."""

REPORT_DEFINITIONS: tuple[str, ...] = ("lmmprobe", "hemm")
"""The values ``lmmprobe report --definitions`` accepts."""

DEFINITIONS_PAGE = "docs/definitions.md"
"""Where lmmprobe documents every definition next to its paper's (in the repository)."""

UNDEFINED = "\u2013"
"""What a report shows for a value HEMM's definitions leave undefined (NaN): an en dash."""


def definitions_sentence(definitions: str) -> str:
    """One line saying, in a researcher's words, which definitions the dimension analysis used.

    Args:
        definitions: ``"lmmprobe"`` or ``"hemm"``.

    Returns:
        The sentence, naming the other choice and `DEFINITIONS_PAGE`.

    Raises:
        ValueError: Unknown `definitions`.

    """
    if definitions == "lmmprobe":
        return (
            "Normalization, dimension means and t-tests: lmmprobe's definitions (a task where "
            "every model scores the maximum counts 1.0; a missing score is left out; the 'all' row "
            "pools every model-task score, SD with n\u22121). Pass --definitions hemm for "
            "HEMM's released code (missing scores count 0, a task every model aces is "
            "undefined, the 'all' row is the mean of per-model means, SD with n). "
            f"See {DEFINITIONS_PAGE}."
        )
    if definitions == "hemm":
        return (
            "Normalization, dimension means and t-tests: HEMM's released code "
            "(hemm/evaluation/utils.py and plot.py). A missing score counts 0; a task where every "
            "model scores the maximum "
            f"is undefined (0/0, shown as {UNDEFINED}); the 'all' row is the mean of the "
            "per-model means, SD with n. The default, --definitions lmmprobe, counts such a "
            "task 1.0, leaves missing scores out and pools every model-task score (SD with "
            f"n\u22121). See {DEFINITIONS_PAGE}."
        )
    raise ValueError(
        f"definitions must be one of {', '.join(REPORT_DEFINITIONS)}, not {definitions!r}"
    )


def subtask_of(score: Score) -> str:
    """The sample's subtask (``metadata["subtask"]``, else ``["task"]``, else ``all``)."""
    for key in SUBTASK_KEYS:
        value = score.metadata.get(key)
        if value is not None:
            return str(value)
    return ALL


def scenario_of(score: Score) -> str:
    """The sample's Dysca scenario (``metadata["scenario"]``), else ``all``."""
    value = score.metadata.get("scenario")
    return ALL if value is None else str(value)


class ReportTables(BaseModel):
    """Every table of a report, typed; the JSON format is its dump.

    Attributes:
        runs: One row per run.
        leaderboard: One row per entry, best accuracy first.
        breakdowns: One row per entry, ``--by`` key and group, from the runs' stored results
            (entries in run order, keys and groups in the results' order).
        breakdowns_note: Runs asked for breakdowns (``--by``) that have no results to read
            them from yet, when there are such runs.
        metric_names: Headline metrics (`lmmprobe.metrics.headline_metrics`) that at least one
            entry has, in column order.
        subtasks: Subtask labels, in first-seen order.
        subtask_accuracy: Entry label → subtask → accuracy in percent and rows.
        subtask_dimensions: Subtask → the dimension its rows name (``metadata["dimension"]``,
            ReForm-Eval's capability dimensions), for the subtasks that name one.
        dimension_accuracy: Entry label → dimension → mean of its subtasks' accuracies in
            percent (each subtask weighs the same, as ReForm-Eval averages its datasets).
        subtask_instability: Entry label → subtask → ReForm-Eval's instability (mean entropy
            of the predicted options over each sample's repeats, nats), for entries asked
            more than once and the single-choice subtasks that name a dimension.
        dimension_instability: Entry label → dimension → mean of its subtasks' instability.
        scenarios: Scenario labels (``clean`` first), or ``["all"]`` without scenarios.
        scenario_accuracy: Scenario → entry label → subtask → accuracy in percent.
        sensitivity: One row per entry with any of Dysca's sensitivities or instability.
        blind_gaps: One row per (normal, blind) pair of the same model on the same data.
        definitions: Whose definitions the dimension means, normalization and t-tests
            follow: ``"lmmprobe"`` (default) or ``"hemm"`` (HEMM's released code).
        dimensions: Means per category of HEMM's task dimensions
            (`lmmprobe.holistic.DimensionRow`); with HEMM's definitions a mean over a task
            every model aces is NaN (None in JSON).
        dimensions_note: Why dimension means are missing, when they are.
        dimension_notes: Plain sentences saying where a quirk of HEMM's definitions decided
            an outcome (tasks left undefined, missing scores counted 0).
        normalized: Entry label → catalog task → min-max normalized score (what the
            dimension means and t-tests are computed from).
        category_tests: HEMM's paired t-tests between two categories of a task dimension,
            pairing over models (model specs, runs with images only; a model in several runs
            takes its mean per task); significant means p < `ALPHA`.
        cards_source: The model card file, when cards were given.
        cards: One row per model spec with a card.
        group_tests: Paired t-tests between two groups of models (specs) of a modeling
            dimension, pairing over tasks (a ``note`` says why a pair could not be tested).
        groups_note: Why there are no group tests, when cards were given but there are none.
        rank_agreement: One row per pair of runs on different data sharing 3+ models.
        agreement_note: Pairs of runs on different data that could not be compared.
        apex: One row per APEx campaign folder.
        warnings: Things the reader should know.

    """

    runs: list[RunRow] = Field(default_factory=list)
    leaderboard: list[LeaderboardRow] = Field(default_factory=list)
    breakdowns: list[BreakdownRow] = Field(default_factory=list)
    breakdowns_note: str | None = None
    metric_names: list[str] = Field(default_factory=list)
    subtasks: list[str] = Field(default_factory=list)
    subtask_accuracy: dict[str, dict[str, SubtaskCell]] = Field(default_factory=dict)
    subtask_dimensions: dict[str, str] = Field(default_factory=dict)
    dimension_accuracy: dict[str, dict[str, float]] = Field(default_factory=dict)
    subtask_instability: dict[str, dict[str, float]] = Field(default_factory=dict)
    dimension_instability: dict[str, dict[str, float]] = Field(default_factory=dict)
    scenarios: list[str] = Field(default_factory=list)
    scenario_accuracy: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    sensitivity: list[SensitivityRow] = Field(default_factory=list)
    blind_gaps: list[BlindGapRow] = Field(default_factory=list)
    definitions: ReportDefinitions = "lmmprobe"
    dimensions: list[DimensionRow] = Field(default_factory=list)
    dimensions_note: str | None = None
    dimension_notes: list[str] = Field(default_factory=list)
    normalized: dict[str, dict[str, float]] = Field(default_factory=dict)
    category_tests: list[TTestRow] = Field(default_factory=list)
    cards_source: str | None = None
    cards: list[CardRow] = Field(default_factory=list)
    group_tests: list[GroupTestRow] = Field(default_factory=list)
    groups_note: str | None = None
    rank_agreement: list[RankAgreementRow] = Field(default_factory=list)
    agreement_note: str | None = None
    apex: list[ApexRow] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """All tables as one JSON-ready dictionary (NaN and infinities as None)."""
        # Through JSON: pydantic writes NaN and infinities (undefined t statistics) as null.
        try:
            out: dict[str, Any] = json.loads(self.model_dump_json())
        except PydanticSerializationError as exc:
            # A file name that is not UTF-8 (the data's) is no JSON pydantic writes: the
            # same dictionary without the round trip, its writer escapes the name.
            if "surrogates not allowed" not in str(exc):
                raise
            out = _finite(self.model_dump(mode="json"))
        return out


def _finite(value: Any) -> Any:
    """`value` with NaN and infinities as None, as pydantic's JSON writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _run_rows(data: ReportData) -> list[RunRow]:
    rows = []
    for run in data.runs:
        man = run.manifest
        rows.append(
            RunRow(
                run_id=run.run_id,
                status=run.status,
                data=run.data,
                models=[e.label for e in data.entries if e.run is run],
                blind=run.blind,
                created_at=run.created_at,
                lmmprobe=man.lmmprobe if man else None,
                git_commit=man.git_commit if man else None,
                samples=man.data.samples if man else None,
                setting=origin_setting(man) + [w for w in run_setting(run.spec) if w != "blind"],
                judged_by=_judged_by(man),
                judge_cost=_judge_cost([e for e in data.entries if e.run is run]),
            )
        )
    return rows


def _judge_cost(entries: Sequence[Entry]) -> float | None:
    """Dollars the run's priced judges cost over its models' answers; None: none priced."""
    costs = [
        c.cost
        for e in entries
        if e.results is not None and e.results.judge is not None
        for c in e.results.judge.calls.values()
        if c.cost is not None
    ]
    return sum(costs) if costs else None


def _judged_by(man: Manifest | None) -> str | None:
    """The judges and protocols with versions, from a manifest's ``judge`` entry, if any."""
    judge = (man.model_extra or {}).get("judge") if man is not None else None
    if not isinstance(judge, dict):
        return None
    judges = ", ".join(str(j) for j in judge.get("judges") or {})
    protocols = judge.get("protocols") or {}
    named = ", ".join(
        f"{name} version {p.get('version')}" if isinstance(p, dict) else str(name)
        for name, p in protocols.items()
    )
    return f"{judges}; {named}" if named else judges


def _has_repeats(scores: Sequence[Score]) -> bool:
    return len(scores) > len({s.sample_id for s in scores})


def _entry_metrics(entry: Entry) -> dict[str, MetricValue]:
    block = entry.results
    if block is not None and block.metrics:
        return dict(block.metrics)
    if not entry.scores:
        return {}
    # An unfinished run has no results.json yet: compute what `lmmprobe run` would have.
    return compute_metrics(entry.scores, entry.run.spec)


def value_of(metrics: dict[str, MetricValue], name: str) -> float | None:
    """The point value of metric `name`, None when absent or undefined."""
    m = metrics.get(name)
    return None if m is None else m.value


def _leaderboard(data: ReportData) -> tuple[list[LeaderboardRow], list[str]]:
    rows: list[LeaderboardRow] = []
    for e in data.entries:
        metrics = _entry_metrics(e)
        counts: OutcomeCounts | RowCounts | None = (
            count_outcomes(e.scores) if e.scores else (e.results.counts if e.results else None)
        )
        n_rows, judged = (
            (counts.rows, counts.judged) if counts is not None else row_counts(metrics, None)
        )
        # A baseline's free-form 0 is no score it earned: shown as "-", never ranked.
        metrics = {k: v for k, v in metrics.items() if not no_text_to_score(k, counts)}
        rows.append(
            LeaderboardRow(
                label=e.label,
                model=e.model,
                run_id=e.run.run_id,
                blind=e.run.blind,
                n=n_rows,
                judged=judged,
                metrics=metrics,
            )
        )

    def accuracy(row: LeaderboardRow) -> float:
        value = value_of(row.metrics, "accuracy")
        return -1.0 if value is None else float(value)

    rows.sort(key=accuracy, reverse=True)
    names = [
        m.name
        for m in headline_metrics()
        if any(value_of(r.metrics, m.name) is not None for r in rows)
    ]
    return rows, names


def _breakdowns(data: ReportData, tables: ReportTables) -> None:
    """Each entry's ``--by`` groups as its run's results hold them (results.md's numbers).

    Read, never recomputed: the headline metrics of each group (a free-form score with no
    text to score left out, as results.md shows it ``-``) and its row counts.
    """
    headline = [m.name for m in headline_metrics()]
    pending: dict[str, list[str]] = {}
    for e in data.entries:
        block = e.results
        if block is None:
            if e.run.spec.by:
                pending[f"{e.run.run_id} ({e.run.status})"] = list(e.run.spec.by)
            continue
        for key, groups in block.breakdown.items():
            counted = block.breakdown_counts.get(key, {})
            for group, metrics in groups.items():
                counts = counted.get(group)
                n_rows, judged = row_counts(metrics, counts)
                tables.breakdowns.append(
                    BreakdownRow(
                        label=e.label,
                        run_id=e.run.run_id,
                        key=key,
                        group=group,
                        rows=n_rows,
                        judged=judged,
                        metrics={
                            name: metrics[name]
                            for name in headline
                            if name in metrics and not no_text_to_score(name, counts)
                        },
                    )
                )
    if pending:
        which = "; ".join(f"{run}, --by {', '.join(keys)}" for run, keys in pending.items())
        tables.breakdowns_note = (
            f"no breakdowns for {which}: they are read from a run's stored results, which it "
            "has not got yet (a run writes them when it ends; an interrupted one when re-run "
            "to its end)"
        )


@dataclass
class BreakdownTable:
    """One ``--by`` key on one data spec, arranged for reading: groups × entries.

    Attributes:
        data: The data spec of the entries' runs.
        key: The metadata key.
        metric: The metric shown: accuracy when a group has it, else the first headline
            metric a group has (a captioning run's free-form score), as the terminal picks.
        judged: Whether the count beside it is accuracy's n (rows scored right or wrong,
            `COUNTED_BY_JUDGED`) rather than every row.
        labels: Entry labels with this key, in leaderboard order (best first).
        groups: Every group, in first-seen order (the results' own order).
        cells: (group, entry label) → the stored row.

    """

    data: str
    key: str
    metric: str
    judged: bool
    labels: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], BreakdownRow] = field(default_factory=dict)

    def value(self, group: str, label: str) -> MetricValue | None:
        """The shown metric of `label` on `group`, None when it has no such group or metric."""
        row = self.cells.get((group, label))
        return None if row is None else row.metrics.get(self.metric)

    def count(self, group: str, label: str) -> int | None:
        """The count shown beside the value (accuracy's n or the rows), None: no such group."""
        row = self.cells.get((group, label))
        if row is None:
            return None
        return row.judged if self.judged else row.rows

    def shared_count(self, group: str) -> int | None:
        """The count every entry with `group` has there, None when they differ.

        The models of one run (asked the same rows) share it: a table then gives it once.
        """
        found = {n for label in self.labels if (n := self.count(group, label)) is not None}
        return next(iter(found)) if len(found) == 1 else None

    def size(self, group: str) -> int:
        """The most rows any entry has in `group` (what ranks groups when not all are shown)."""
        return max((r.rows for (g, _), r in self.cells.items() if g == group), default=0)


def breakdown_tables(tables: ReportTables) -> list[BreakdownTable]:
    """The report's breakdowns as one table per (data spec, ``--by`` key), in first-seen order.

    Runs on different data are never put in one table (their groups are other groups), as
    they are never ranked together on a leaderboard.
    """
    data_of = {r.run_id: r.data for r in tables.runs}
    order = {r.label: i for i, r in enumerate(tables.leaderboard)}
    found: dict[tuple[str, str], list[BreakdownRow]] = {}
    for row in tables.breakdowns:
        found.setdefault((data_of.get(row.run_id, ""), row.key), []).append(row)
    out = []
    for (spec, key), rows in found.items():
        metric = next(
            (
                m.name
                for m in headline_metrics()
                if any(value_of(r.metrics, m.name) is not None for r in rows)
            ),
            None,
        )
        if metric is None:
            continue
        table = BreakdownTable(
            data=spec, key=key, metric=metric, judged=metric in COUNTED_BY_JUDGED
        )
        table.labels = sorted(
            dict.fromkeys(r.label for r in rows), key=lambda lab: order.get(lab, len(order))
        )
        table.groups = list(dict.fromkeys(r.group for r in rows))
        table.cells = {(r.group, r.label): r for r in rows}
        out.append(table)
    return out


def _group(scores: Sequence[Score], key: Callable[[Score], str]) -> dict[str, list[Score]]:
    groups: dict[str, list[Score]] = {}
    for s in scores:
        groups.setdefault(key(s), []).append(s)
    return groups


def _ordered_scenarios(found: set[str]) -> list[str]:
    # Clean first (the baseline the others are compared with), then Dysca's order, then others.
    order = ["clean", "corruption", "print_attack", "adversarial"]
    return [s for s in order if s in found] + sorted(found - set(order))


def _accuracy_tables(data: ReportData, tables: ReportTables) -> None:
    subtasks: dict[str, None] = {}
    scenarios: set[str] = set()
    for e in data.entries:
        if not e.scores:
            continue
        per_sub: dict[str, SubtaskCell] = {}
        for sub, rows in _group(e.scores, subtask_of).items():
            subtasks.setdefault(sub, None)
            acc = accuracy_percent(rows)
            if acc is not None:
                per_sub[sub] = SubtaskCell(value=acc, n=count_outcomes(rows).judged)
        tables.subtask_accuracy[e.label] = per_sub
        for scen, rows in _group(e.scores, scenario_of).items():
            scenarios.add(scen)
            cell = tables.scenario_accuracy.setdefault(scen, {}).setdefault(e.label, {})
            for sub, sub_rows in _group(rows, subtask_of).items():
                acc = accuracy_percent(sub_rows)
                if acc is not None:
                    cell[sub] = acc
    tables.subtasks = list(subtasks)
    _subtask_dimensions(data, tables)
    tables.scenarios = _ordered_scenarios(scenarios)
    tables.scenario_accuracy = {s: tables.scenario_accuracy[s] for s in tables.scenarios}


def _subtask_dimensions(data: ReportData, tables: ReportTables) -> None:
    """Group the subtask columns by the dimension their rows name, and average each dimension."""
    dims: dict[str, str] = {}
    for e in data.entries:
        for s in e.scores:
            dim = s.metadata.get(DIMENSION_KEY)
            if dim is not None:
                dims.setdefault(subtask_of(s), str(dim))
    if not dims:
        return
    order = list(dict.fromkeys(dims.values()))
    # Columns dimension by dimension (first-seen order), subtasks without one last.
    tables.subtasks = sorted(
        tables.subtasks, key=lambda sub: order.index(dims[sub]) if sub in dims else len(order)
    )
    tables.subtask_dimensions = {sub: dims[sub] for sub in tables.subtasks if sub in dims}
    for label, per in tables.subtask_accuracy.items():
        means: dict[str, float] = {}
        for dim in order:
            values = [c.value for sub, c in per.items() if dims.get(sub) == dim]
            if values:
                means[dim] = sum(values) / len(values)
        if means:
            tables.dimension_accuracy[label] = means
    _dimension_instability(data, tables, dims, order)


def _dimension_instability(
    data: ReportData, tables: ReportTables, dims: dict[str, str], order: list[str]
) -> None:
    """ReForm-Eval's instability per dataset and its mean per dimension, entry by entry.

    ReForm-Eval reports instability for its single-choice datasets asked several times
    (``--repeats N``: a run's repeats are its duplicates); one-repeat entries get none.
    """
    for e in data.entries:
        if not e.scores or not _has_repeats(e.scores):
            continue
        per: dict[str, float] = {}
        for sub, rows in _group(e.scores, subtask_of).items():
            choice = [r for r in rows if r.options is not None]
            if sub in dims and choice and _has_repeats(choice):
                value = instability(choice, n_boot=0).value
                if value is not None and not math.isnan(value):
                    per[sub] = value
        if not per:
            continue
        tables.subtask_instability[e.label] = {s: per[s] for s in tables.subtasks if s in per}
        means = {}
        for dim in order:
            values = [v for sub, v in per.items() if dims[sub] == dim]
            if values:
                means[dim] = sum(values) / len(values)
        tables.dimension_instability[e.label] = means


def _sensitivity(data: ReportData) -> list[SensitivityRow]:
    rows = []
    for e in data.entries:
        block = e.results
        sens = block.sensitivity if block is not None else Sensitivity()
        if sens == Sensitivity() and e.scores:
            sens = sensitivity_metrics(e.scores)
        inst = value_of(block.metrics, "instability") if block is not None else None
        if inst is None and e.scores and _has_repeats(e.scores):
            inst = instability(e.scores, n_boot=0).value
        qt = sens.question_type.model_dump() if sens.question_type is not None else {}
        row = SensitivityRow(
            label=e.label,
            **qt,
            SC=sens.covariate_shift_SC,
            instability=inst,
            scenario_deltas=dict(sens.scenario_deltas or {}),
        )
        if row != SensitivityRow(label=e.label):
            rows.append(row)
    return rows


def _blind_gaps(data: ReportData) -> list[BlindGapRow]:
    rows = []
    groups: dict[tuple[str, str], list[Entry]] = {}
    for e in data.entries:
        if e.scores:
            groups.setdefault((e.model, e.run.data), []).append(e)
    for (model, spec), entries in groups.items():
        normal = [e for e in entries if not e.run.blind]
        blind = [e for e in entries if e.run.blind]
        for n in normal:
            for b in blind:
                try:
                    gap = blind_gap(n.scores, b.scores)
                except ValueError as exc:
                    log.warning("blind gap of %s skipped: %s", model, exc)
                    continue
                by_sub = {}
                b_subs = _group(b.scores, subtask_of)
                for sub, rows_n in _group(n.scores, subtask_of).items():
                    if sub in b_subs:
                        with_img, without = accuracy_percent(rows_n), accuracy_percent(b_subs[sub])
                        if with_img is not None and without is not None:
                            by_sub[sub] = with_img - without
                rows.append(
                    BlindGapRow(
                        model=model,
                        data=spec,
                        normal=n.label,
                        blind=b.label,
                        normal_accuracy=accuracy_percent(n.scores),
                        blind_accuracy=accuracy_percent(b.scores),
                        gap=gap,
                        by_subtask=by_sub,
                    )
                )
    return rows


def _hemm_quirk_notes(
    raw: dict[str, dict[str, float]], normalized: dict[str, dict[str, float]]
) -> list[str]:
    """Where HEMM's definitions decided an outcome: tasks left undefined, scores filled with 0."""
    notes = []
    tied = sorted({task for per in normalized.values() for task, v in per.items() if math.isnan(v)})
    if tied:
        notes.append(
            f"Undefined ({UNDEFINED}): every model scores the maximum on "
            f"{', '.join(tied)}, so HEMM's min-max scaling divides 0 by 0 (NaN), and every "
            "mean and t-test that includes it is NaN too, as in HEMM's code "
            "(lmmprobe's definitions count such a task 1.0)."
        )
    filled = sorted(
        (model, task) for model, per in normalized.items() for task in per if task not in raw[model]
    )
    if filled:
        which = ", ".join(f"{m} on {t}" for m, t in filled[:5])
        more = f" and {len(filled) - 5} more" if len(filled) > 5 else ""
        notes.append(
            f"{len(filled)} missing model-task score(s) counted 0 before scaling, as HEMM's "
            f"code does (df.fillna(0)): {which}{more}."
        )
    return notes


def _dimension_rows(data: ReportData, tables: ReportTables) -> None:
    """Dimension means of the entries' per-task accuracies (fractions, normalized)."""
    try:
        from lmmprobe.holistic import dimension_means, load_catalog, normalize_scores

        catalog = load_catalog()
    except ImportError as exc:  # an optional dependency of the catalog is missing
        tables.dimensions_note = f"dimension means are unavailable: {exc}"
        return
    known: dict[tuple[str, ...], str | None] = {}
    unknown: set[str] = set()

    def dataset(score: Score) -> str:
        # The catalog name of a row's task: its subtask when annotated, else its task. A row
        # naming its own dimension (a ReForm-Eval dataset: GQA, OK-VQA...) is not the HEMM
        # dataset of the same name, so HEMM's dimensions leave it out.
        if score.metadata.get(DIMENSION_KEY) is not None:
            return ""
        names = tuple(
            str(score.metadata[k]) for k in SUBTASK_KEYS if score.metadata.get(k) is not None
        )
        if names not in known:
            known[names] = next((n for n in names if catalog.dimensions(n) is not None), None)
            if known[names] is None:
                unknown.add(names[0] if names else ALL)
        return known[names] or ""

    raw: dict[str, dict[str, float]] = {}
    maxima: dict[str, float] = {}
    unscored: set[str] = set()
    for e in data.entries:
        per: dict[str, float] = {}
        for name, rows in _group(e.scores, dataset).items():
            if not name:
                continue
            if any(s.official_metric == HEMM_BART for s in rows):
                # HEMM's datasets are scored by BARTScore, normalized by the identity score,
                # never by exact match (which puts every caption near 0).
                got = hemm_task_score(rows)
                if got is None:
                    unscored.add(name)
                    continue
                per[name], ceiling = got
                maxima[name] = max(maxima.get(name, ceiling), ceiling)
                continue
            acc = accuracy_percent(rows)
            if acc is not None:
                per[name] = acc / 100.0
        if per:
            raw[e.label] = per
    notes = []
    if unscored:
        notes.append(
            "HEMM tasks scored by BARTScore are left out because the BART model is not "
            f"available (set {BART_MODEL_ENV}; see `lmmprobe data show hemm`): "
            + ", ".join(sorted(unscored))
        )
    if unknown:
        notes.append(f"tasks not in the HEMM catalog are left out: {', '.join(sorted(unknown))}")
    if len(raw) == 1:
        # Min-max over one model maps every task to 0 (it is the worst model): say so.
        notes.append("with a single model every normalized score is 0; compare several models")
    if raw:
        defs = tables.definitions
        tables.normalized = normalize_scores(raw, maxima, definitions=defs)
        tables.dimensions = dimension_means(tables.normalized, catalog, definitions=defs)
        if defs == "hemm":
            tables.dimension_notes = _hemm_quirk_notes(raw, tables.normalized)
        try:
            tables.category_tests = _category_tests(data, tables.normalized, catalog, defs)
        except ImportError as exc:  # scipy, an optional dependency, is missing
            notes.append(f"t-tests between categories are unavailable: {exc}")
    else:
        notes.insert(0, "no task of these runs is annotated in the HEMM catalog")
    tables.dimensions_note = "; ".join(notes) or None


def _test_fields(t: TTestResult) -> dict[str, Any]:
    return {
        "a": t.label_a,
        "b": t.label_b,
        "n": t.n,
        "units": list(t.units),
        "mean_a": t.mean_a,
        "mean_b": t.mean_b,
        "mean_diff": t.mean_diff,
        # NaN when the differences do not vary (inf when they are equal and non-zero), as
        # scipy gives; the JSON format writes both as null.
        "statistic": t.statistic,
        "p_value": t.p_value,
        "significant": t.significant(ALPHA),
        "ci_low": t.ci_low,
        "ci_high": t.ci_high,
    }


def _model_scores(
    data: ReportData, normalized: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """What the t-tests pair: model spec -> task -> normalized score, runs with images only.

    A blind run is a setting, not a model, so it is left out; a model in several runs counts
    once (its mean on a task reported by more than one run), so pairing over models does not
    count one model twice.
    """
    pooled: dict[str, dict[str, list[float]]] = {}
    for e in data.entries:
        if e.run.blind or e.label not in normalized:
            continue
        per = pooled.setdefault(e.model, {})
        for task, value in normalized[e.label].items():
            per.setdefault(task, []).append(value)
    return {m: {t: sum(v) / len(v) for t, v in per.items()} for m, per in pooled.items()}


def _category_tests(
    data: ReportData,
    normalized: dict[str, dict[str, float]],
    catalog: Catalog,
    definitions: ReportDefinitions,
) -> list[TTestRow]:
    from lmmprobe.holistic import DIMENSIONS, compare_all_categories

    scores = _model_scores(data, normalized)
    if len(scores) < 2:
        return []
    rows = []
    for dimension in DIMENSIONS:
        tests = compare_all_categories(
            scores, catalog, dimension, n_boot=TEST_BOOTSTRAP, definitions=definitions
        )
        for t in tests:
            rows.append(TTestRow(dimension=dimension, **_test_fields(t)))
    return rows


def _card_rows(data: ReportData, tables: ReportTables) -> None:
    """The cards of the entries and paired t-tests between model groups (HEMM's pairing)."""
    from lmmprobe.holistic import MODEL_DIMENSIONS, compare_model_groups, group_models

    tables.cards_source = data.cards_source
    seen: dict[str, CardRow] = {}
    for e in data.entries:
        card = data.cards.get(e.label)
        if card is None:
            continue
        if e.model in seen:
            seen[e.model].entries.append(e.label)
            continue
        row = CardRow(
            model=e.model,
            entries=[e.label],
            groups={d: card.category(d) for d in MODEL_DIMENSIONS},
            parameter_count=card.parameter_count,
            pretraining_data_count=card.pretraining_data_count,
            proprietary=card.proprietary,
            notes=card.notes,
        )
        seen[e.model] = row
        tables.cards.append(row)
    if data.cards_source is None:
        return
    scores = _model_scores(data, tables.normalized)
    card_of = {e.model: data.cards[e.label] for e in data.entries if e.label in data.cards}
    carded = {model: card_of[model] for model in scores if model in card_of}
    for dimension in MODEL_DIMENSIONS:
        groups = group_models(carded, dimension)
        for a, b in itertools.combinations(groups, 2):
            pair = {"dimension": dimension, "models_a": groups[a], "models_b": groups[b]}
            try:
                t = compare_model_groups(
                    scores,
                    groups[a],
                    groups[b],
                    labels=(a, b),
                    n_boot=TEST_BOOTSTRAP,
                    definitions=tables.definitions,
                )
            except ValueError as exc:  # fewer than 2 tasks scored by both groups
                test = GroupTestRow(**pair, a=a, b=b, n=0, note=str(exc))
            else:
                test = GroupTestRow(**pair, **_test_fields(t))
            tables.group_tests.append(test)
    if not tables.group_tests:
        if not carded:
            why = "no model with a card has normalized scores (runs with images, catalog tasks)"
        else:
            why = "no modeling dimension splits the models with cards into two or more groups"
        tables.groups_note = f"no model-group t-tests: {why}"


def _rank_agreement(data: ReportData, tables: ReportTables) -> None:
    """Spearman/Kendall between the model rankings of every two runs on different data."""
    from lmmprobe.metrics.ranking import rank_correlation

    values: dict[str, dict[str, dict[str, float]]] = {}
    for row in tables.leaderboard:
        for metric in RANK_METRICS:
            value = value_of(row.metrics, metric)
            if value is not None and math.isfinite(float(value)):
                values.setdefault(metric, {}).setdefault(row.run_id, {})[row.model] = float(value)
    skipped = []
    for ra, rb in itertools.combinations(data.runs, 2):
        if ra.data == rb.data or ra.blind != rb.blind:
            continue  # the same data, or images against none: not two benchmarks
        shared = 0
        for metric in RANK_METRICS:
            a = values.get(metric, {}).get(ra.run_id, {})
            b = values.get(metric, {}).get(rb.run_id, {})
            shared = max(shared, len(set(a) & set(b)))
            if len(set(a) & set(b)) >= 3:
                res = rank_correlation(a, b)
                tables.rank_agreement.append(
                    RankAgreementRow(
                        run_a=ra.run_id,
                        data_a=ra.data,
                        run_b=rb.run_id,
                        data_b=rb.data,
                        metric=metric,
                        **res,
                    )
                )
                break
        else:
            skipped.append(f"{ra.run_id} and {rb.run_id} ({shared} shared model(s))")
    if skipped:
        tables.agreement_note = (
            "rank agreement needs 3 or more models scored on both runs; not compared: "
            + "; ".join(skipped)
        )


def _apex_rows(dirs: Sequence[Path]) -> list[ApexRow]:
    rows = []
    for d in dirs:
        try:
            doc = read_json_file(d / "report.json", what="an APEx report", within=d)
        except ValueError:  # checked when the folder was named; changed since
            doc = None
        doc = doc if isinstance(doc, dict) else {}
        exps = doc.get("experiments")
        query = doc.get("query")
        status = doc.get("status")
        rows.append(
            ApexRow(
                path=str(d),
                query=query if isinstance(query, str) else None,
                status=status if isinstance(status, str) else None,
                experiments=len(exps) if isinstance(exps, list) else 0,
            )
        )
    return rows


def build_tables(data: ReportData, *, definitions: ReportDefinitions = "lmmprobe") -> ReportTables:
    """Compute every table of a report from its data.

    Args:
        data: Runs, entries and samples from `load_report_data`.
        definitions: ``"lmmprobe"`` (default) or ``"hemm"``: whose normalization, category
            statistics and t-test inputs the dimension analysis uses
            (`definitions_sentence`).

    Returns:
        The tables, shared by the HTML, Markdown, CSV and JSON formats.

    Raises:
        ValueError: Unknown `definitions`.

    """
    definitions_sentence(definitions)  # validates
    tables = ReportTables(
        runs=_run_rows(data), warnings=list(data.warnings), definitions=definitions
    )
    tables.leaderboard, tables.metric_names = _leaderboard(data)
    _breakdowns(data, tables)
    _accuracy_tables(data, tables)
    tables.sensitivity = _sensitivity(data)
    tables.blind_gaps = _blind_gaps(data)
    _dimension_rows(data, tables)
    try:
        _card_rows(data, tables)
    except ImportError as exc:  # scipy, an optional dependency, is missing
        tables.groups_note = f"t-tests between model groups are unavailable: {exc}"
    try:
        _rank_agreement(data, tables)
    except ImportError as exc:
        tables.agreement_note = f"rank agreement is unavailable: {exc}"
    tables.apex = _apex_rows(data.apex_dirs)
    return tables
