"""Plotly figures of a report, built as plain ``{"data", "layout"}`` dictionaries.

The page draws them with the embedded plotly.js (``Plotly.newPlot``); building the JSON by hand
skips plotly's Python-side validation, which is slow for large figures and adds nothing here.
Every label from data or models goes through `plotly_text` so plotly shows it literally.
The radar charts follow Dysca's figure 7 (Zhang et al., 2024): per-subtask accuracy of each
model, one radar per scenario (here per data spec and scenario). `tokens_figure` sets accuracy
against mean output tokens per answer (what thinking costs), when the results carry them.

Readable at a dozen models: series are named by the page's short names
(`lmmprobe.report._labels`), legends stand on the right in one column, a model keeps its color
in every chart, and a chart with more than `MAX_SHOWN` series shows the best `MAX_SHOWN` (by
accuracy) and lists the others in its legend, where a click shows them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.holistic import DimensionRow
from lmmprobe.metrics import MetricValue
from lmmprobe.report._embed import plotly_text as esc
from lmmprobe.report.rows import BlindGapRow, LeaderboardRow, SensitivityRow, SubtaskCell

Figure = dict[str, Any]

ALL_MODELS = "all"
"""Model name of HEMM's pooled dimension rows (`lmmprobe.holistic.ALL_MODELS`)."""

MAX_SHOWN = 6
"""Series a multi-series chart shows at first; the others wait in its legend."""

MAX_SPOKE = 18
"""Longest subtask name on a radar's spoke; longer ones end in an ellipsis."""

BLIND_COLOR = "#9aa3b2"
"""Bars of blind runs (no images): one neutral grey beside the models' colors."""

_FONT = {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12}

# Okabe-Ito and Tableau-like hues: distinguishable, also for most color-blind readers.
_PALETTE = (
    "#3b6fb6", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#7f7f7f", "#bcbd22",
    "#8c564b", "#17becf", "#9467bd", "#f0e442",
)  # fmt: skip


def palette(models: Sequence[str]) -> dict[str, str]:
    """One color per model spec, the same in every chart (given order, palette cycled)."""
    return {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(models)}


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _layout(title: str, *, series: int = 0, **extra: Any) -> dict[str, Any]:
    layout: dict[str, Any] = {
        "title": {"text": esc(title), "x": 0.01, "xanchor": "left"},
        "font": _FONT,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "showlegend": series > 1,
        # One column on the right: a dozen short names fit, none is cut off at the bottom.
        "legend": {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top",
                   "font": {"size": 11}, "itemclick": "toggle"},
    }  # fmt: skip
    if series > MAX_SHOWN:
        layout["title"]["text"] += (
            f"<br><span style='font-size:11px'>best {MAX_SHOWN} of {series} shown; "
            "click a name in the legend to show or hide it</span>"
        )
        layout["margin"] = {**layout["margin"], "t": 64}
    layout.update(extra)
    return layout


def _shown(index: int) -> bool | str:
    return True if index < MAX_SHOWN else "legendonly"


def _finite(value: float | None) -> float | None:
    """`value` when it is a finite number, else None (plotly leaves the bar out)."""
    return value if value is not None and math.isfinite(value) else None


def _bars(rows: Sequence[MetricValue | None]) -> tuple[list[Any], list[float], list[float]]:
    """Percent values (None: no bar) and CI whisker lengths of metric values."""
    values: list[Any] = []
    plus: list[float] = []
    minus: list[float] = []
    for m in rows:
        v = m.value if m is not None else None
        values.append(None if v is None else 100 * v)
        if m is not None and v is not None and m.low is not None and m.high is not None:
            plus.append(100 * (m.high - v))
            minus.append(100 * (v - m.low))
        else:
            plus.append(0.0)
            minus.append(0.0)
    return values, plus, minus


