"""The numbers a report shows, computed once for every format (HTML, Markdown, CSV, JSON).

What is computed, and after whom:

- the leaderboard: each model's run-level metrics with 95% cluster-bootstrap intervals, as the
  run's ``results.json`` holds them (recomputed from the stored rows for unfinished runs);
- per-subtask accuracy (the models × subtasks heatmap) and per-scenario, per-subtask accuracy
  (Dysca, Zhang et al. 2024, figure 7: one radar per scenario);
- Dysca's sensitivities: question type (SQ, from TFSQ and MCSQ), covariate shift (SC), the
  scenario deltas against clean; ReForm-Eval's instability (Li et al. 2023) when samples were
  asked more than once;
- blind-setting gaps: a model's accuracy with images minus without (Dysca's blind setting);
- HEMM's dimension means (Liang et al. 2024): per-dataset min-max normalized scores averaged per
  category of each task dimension, through `lmmprobe.holistic`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lmmprobe.metrics import blind_gap, instability, summarize
from lmmprobe.metrics.synth import accuracy_percent
from lmmprobe.report._collect import Entry, ReportData
from lmmprobe.report.results import HEADLINE, sensitivity_metrics
from lmmprobe.schema import Score

log = logging.getLogger(__name__)

SUBTASK_KEYS: tuple[str, ...] = ("subtask", "task")
"""Metadata keys naming a sample's subtask, most specific first."""

ALL = "all"
"""Group label of rows whose metadata names no subtask (or no scenario)."""

LEADERBOARD_METRICS: tuple[str, ...] = HEADLINE
"""Metrics the leaderboard may show, in this order (those no entry has are left out)."""


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


@dataclass
class ReportTables:
    """Every table of a report, as plain JSON-ready values.

    Attributes:
        runs: One dict per run: id, status, data, models, blind, created_at, versions.
        leaderboard: One dict per entry, best accuracy first: label, model, run_id, blind, n
            and ``metrics`` (name → value, low, high, n; fractions).
        metric_names: Leaderboard metrics present in at least one entry.
        subtasks: Subtask labels, in first-seen order.
        subtask_accuracy: Entry label → subtask → ``{"value": percent, "n": rows}``.
        scenarios: Scenario labels (``clean`` first), or ``["all"]`` without scenarios.
        scenario_accuracy: Scenario → entry label → subtask → accuracy in percent.
        sensitivity: One dict per entry with any of SQ/TFSQ/MCSQ/S_tf/S_mc, SC, instability
            (nats) and ``scenario_deltas`` (scenario → percentage points against clean).
        blind_gaps: One dict per (normal, blind) pair of the same model on the same data:
            accuracies, ``gap`` (points) and ``by_subtask`` gaps.
        dimensions: HEMM dimension means: dimension, category, model, mean, sd, n.
        dimensions_note: Why dimension means are missing, when they are.
        apex: One dict per APEx campaign folder: path, query, status, number of experiments.
        warnings: Things the reader should know.

    """

    runs: list[dict[str, Any]] = field(default_factory=list)
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    metric_names: list[str] = field(default_factory=list)
    subtasks: list[str] = field(default_factory=list)
    subtask_accuracy: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    scenarios: list[str] = field(default_factory=list)
    scenario_accuracy: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    blind_gaps: list[dict[str, Any]] = field(default_factory=list)
    dimensions: list[dict[str, Any]] = field(default_factory=list)
    dimensions_note: str | None = None
    apex: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """All tables as one JSON-ready dictionary."""
        return asdict(self)


def _run_rows(data: ReportData) -> list[dict[str, Any]]:
    rows = []
    for run in data.runs:
        man = run.manifest or {}
        rows.append(
            {
                "run_id": run.run_id,
                "status": run.status,
                "data": run.data,
                "models": [e.label for e in data.entries if e.run is run],
                "blind": run.blind,
                "created_at": run.created_at,
                "lmmprobe": man.get("lmmprobe"),
                "git_commit": man.get("git_commit"),
                "samples": (man.get("data") or {}).get("samples"),
            }
        )
    return rows


def _has_repeats(scores: Sequence[Score]) -> bool:
    return len(scores) > len({s.sample_id for s in scores})


def _entry_metrics(entry: Entry) -> dict[str, dict[str, Any]]:
    block = entry.results
    if block and block.get("metrics"):
        return dict(block["metrics"])
    if not entry.scores:
        return {}
    # An unfinished run has no results.json yet: compute what `lmmprobe run` would have.
    boot = int(entry.run.spec.get("bootstrap", 1000))
    seed = int(entry.run.spec.get("seed", 0))
    metrics = {k: v.to_dict() for k, v in summarize(entry.scores, n_boot=boot, seed=seed).items()}
    if _has_repeats(entry.scores):
        metrics["instability"] = instability(entry.scores, n_boot=boot, seed=seed).to_dict()
    return metrics


