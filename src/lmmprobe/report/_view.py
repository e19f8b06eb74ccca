"""What the HTML page shows, arranged for reading: one block per data spec, short names, charts.

`build_view` groups a report's tables by data spec (`Board`): a leaderboard that ranks only runs
on the same data, each model's blind run (Dysca's setting without images) beside its run with
images rather than ranked against it, its accuracy against output tokens, its ``--by``
breakdowns (groups × models, the largest `BREAKDOWN_GROUPS_SHOWN` groups of a long one), and that
data spec's heatmap, radars and scenario deltas.
Names come from `lmmprobe.report._labels`; the numbers are `ReportTables`' own, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lmmprobe.report._build_tables import BreakdownTable, ReportTables, breakdown_tables
from lmmprobe.report._collect import ReportData
from lmmprobe.report._figures import (
    blind_gap_figure,
    dimension_figures,
    heatmap_figure,
    leaderboard_figure,
    palette,
    radar_figure,
    scenario_delta_figure,
    tokens_figure,
)
from lmmprobe.report._format import SMALL_N
from lmmprobe.report._labels import Labels, build_labels
from lmmprobe.report.rows import LeaderboardRow

BOARD_METRICS_FIRST = ("accuracy",)
"""Metrics shown before the blind columns; the others follow them."""

BREAKDOWN_GROUPS_SHOWN = 30
"""Groups of one ``--by`` key the page shows at most (those with the most rows): a key with
thousands of values (an id, a free-text field) must not make the page endless. Every group is
in each run's results.md, on its page in ``lmmprobe serve`` and in the other formats."""


@dataclass
class BreakdownView:
    """One ``--by`` key of one data spec as the page shows it.

    Attributes:
        table: The key's groups × entries (`breakdown_tables`), every group.
        groups: The groups shown, in the table's order: all of them, or the
            `BREAKDOWN_GROUPS_SHOWN` with the most rows.
        left_out: How many groups are not shown.
        small: Whether a shown count is under `SMALL_N` (its footnote is then shown).
        shared_n: Whether every entry has the same count in each shown group (the models of
            one run, asked the same rows): one n column then, else an n in every cell.

    """

    table: BreakdownTable
    groups: list[str]
    left_out: int
    small: bool
    shared_n: bool

    def n(self, group: str) -> int:
        """The count of `group` in the n column (`shared_n`): the one its entries share."""
        return self.table.shared_count(group) or 0


@dataclass
class BoardRow:
    """One model on one data spec: its run with images and, beside it, its blind run."""

    rank: int | None
    name: str
    model: str
    row: LeaderboardRow | None
    blind: LeaderboardRow | None
    gap: float | None = None

    @property
    def main(self) -> LeaderboardRow:
        """The row whose metrics fill the table (the blind one when there is no other)."""
        row = self.row if self.row is not None else self.blind
        assert row is not None  # a BoardRow always holds one of the two
        return row


@dataclass
class Board:
    """Everything the page shows for one data spec."""

    code: str
    spec: str
    runs: list[tuple[str, str]]
    rows: list[BoardRow]
    metrics: list[str]
    has_blind: bool
    several_runs: bool
    figure: str | None = None
    tokens: str | None = None
    """Id of the accuracy-against-output-tokens chart (None: no entry has the tokens)."""
    heatmap: str | None = None
    radars: list[tuple[str, str]] = field(default_factory=list)
    deltas: str | None = None
    sensitivity: list[Any] = field(default_factory=list)
    breakdowns: list[BreakdownView] = field(default_factory=list)

    @property
    def delta_scenarios(self) -> list[str]:
        """Scenarios with an accuracy change against clean, in first-seen order."""
        seen: dict[str, None] = {}
        for r in self.sensitivity:
            seen.update(dict.fromkeys(r.scenario_deltas))
        return list(seen)


@dataclass
class View:
    """The page's arrangement of a report: names, per-data-spec boards, figures."""

    labels: Labels
    boards: list[Board]
    figures: dict[str, Any]
    dimension_ids: list[tuple[str, str]]
    model_colors: dict[str, str]


def _value(row: LeaderboardRow | None) -> float | None:
    m = row.metrics.get("accuracy") if row is not None else None
    return None if m is None else m.value


def _board_rows(
    rows: list[LeaderboardRow], labels: Labels, gaps: dict[tuple[str, str], float]
) -> list[BoardRow]:
    normal = [r for r in rows if not r.blind]
    blind = [r for r in rows if r.blind]
    out: list[BoardRow] = []
    for r in normal:  # already best first
        partner = next((b for b in blind if b.model == r.model), None)
        if partner is not None:
            blind.remove(partner)
        gap = gaps.get((r.label, partner.label)) if partner is not None else None
        out.append(BoardRow(None, labels.entry[r.label], r.model, r, partner, gap))
    # Blind runs without a run with images on this data: ranked after, among themselves.
    out += [BoardRow(None, labels.entry[b.label], b.model, None, b) for b in blind]
    rank = 0
    for b in out:
        if b.row is not None or not normal:
            rank += 1
            b.rank = rank
    return out


def breakdown_view(table: BreakdownTable, limit: int = BREAKDOWN_GROUPS_SHOWN) -> BreakdownView:
    """What the page shows of one breakdown: every group, or the `limit` with the most rows.

    The groups shown keep the table's order (the results' own), so a key with ordered values
    (levels, durations) still reads in order.
    """
    groups = table.groups
    if len(groups) > limit:
        # Ties keep the table's order (sorted is stable).
        kept = set(sorted(groups, key=table.size, reverse=True)[:limit])
        groups = [g for g in groups if g in kept]
    small = any(
        0 < (table.count(g, label) or 0) < SMALL_N for g in groups for label in table.labels
    )
    shared = all(table.shared_count(g) is not None for g in groups)
    return BreakdownView(table, groups, len(table.groups) - len(groups), small, shared)