def leaderboard_figure(
    pairs: Sequence[tuple[str, str, LeaderboardRow | None, LeaderboardRow | None]],
    colors: Mapping[str, str],
) -> Figure | None:
    """Accuracy bars with 95% CI whiskers of one data spec, best model on top.

    Args:
        pairs: ``(name, model spec, with-images row, blind row)`` in ranking order.
        colors: Model spec → color.

    Returns:
        The figure (a grey bar beside a model's when it also ran blind), or None when no row
        has an accuracy.

    """
    names, normal, blind = [], [], []
    for name, model, row, brow in pairs:
        acc = row.metrics.get("accuracy") if row is not None else None
        bacc = brow.metrics.get("accuracy") if brow is not None else None
        if (acc is None or acc.value is None) and (bacc is None or bacc.value is None):
            continue
        names.append((name, model))
        normal.append(acc)
        blind.append(bacc)
    if not names:
        return None
    names, normal, blind = names[::-1], normal[::-1], blind[::-1]  # plotly: first at the bottom
    y = [esc(n) for n, _ in names]
    traces = []
    # Horizontal groups stack their first trace at the bottom: blind first, images on top.
    for label, rows, color in (
        ("blind (no images)", blind, [BLIND_COLOR] * len(names)),
        ("with images", normal, [colors.get(m, "#7f7f7f") for _, m in names]),
    ):
        if all(m is None or m.value is None for m in rows):
            continue
        values, plus, minus = _bars(rows)
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": label,
                "x": values,
                "y": y,
                "error_x": {"type": "data", "array": plus, "arrayminus": minus, "visible": True},
                "hovertemplate": f"%{{y}} ({label}): %{{x:.1f}}%<extra></extra>",
                "marker": {"color": color},
            }
        )
    per_row = 22 if len(traces) == 1 else 34
    return {
        "data": traces,
        "layout": _layout(
            "Accuracy with 95% bootstrap CI (%)",
            series=len(traces),
            height=110 + per_row * len(names),
            barmode="group",
            legend={"x": 1.02, "y": 1, "traceorder": "reversed", "font": {"size": 11}},
            xaxis={"range": [0, 100], "title": {"text": "accuracy (%)"}},
            yaxis={"type": "category", "automargin": True},
            margin={"l": 10, "r": 20, "t": 50, "b": 50},
        ),
    }


def dimension_figures(
    rows: Sequence[DimensionRow],
    names: Mapping[str, str],
    colors: Mapping[str, str],
    order: Sequence[str],
) -> list[tuple[str, Figure]]:
    """One grouped bar chart per HEMM dimension: categories × entries, whiskers ± 1 SD.

    A mean HEMM's definitions leave undefined (NaN: a task every model aces) has no bar; the
    category says "undefined" under the axis instead, so an empty chart is never unexplained.

    Args:
        rows: The dimension rows (`ReportTables.dimensions`).
        names: Entry label → display name.
        colors: Entry label → color.
        order: Entry labels, best first (the first `MAX_SHOWN` are shown at first).

    """
    rank = {label: i for i, label in enumerate(order)}
    by_dim: dict[str, dict[str, dict[str, DimensionRow]]] = {}
    for row in rows:
        if row.model == ALL_MODELS:
            continue  # the pooled row is in the table; the chart compares models
        by_dim.setdefault(row.dimension, {}).setdefault(row.model, {})[row.category] = row
    figures = []
    for dim, models in by_dim.items():
        cats: dict[str, None] = {}
        for per in models.values():
            cats.update(dict.fromkeys(per))
        ranked = sorted(models.items(), key=lambda kv: rank.get(kv[0], len(rank)))
        traces = []
        for i, (model, per) in enumerate(ranked):
            traces.append(
                {
                    "type": "bar",
                    "name": esc(names.get(model, model)),
                    "visible": _shown(i),
                    "marker": {"color": colors.get(model, "#7f7f7f")},
                    "x": [esc(c) for c in cats],
                    "y": [(_finite(per[c].mean) if c in per else None) for c in cats],
                    "error_y": {
                        "type": "data",
                        "array": [(_finite(per[c].sd) or 0) if c in per else 0 for c in cats],
                        "visible": True,
                    },
                    "customdata": [(per[c].n if c in per else None) for c in cats],
                    "hovertemplate": "%{x}: %{y:.3f} (n=%{customdata})<extra>%{fullData.name}</extra>",
                }
            )
        undefined = {
            c: sum(1 for per in models.values() if c in per and math.isnan(per[c].mean))
            for c in cats
        }
        ticks = [
            esc(c)
            + (
                "<br>(undefined)"
                if k == len(models)
                else f"<br>(undefined for {k} of {len(models)})"
                if k
                else ""
            )
            for c, k in undefined.items()
        ]
        yaxis: dict[str, Any] = {"title": {"text": "normalized score"}, "rangemode": "tozero"}
        if all(_finite(r.mean) is None for per in models.values() for r in per.values()):
            yaxis["range"] = [0, 1]  # nothing to draw: the score scale, not plotly's 0..4
        figures.append(
            (
                dim,
                {
                    "data": traces,
                    "layout": _layout(
                        f"{dim.replace('_', ' ')}",
                        series=len(traces),
                        barmode="group",
                        height=360,
                        xaxis={
                            "type": "category",
                            "tickmode": "array",
                            "tickvals": [esc(c) for c in cats],
                            "ticktext": ticks,
                        },
                        yaxis=yaxis,
                    ),
                },
            )
        )
    return figures