def _leaderboard(data: ReportData) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    for e in data.entries:
        metrics = _entry_metrics(e)
        n = (metrics.get("error_rate") or {}).get("n") or len(e.scores)
        rows.append(
            {
                "label": e.label,
                "model": e.model,
                "run_id": e.run.run_id,
                "blind": e.run.blind,
                "n": n,
                "metrics": metrics,
            }
        )

    def accuracy(row: dict[str, Any]) -> float:
        value = (row["metrics"].get("accuracy") or {}).get("value")
        return -1.0 if value is None else float(value)

    rows.sort(key=accuracy, reverse=True)
    names = [
        n
        for n in LEADERBOARD_METRICS
        if any((r["metrics"].get(n) or {}).get("value") is not None for r in rows)
    ]
    return rows, names


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
        per_sub: dict[str, dict[str, Any]] = {}
        for sub, rows in _group(e.scores, subtask_of).items():
            subtasks.setdefault(sub, None)
            acc = accuracy_percent(rows)
            if acc is not None:
                per_sub[sub] = {"value": acc, "n": len(rows)}
        tables.subtask_accuracy[e.label] = per_sub
        for scen, rows in _group(e.scores, scenario_of).items():
            scenarios.add(scen)
            cell = tables.scenario_accuracy.setdefault(scen, {}).setdefault(e.label, {})
            for sub, sub_rows in _group(rows, subtask_of).items():
                acc = accuracy_percent(sub_rows)
                if acc is not None:
                    cell[sub] = acc
    tables.subtasks = list(subtasks)
    tables.scenarios = _ordered_scenarios(scenarios)
    tables.scenario_accuracy = {s: tables.scenario_accuracy[s] for s in tables.scenarios}


def _sensitivity(data: ReportData) -> list[dict[str, Any]]:
    rows = []
    for e in data.entries:
        block = e.results
        sens: dict[str, Any] = dict((block or {}).get("sensitivity") or {})
        if not sens and e.scores:
            sens = sensitivity_metrics(e.scores)
        row: dict[str, Any] = {"label": e.label}
        row.update(sens.get("question_type") or {})
        if "covariate_shift_SC" in sens:
            row["SC"] = sens["covariate_shift_SC"]
        metrics = (block or {}).get("metrics") or {}
        inst = (metrics.get("instability") or {}).get("value")
        if inst is None and e.scores and _has_repeats(e.scores):
            inst = instability(e.scores, n_boot=0).value
        if inst is not None:
            row["instability"] = inst
        if sens.get("scenario_deltas"):
            row["scenario_deltas"] = dict(sens["scenario_deltas"])
        if len(row) > 1:
            rows.append(row)
    return rows


def _blind_gaps(data: ReportData) -> list[dict[str, Any]]:
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
                    {
                        "model": model,
                        "data": spec,
                        "normal": n.label,
                        "blind": b.label,
                        "normal_accuracy": accuracy_percent(n.scores),
                        "blind_accuracy": accuracy_percent(b.scores),
                        "gap": gap,
                        "by_subtask": by_sub,
                    }
                )
    return rows


def _dimension_rows(data: ReportData, tables: ReportTables) -> None:
    """HEMM dimension means of the entries' per-task accuracies (fractions, normalized)."""
    try:
        from lmmprobe.holistic import dimension_means, load_catalog, normalize_scores

        catalog = load_catalog()
    except ImportError as exc:  # an optional dependency of the catalog is missing
        tables.dimensions_note = f"dimension means are unavailable: {exc}"
        return
    known: dict[tuple[str, ...], str | None] = {}
    unknown: set[str] = set()

    def dataset(score: Score) -> str:
        # The catalog name of a row's task: its subtask when annotated, else its task.
        names = tuple(
            str(score.metadata[k]) for k in SUBTASK_KEYS if score.metadata.get(k) is not None
        )
        if names not in known:
            known[names] = next((n for n in names if catalog.dimensions(n) is not None), None)
            if known[names] is None:
                unknown.add(names[0] if names else ALL)
        return known[names] or ""

    raw: dict[str, dict[str, float]] = {}
    for e in data.entries:
        per: dict[str, float] = {}
        for name, rows in _group(e.scores, dataset).items():
            acc = accuracy_percent(rows) if name else None
            if acc is not None:
                per[name] = acc / 100.0
        if per:
            raw[e.label] = per
    notes = []
    if unknown:
        notes.append(f"tasks not in the HEMM catalog are left out: {', '.join(sorted(unknown))}")
    if len(raw) == 1:
        # Min-max over one model maps every task to 0 (it is the worst model): say so.
        notes.append("with a single model every normalized score is 0; compare several models")
    if raw:
        tables.dimensions = [asdict(r) for r in dimension_means(normalize_scores(raw), catalog)]
    else:
        notes.insert(0, "no task of these runs is annotated in the HEMM catalog")
    tables.dimensions_note = "; ".join(notes) or None


def _apex_rows(dirs: Sequence[Path]) -> list[dict[str, Any]]:
    rows = []
    for d in dirs:
        try:
            doc = json.loads((d / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        doc = doc if isinstance(doc, dict) else {}
        exps = doc.get("experiments")
        query = doc.get("query")
        rows.append(
            {
                "path": str(d),
                "query": query if isinstance(query, str) else None,
                "status": doc.get("status") if isinstance(doc.get("status"), str) else None,
                "experiments": len(exps) if isinstance(exps, list) else 0,
            }
        )
    return rows


def build_tables(data: ReportData) -> ReportTables:
    """Compute every table of a report from its data.

    Args:
        data: Runs, entries and samples from `load_report_data`.

    Returns:
        The tables, shared by the HTML, Markdown, CSV and JSON formats.

    """
    tables = ReportTables(runs=_run_rows(data), warnings=list(data.warnings))
    tables.leaderboard, tables.metric_names = _leaderboard(data)
    _accuracy_tables(data, tables)
    tables.sensitivity = _sensitivity(data)
    tables.blind_gaps = _blind_gaps(data)
    _dimension_rows(data, tables)
    tables.apex = _apex_rows(data.apex_dirs)
    return tables