def variant_colors(
    labels: Labels,
    entry_model: dict[str, str],
    model_colors: dict[str, str],
    blind: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Entry label → colour, one per variant (a model with its run's settings).

    A model's first variant keeps the model's colour (the swatch of the page's model table);
    each other one (its blind run, a likelihood run...) takes the next colour after every
    model's, so no two look alike. Entries of runs with images come first, whatever order the
    runs were given in: a model's colour is its run with images, never its blind run (given
    blind run first, the blind bars wore the model's colour and the bars with images another).
    """
    entry_model = dict(sorted(entry_model.items(), key=lambda kv: kv[0] in blind))
    colors: dict[str, str] = {}
    by_variant: dict[str, str] = {}
    seen_models: set[str] = set()
    # The palette's colours in order, continued past the models' own.
    seq = list(palette([str(i) for i in range(len(model_colors) + len(entry_model))]).values())
    extra_colors = seq[len(model_colors) :]
    k = 0
    for label, model in entry_model.items():
        variant = labels.entry_variant.get(label, label)
        if variant not in by_variant:
            if model not in seen_models:
                by_variant[variant] = model_colors[model]
            else:
                by_variant[variant] = extra_colors[k % len(extra_colors)]
                k += 1
            seen_models.add(model)
        colors[label] = by_variant[variant]
    return colors


def build_view(data: ReportData, tables: ReportTables) -> View:
    """Arrange a report's tables for the page: names, one board per data spec, figures.

    Args:
        data: The report's runs and entries.
        tables: Its tables (`build_tables`).

    Returns:
        The view; `View.figures` maps element ids to plotly figures.

    """
    labels = build_labels(data)
    model_colors = palette(list(labels.models))
    entry_model = {e.label: e.model for e in data.entries}
    blind_labels = frozenset(e.label for e in data.entries if e.run.blind)
    entry_colors = variant_colors(labels, entry_model, model_colors, blind_labels)
    data_of = {r.run_id: r.data for r in tables.runs}
    gaps = {(g.normal, g.blind): g.gap for g in tables.blind_gaps}
    order = [r.label for r in tables.leaderboard]
    by_data: dict[str, list[BreakdownView]] = {}
    for table in breakdown_tables(tables):
        by_data.setdefault(table.data, []).append(breakdown_view(table))
    figures: dict[str, Any] = {}
    boards: list[Board] = []
    for spec, key in labels.datasets.items():
        rows = [r for r in tables.leaderboard if data_of.get(r.run_id) == spec]
        runs = [
            (r.run_id, "blind" if r.blind else "with images") for r in tables.runs if r.data == spec
        ]
        brows = _board_rows(rows, labels, gaps)
        metrics = [m for m in tables.metric_names if any(m in r.metrics for r in rows)]
        board = Board(
            code=key.code,
            spec=spec,
            runs=runs,
            rows=brows,
            metrics=metrics,
            has_blind=any(r.blind for r in rows) and any(not r.blind for r in rows),
            several_runs=sum(1 for _, s in runs if s == "with images") > 1,
            breakdowns=by_data.get(spec, []),
        )
        n = len(boards)
        fig = leaderboard_figure([(b.name, b.model, b.row, b.blind) for b in brows], model_colors)
        if fig is not None:
            board.figure = f"fig-board-{n}"
            figures[board.figure] = fig
        # One point per model and setting: blind runs and runs with images alike.
        points = [(labels.entry[r.label], r.label, r) for r in rows]
        tok = tokens_figure(points, entry_colors)
        if tok is not None:
            board.tokens = f"fig-tokens-{n}"
            figures[board.tokens] = tok
        mine = [label for label in order if labels.entry_data.get(label) == key.code]
        names = labels.entry
        heat = heatmap_figure(
            {lab: tables.subtask_accuracy[lab] for lab in mine if lab in tables.subtask_accuracy},
            tables.subtasks,
            names,
        )
        if heat is not None:
            board.heatmap = f"fig-heat-{n}"
            figures[board.heatmap] = heat
        for scenario in tables.scenarios:
            per = tables.scenario_accuracy.get(scenario, {})
            radar = radar_figure(
                scenario, {lab: per[lab] for lab in mine if lab in per}, tables.subtasks,
                names, entry_colors, blind_labels,
            )  # fmt: skip
            if radar is not None:
                fid = f"fig-radar-{n}-{len(board.radars)}"
                board.radars.append((fid, scenario))
                figures[fid] = radar
        sens = {r.label: r for r in tables.sensitivity}
        board.sensitivity = [sens[label] for label in mine if label in sens]
        deltas = scenario_delta_figure(board.sensitivity, names)
        if deltas is not None:
            board.deltas = f"fig-deltas-{n}"
            figures[board.deltas] = deltas
        boards.append(board)
    dims = []
    for i, (name, fig) in enumerate(
        dimension_figures(tables.dimensions, labels.global_entry, entry_colors, order)
    ):
        figures[f"fig-dim-{i}"] = fig
        dims.append((f"fig-dim-{i}", name))
    codes = {spec: k.code for spec, k in labels.datasets.items()}
    blind = blind_gap_figure(
        tables.blind_gaps,
        {spec: k.name for spec, k in labels.models.items()},
        codes,
        palette(list(codes.values())),
    )
    if blind is not None:
        figures["fig-blind"] = blind
    return View(labels, boards, figures, dims, model_colors)