def radar_figure(
    scenario: str,
    per_model: Mapping[str, Mapping[str, float]],
    subtasks: Sequence[str],
    names: Mapping[str, str],
    colors: Mapping[str, str],
    blind: frozenset[str] = frozenset(),
) -> Figure | None:
    """Per-subtask accuracy (%) of every entry in one scenario (Dysca figure 7).

    Args:
        scenario: Its name (the title).
        per_model: Entry label → subtask → accuracy (%), best entry first.
        subtasks: Subtask order.
        names: Entry label → display name.
        colors: Entry label → color.
        blind: Labels of blind entries: dotted, in their model's color.

    """
    subs = [s for s in subtasks if any(s in m for m in per_model.values())]
    if not subs:
        return None
    theta = [esc(s) for s in subs]
    short = [s if len(s) <= MAX_SPOKE else s[: MAX_SPOKE - 1] + "\u2026" for s in subs]
    if len(set(short)) == len(short):  # long subtask names would be cut at the chart's edge
        theta = [esc(s) for s in short]
    traces = []
    for i, (label, accs) in enumerate(per_model.items()):
        r = [accs.get(s) for s in subs]
        color = colors.get(label, "#7f7f7f")
        traces.append(
            {
                "type": "scatterpolar",
                "name": esc(names.get(label, label)),
                "visible": _shown(i),
                # Repeat the first point so the polygon closes.
                "r": [*r, r[0]],
                "theta": [*theta, theta[0]],
                "mode": "lines+markers",
                "fill": "toself",
                "line": {"color": color, "dash": "dot" if label in blind else "solid"},
                "fillcolor": _rgba(color, 0.03 if label in blind else 0.08),
                "hovertemplate": "%{theta}: %{r:.1f}%<extra>%{fullData.name}</extra>",
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            scenario.replace("_", " "),
            series=len(traces),
            height=480,
            polar={
                # First subtask on top, clockwise; the radial scale between the first two
                # spokes so its labels do not sit on a subtask's name.
                "radialaxis": {
                    "range": [0, 100],
                    "tickvals": [25, 50, 75, 100],
                    "ticksuffix": "%",
                    "angle": 90 - 180 / len(subs),
                    "tickfont": {"size": 9},
                },
                "angularaxis": {
                    "type": "category",
                    "rotation": 90,
                    "direction": "clockwise",
                    "tickfont": {"size": 10},
                },
            },
            margin={"l": 120, "r": 40, "t": 100, "b": 40},
        ),
    }


def heatmap_figure(
    cells: Mapping[str, Mapping[str, SubtaskCell]],
    subtasks: Sequence[str],
    names: Mapping[str, str],
) -> Figure | None:
    """Entries × subtasks accuracy (%) with the value written in each cell.

    Args:
        cells: Entry label → subtask → cell, in row order.
        subtasks: Column order (subtasks no entry has are left out).
        names: Entry label → display name.

    """
    labels = list(cells)
    subs = [s for s in subtasks if any(s in per for per in cells.values())]
    if not labels or not subs:
        return None
    z = [[(c.value if (c := cells[lab].get(s)) else None) for s in subs] for lab in labels]
    text = [["" if v is None else f"{v:.1f}" for v in row] for row in z]
    trace = {
        "type": "heatmap",
        "z": z,
        "x": [esc(s) for s in subs],
        "y": [esc(names.get(lab, lab)) for lab in labels],
        "text": text,
        "texttemplate": "%{text}",
        "zmin": 0,
        "zmax": 100,
        "colorscale": "Viridis",
        "colorbar": {"title": {"text": "%"}},
        "hovertemplate": "%{y} · %{x}: %{z:.1f}%<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }
    return {
        "data": [trace],
        "layout": _layout(
            "Accuracy per subtask (%)",
            height=140 + 26 * len(labels),
            xaxis={"type": "category", "automargin": True},
            yaxis={"type": "category", "automargin": True, "autorange": "reversed"},
            margin={"l": 10, "r": 20, "t": 50, "b": 40},
        ),
    }


def scenario_delta_figure(
    rows: Sequence[SensitivityRow], names: Mapping[str, str]
) -> Figure | None:
    """Horizontal bars: each entry's accuracy change against clean, one bar per scenario.

    Entries are rows (best first, as given), scenarios the few bar colors: every model stays
    visible however many there are.
    """
    rows = [r for r in rows if r.scenario_deltas]
    if not rows:
        return None
    scenarios: dict[str, None] = {}
    for r in rows:
        scenarios.update(dict.fromkeys(r.scenario_deltas))
    shades = ("#3b6fb6", "#e69f00", "#009e73", "#cc79a7", "#7f7f7f")
    y = [esc(names.get(r.label, r.label)) for r in rows][::-1]  # plotly: first at the bottom
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "name": esc(s.replace("_", " ")),
            "marker": {"color": shades[i % len(shades)]},
            "y": y,
            "x": [r.scenario_deltas.get(s) for r in rows][::-1],
            "hovertemplate": "%{y}: %{x:+.1f} points<extra>%{fullData.name}</extra>",
        }
        for i, s in enumerate(scenarios)
    ]
    return {
        "data": traces,
        "layout": _layout(
            "Accuracy change against clean (percentage points)",
            series=len(traces),
            barmode="group",
            height=110 + (18 + 10 * len(traces)) * len(rows),
            yaxis={"type": "category", "automargin": True},
            xaxis={"zeroline": True, "zerolinewidth": 2, "title": {"text": "points"}},
            showlegend=True,
            margin={"l": 10, "r": 20, "t": 50, "b": 50},
        ),
    }


def blind_gap_figure(
    gaps: Sequence[BlindGapRow],
    model_names: Mapping[str, str],
    data_codes: Mapping[str, str],
    colors: Mapping[str, str],
) -> Figure | None:
    """Accuracy with images minus without, per model: one bar group per data spec (points).

    Args:
        gaps: The blind-gap rows.
        model_names: Model spec → display name.
        data_codes: Data spec → its code (the legend).
        colors: Data code → color.

    """
    if not gaps:
        return None
    by_data: dict[str, list[BlindGapRow]] = {}
    for g in gaps:
        by_data.setdefault(g.data, []).append(g)
    models: dict[str, None] = dict.fromkeys(model_names.get(g.model, g.model) for g in gaps)
    traces = []
    for spec, rows in by_data.items():
        code = data_codes.get(spec, spec)
        # One bar per model; a model compared in several pairs of runs keeps the first.
        per: dict[str, float] = {}
        for g in rows:
            per.setdefault(model_names.get(g.model, g.model), g.gap)
        traces.append(
            {
                "type": "bar",
                "name": esc(code),
                "x": [esc(m) for m in models],
                "y": [per.get(m) for m in models],
                "marker": {"color": colors.get(code, "#3b6fb6")},
                "hovertemplate": "%{x}: %{y:+.1f} points<extra>%{fullData.name}</extra>",
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            "Accuracy gained from the image (percentage points)",
            series=len(traces),
            barmode="group",
            height=340,
            xaxis={"type": "category", "automargin": True},
            yaxis={"zeroline": True, "title": {"text": "points"}},
        ),
    }


OUTPUT_TOKENS = "output_tokens"
"""The run metric of mean completion tokens per answered row (the x of `tokens_figure`)."""


def _whiskers(m: MetricValue, scale: float) -> tuple[float, float]:
    """(plus, minus) lengths of `m`'s interval around its value, on `scale`."""
    if m.value is None or m.low is None or m.high is None:
        return 0.0, 0.0
    return scale * (m.high - m.value), scale * (m.value - m.low)


def tokens_figure(
    rows: Sequence[tuple[str, str, LeaderboardRow]],
    colors: Mapping[str, str],
) -> Figure | None:
    """Accuracy (%) with its 95% CI against mean output tokens per answer, one point per entry.

    What thinking costs and buys: a model with thinking on and the same checkpoint with it off
    are two points, right of and above (or not) each other. The tokens are the run metric
    `OUTPUT_TOKENS`, read from the results as they are; nothing is computed here.

    Args:
        rows: ``(name, entry label, row)``, one per model and setting.
        colors: Entry label → color.

    Returns:
        The figure, or None when no entry has both an accuracy and `OUTPUT_TOKENS` (runs
        whose results do not carry the metric show no such chart).

    """
    traces: list[dict[str, Any]] = []
    xs: list[float] = []
    for name, label, row in rows:
        acc = row.metrics.get("accuracy")
        tok = row.metrics.get(OUTPUT_TOKENS)
        if acc is None or tok is None:
            continue
        x, y = _finite(tok.value), _finite(acc.value)
        if x is None or y is None:
            continue
        xs.append(x)
        y_plus, y_minus = _whiskers(acc, 100)
        x_plus, x_minus = _whiskers(tok, 1)
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": esc(name),
                "visible": _shown(len(traces)),
                "x": [x],
                "y": [100 * y],
                "marker": {"color": colors.get(label, "#7f7f7f"), "size": 11},
                "error_y": {"type": "data", "array": [y_plus], "arrayminus": [y_minus],
                            "visible": True},
                "error_x": {"type": "data", "array": [x_plus], "arrayminus": [x_minus],
                            "visible": True, "thickness": 1},
                "hovertemplate": "%{fullData.name}: %{y:.1f}% at %{x:.0f} tokens<extra></extra>",
            }
        )  # fmt: skip
    if not traces:
        return None
    xaxis: dict[str, Any] = {
        "title": {"text": "mean output tokens per answer"},
        "rangemode": "tozero",
    }
    if min(xs) > 0 and max(xs) / min(xs) > 20:
        # Thinking and non-thinking answers differ by orders of magnitude: a linear axis would
        # crowd the short ones against zero.
        xaxis = {"title": xaxis["title"], "type": "log"}
    return {
        "data": traces,
        "layout": _layout(
            "Accuracy against output tokens (95% CI)",
            series=len(traces),
            height=380,
            xaxis=xaxis,
            yaxis={"range": [0, 100], "title": {"text": "accuracy (%)"}},
            showlegend=True,
        ),
    }
