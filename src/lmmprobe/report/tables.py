"""A report's tables as Markdown, CSV or JSON (``lmmprobe report --format md|csv|json``).

The numbers are the HTML report's (see `lmmprobe.report._build_tables`): the leaderboard with 95%
bootstrap intervals, the runs' ``--by`` breakdowns (every group: the HTML page shows the largest),
per-subtask and per-scenario accuracy (Dysca figure 7), Dysca's SQ/SC and
scenario deltas, ReForm-Eval's instability, blind-setting gaps, means along HEMM's task
dimensions with paired t-tests (between task categories, and between model groups of the model
cards; lmmprobe's or HEMM's definitions, `definitions_sentence`), and the rank agreement
(Spearman, Kendall) between runs on different data. A value HEMM's definitions leave undefined
(NaN) shows as an en dash in Markdown with a note saying why, an empty cell in CSV, null in JSON.
Markdown is for reading, CSV is one tidy table (one value per row) for spreadsheets and pandas
(text cells that would start a formula get a leading ``'``: `lmmprobe._inert.inert_csv`), JSON
holds every table as it is.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from lmmprobe._inert import inert_csv
from lmmprobe.metrics import metric_digits
from lmmprobe.metrics.outcome import ACCURACY_N
from lmmprobe.report._build_tables import (
    ALPHA,
    UNDEFINED,
    ReportTables,
    breakdown_tables,
    build_tables,
    definitions_sentence,
)
from lmmprobe.report._format import SMALL_N, SMALL_N_NOTE, format_metric, n_cell, num, pval, stat
from lmmprobe.report._format import md_cell as _cell
from lmmprobe.report.model import SENSITIVITY_HEADERS, SENSITIVITY_SCALES
from lmmprobe.report.rows import GroupTestRow, TTestRow

__all__ = ["CSV_COLUMNS", "ReportTables", "build_tables", "num_or_undefined", "render_tables"]

CSV_COLUMNS: tuple[str, ...] = (
    "section",
    "model",
    "run_id",
    "scenario",
    "subtask",
    "dimension",
    "category",
    "metric",
    "value",
    "low",
    "high",
    "n",
    "by",
    "group",
)
"""Columns of the CSV format; cells that do not apply to a row are empty (``by`` and ``group``:
a ``--by`` breakdown's key and group)."""

JSON_FORMAT_VERSION = 2
"""Version of the JSON format (2: typed rows; model cards list their groups under ``groups``)."""


def is_nan(value: float | None) -> bool:
    """Whether `value` is a NaN (None is not: it means absent, not undefined)."""
    return value is not None and math.isnan(float(value))


def num_or_undefined(value: float | None, digits: int = 3) -> str:
    """`num`, but a NaN (undefined under HEMM's definitions) as `UNDEFINED`, never ``nan``."""
    return UNDEFINED if is_nan(value) else num(value, digits)


def _tests(rows: Sequence[TTestRow]) -> list[str]:
    groups = any(isinstance(t, GroupTestRow) for t in rows)
    head = ["dimension", "A", "B"] + (["models A", "models B"] if groups else [])
    head += ["mean A", "mean B", "A - B", "t", "p", "n", f"significant at {ALPHA}"]
    body = []
    for t in rows:
        row = [_cell(t.dimension), _cell(t.a), _cell(t.b)]
        if isinstance(t, GroupTestRow):
            row += [_cell(", ".join(t.models_a)), _cell(", ".join(t.models_b))]
            if t.note:
                body.append([*row, *["-"] * 6, _cell(t.note)])
                continue
        if is_nan(t.mean_diff):  # a NaN input (HEMM's undefined task): nothing to test
            body.append([*row, *[UNDEFINED] * 5, str(t.n), UNDEFINED])
            continue
        row += [num(v, 3) for v in (t.mean_a, t.mean_b, t.mean_diff)]
        row += [stat(t.statistic), pval(t.p_value), str(t.n), "yes" if t.significant else "no"]
        body.append(row)
    return _table(head, body)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


SENSITIVITY_KEYS: tuple[str, ...] = ("S_tf", "S_mc", "TFSQ", "MCSQ", "SQ", "SC")
"""Dysca's sensitivity columns, in table order (their scales: `SENSITIVITY_SCALES`)."""


def _markdown(t: ReportTables, title: str | None) -> str:
    runs = ", ".join(r.run_id for r in t.runs) or "APEx campaigns"
    out = [f"# {_cell(title or f'lmmprobe report: {runs}')}", ""]
    if t.warnings:
        out += ["## Notes", ""] + [f"- {_cell(w)}" for w in t.warnings] + [""]
    out += ["## Runs", ""]
    out += _table(
        ["run", "status", "data", "setting", "models"],
        [
            [
                _cell(r.run_id),
                _cell(r.status),
                f"`{_cell(r.data)}`",
                # An imported run says where its answers came from (its other settings stay
                # in the HTML report).
                _cell(
                    "; ".join(
                        ["blind" if r.blind else "with images"]
                        + [w for w in r.setting if w.startswith("imported from")]
                    )
                ),
                _cell(", ".join(r.models)),
            ]
            for r in t.runs
        ],
    )
    out += [
        "",
        "## Leaderboard",
        "",
        "Fractions with 95% bootstrap confidence intervals (accuracy); errors are left out of "
        "accuracy and counted in error_rate, unparsed and truncated answers count as wrong.",
        "",
    ]
    # One table per data spec: runs on different data are not ranked together, and a blind
    # run is ranked among blind runs, after the runs with images.
    data_of = {r.run_id: r.data for r in t.runs}
    specs = list(dict.fromkeys(data_of.get(r.run_id, "") for r in t.leaderboard))
    for spec in specs:
        rows = [x for x in t.leaderboard if data_of.get(x.run_id, "") == spec]
        if len(specs) > 1:
            out += [f"### Data `{_cell(spec)}`", ""]
        body = []
        for blind in (False, True):
            for i, row in enumerate((r for r in rows if r.blind == blind), 1):
                body.append(
                    [
                        f"{i} (blind)" if blind else str(i),
                        _cell(row.label),
                        _cell(row.run_id),
                        str(row.n),
                        str(row.judged),
                        *(
                            format_metric(
                                row.metrics.get(m), ci=m == "accuracy", digits=metric_digits(m)
                            )
                            for m in t.metric_names
                        ),
                    ]
                )
        out += [*_table(["#", "model", "run", "rows", ACCURACY_N, *t.metric_names], body), ""]
    out += _breakdowns_markdown(t)
    if t.rank_agreement or t.agreement_note:
        out += ["", "## Agreement between benchmarks (rank correlation of model scores)", ""]
        if t.agreement_note:
            out += [_cell(t.agreement_note), ""]
    if t.rank_agreement:
        head = ["run A", "data A", "run B", "data B", "metric", "n"]
        head += ["Spearman rho", "p", "Kendall tau", "p", "models"]
        out += _table(
            head,
            [
                [
                    _cell(r.run_a),
                    f"`{_cell(r.data_a)}`",
                    _cell(r.run_b),
                    f"`{_cell(r.data_b)}`",
                    _cell(r.metric),
                    str(r.n),
                    stat(r.spearman_rho, 3),
                    pval(r.spearman_p),
                    stat(r.kendall_tau, 3),
                    pval(r.kendall_p),
                    _cell(", ".join(r.models)),
                ]
                for r in t.rank_agreement
            ],
        )
    out += ["", "## Per-dimension scores (HEMM's task dimensions, normalized)", ""]
    out += [_cell(definitions_sentence(t.definitions)), ""]
    if t.dimensions_note:
        out += [_cell(t.dimensions_note), ""]
    out += [f"- {_cell(n)}" for n in t.dimension_notes] + ([""] if t.dimension_notes else [])
    if t.dimensions:
        out += _table(
            ["dimension", "category", "model", "mean", "sd", "n"],
            [
                [
                    _cell(d.dimension),
                    _cell(d.category),
                    _cell(d.model),
                    num_or_undefined(d.mean),
                    num_or_undefined(d.sd),
                    _cell(d.n),
                ]
                for d in t.dimensions
            ],
        )
    if t.category_tests:
        out += ["", "### Paired t-tests between task categories (pairs: models)", ""]
        out += _tests(t.category_tests)
    if t.cards_source is not None:
        from lmmprobe.holistic import MODEL_DIMENSIONS

        out += ["", "## Model cards (HEMM)", "", f"Cards from `{_cell(t.cards_source)}`.", ""]
        if t.cards:
            out += _table(
                ["model", *MODEL_DIMENSIONS, "parameter count", "notes"],
                [
                    [
                        _cell(c.model),
                        *(_cell(c.groups.get(d)) for d in MODEL_DIMENSIONS),
                        _cell(c.parameter_count),
                        _cell(c.notes or "-"),
                    ]
                    for c in t.cards
                ],
            )
        if t.group_tests:
            out += ["", "### Paired t-tests between model groups (pairs: tasks)", ""]
            out += _tests(t.group_tests)
        if t.groups_note:
            out += ["", _cell(t.groups_note)]
    if t.subtask_accuracy:
        out += ["", "## Accuracy per subtask (%)", ""]
        out += _table(
            ["model", *t.subtasks],
            [
                [
                    _cell(label),
                    *(num(c.value if (c := per.get(s)) else None, 1) for s in t.subtasks),
                ]
                for label, per in t.subtask_accuracy.items()
            ],
        )
        if t.dimension_accuracy:
            dims = list(dict.fromkeys(t.subtask_dimensions.values()))
            out += ["", "## Accuracy per dimension (%, mean of its subtasks)", ""]
            out += _table(
                ["model", *dims],
                [
                    [_cell(label), *(num(means.get(d), 1) for d in dims)]
                    for label, means in t.dimension_accuracy.items()
                ],
            )
            out += ["", "Subtasks by dimension: " + "; ".join(
                f"{_cell(d)}: " + ", ".join(
                    _cell(s) for s, sd in t.subtask_dimensions.items() if sd == d
                )
                for d in dims
            )]  # fmt: skip
            if t.dimension_instability:
                # ReForm-Eval's instability next to its accuracy: generation and likelihood
                # runs are rows of their own ("model [likelihood, repeats 5]").
                out += ["", "## Instability per dimension (nats, mean of its datasets)", ""]
                out += _table(
                    ["model", *dims],
                    [
                        [_cell(label), *(num(means.get(d), 3) for d in dims)]
                        for label, means in t.dimension_instability.items()
                    ],
                )
                subs = [
                    s for s in t.subtasks if any(s in p for p in t.subtask_instability.values())
                ]
                out += ["", "### Instability per dataset (nats)", ""]
                out += _table(
                    ["model", *subs],
                    [
                        [_cell(label), *(num(per.get(s), 3) for s in subs)]
                        for label, per in t.subtask_instability.items()
                    ],
                )
        for scenario, per_model in t.scenario_accuracy.items():
            if scenario == "all" and len(t.scenarios) == 1:
                continue  # the same numbers as the table above
            out += ["", f"### Scenario {_cell(scenario)} (%)", ""]
            out += _table(
                ["model", *t.subtasks],
                [
                    [_cell(label), *(num(accs.get(s), 1) for s in t.subtasks)]
                    for label, accs in per_model.items()
                ],
            )
    if t.sensitivity:
        scen: dict[str, None] = {}
        for r in t.sensitivity:
            scen.update(dict.fromkeys(r.scenario_deltas))
        out += ["", f"## Sensitivity (Dysca; {SENSITIVITY_SCALES}; instability in nats)", ""]
        out += _table(
            [
                "model",
                *(SENSITIVITY_HEADERS[k] for k in SENSITIVITY_KEYS),
                "instability",
                *(f"{s} vs clean" for s in scen),
            ],
            [
                [
                    _cell(r.label),
                    *(num(getattr(r, k), 1) for k in SENSITIVITY_KEYS),
                    num(r.instability, 3),
                    *(num(r.scenario_deltas.get(s), 1, signed=True) for s in scen),
                ]
                for r in t.sensitivity
            ],
        )
    if t.blind_gaps:
        out += ["", "## Blind-setting gaps (points: with images minus without)", ""]
        out += _table(
            ["model", "data", "with images %", "blind %", "gap"],
            [
                [
                    _cell(g.model),
                    f"`{_cell(g.data)}`",
                    num(g.normal_accuracy, 1),
                    num(g.blind_accuracy, 1),
                    num(g.gap, 1, signed=True),
                ]
                for g in t.blind_gaps
            ],
        )
    if t.apex:
        out += ["", "## APEx campaigns", ""]
        for a in t.apex:
            q = f": {_cell(a.query)}" if a.query else ""
            out.append(f"- `{_cell(a.path)}`, {a.experiments} experiment(s){q}")
    return "\n".join(out) + "\n"


def _breakdowns_markdown(t: ReportTables) -> list[str]:
    """The ``--by`` breakdowns: per data spec and key, groups × models, every group."""
    found = breakdown_tables(t)
    if not found and t.breakdowns_note is None:
        return []
    out = [
        "",
        "## Breakdowns (--by)",
        "",
        "As each run's results hold them: a row per group (a row whose value is a list counts "
        "in the group of each item), a column per model; accuracy with its 95% interval (else "
        "the first headline metric the groups have) and its n (accuracy's n: rows scored right "
        "or wrong; rows for a metric of every row). Each run's results.md has every metric.",
    ]
    if t.breakdowns_note:
        out += ["", _cell(t.breakdowns_note)]
    several = len({b.data for b in found}) > 1
    for b in found:
        where = f" (data `{_cell(b.data)}`)" if several else ""
        out += ["", f"### {_cell(b.metric)} by {_cell(b.key)}{where}", ""]
        shared = all(b.shared_count(g) is not None for g in b.groups)
        count = ACCURACY_N if b.judged else "rows"
        ci = b.metric == "accuracy"
        body = []
        for g in b.groups:
            row = [_cell(g)] + ([n_cell(b.shared_count(g) or 0)] if shared else [])
            for label in b.labels:
                n = b.count(g, label)
                value = format_metric(b.value(g, label), ci=ci, digits=metric_digits(b.metric))
                row.append("-" if n is None else value if shared else f"{value}, n={n_cell(n)}")
            body.append(row)
        head = [b.key, *([count] if shared else []), *b.labels]
        out += _table(head, body)
        if any(0 < (b.count(g, lab) or 0) < SMALL_N for g in b.groups for lab in b.labels):
            # Escaped: a line starting "* " would render as a bullet, losing the mark.
            out += ["", "\\" + _cell(SMALL_N_NOTE)]
    return out


def _csv_rows(t: ReportTables) -> list[dict[str, Any]]:
    run_of = {r.label: r.run_id for r in t.leaderboard}
    rows: list[dict[str, Any]] = []

    def add(section: str, model: str, metric: str, value: Any, **extra: Any) -> None:
        rows.append(
            {"section": section, "model": model, "run_id": run_of.get(model, ""), "metric": metric}
            | {"value": value}
            | extra
        )

    for r in t.leaderboard:
        for name, m in r.metrics.items():
            add("leaderboard", r.label, name, m.value, low=m.low, high=m.high, n=m.n)
    for b in t.breakdowns:
        keyed = {"by": b.key, "group": b.group}
        add("breakdown", b.label, "rows", b.rows, **keyed)
        add("breakdown", b.label, "accuracy_n", b.judged, **keyed)
        for name, m in b.metrics.items():
            add("breakdown", b.label, name, m.value, low=m.low, high=m.high, n=m.n, **keyed)
    for label, per in t.subtask_accuracy.items():
        for sub, cell in per.items():
            add("subtask", label, "accuracy_pct", cell.value, subtask=sub, n=cell.n)
    for label, means in t.dimension_accuracy.items():
        for dim, value in means.items():
            add("subtask_dimension", label, "accuracy_pct", value, dimension=dim)
    for label, means in t.dimension_instability.items():
        for dim, value in means.items():
            add("subtask_dimension", label, "instability", value, dimension=dim)
    for label, unstable in t.subtask_instability.items():
        for sub, entropy in unstable.items():
            add("subtask", label, "instability", entropy, subtask=sub)
    for scenario, per_model in t.scenario_accuracy.items():
        for label, accs in per_model.items():
            for sub, value in accs.items():
                add("scenario", label, "accuracy_pct", value, scenario=scenario, subtask=sub)
    for sens in t.sensitivity:
        for key in (*SENSITIVITY_KEYS, "instability"):
            if getattr(sens, key) is not None:
                add("sensitivity", sens.label, key, getattr(sens, key))
        for scenario, delta in sens.scenario_deltas.items():
            add("sensitivity", sens.label, "delta_vs_clean_points", delta, scenario=scenario)
    for g in t.blind_gaps:
        add("blind_gap", g.normal, "gap_points", g.gap)
        for sub, gap in g.by_subtask.items():
            add("blind_gap", g.normal, "gap_points", gap, subtask=sub)
    if t.dimensions:
        add("dimension", "", "definitions", t.definitions)
    for d in t.dimensions:
        where = {"dimension": d.dimension, "category": d.category, "n": d.n}
        add("dimension", d.model, "normalized_mean", d.mean, **where)
        if d.sd is not None:
            add("dimension", d.model, "normalized_sd", d.sd, **where)
    for agree in t.rank_agreement:
        pair = f"{agree.run_a} vs {agree.run_b}"
        for key in ("spearman_rho", "spearman_p", "kendall_tau", "kendall_p"):
            rows.append(
                {"section": "rank_agreement", "run_id": pair, "metric": key}
                | {"value": getattr(agree, key), "subtask": agree.metric, "n": agree.n}
            )
    tests: list[tuple[str, TTestRow]] = [("category_ttest", r) for r in t.category_tests]
    tests += [("group_ttest", r) for r in t.group_tests]
    for section, test in tests:
        if isinstance(test, GroupTestRow) and test.note:
            continue  # a pair that could not be tested has no values to list
        where = {"dimension": test.dimension, "category": f"{test.a} vs {test.b}", "n": test.n}
        for key in ("mean_a", "mean_b", "mean_diff", "statistic", "p_value", "significant"):
            if getattr(test, key) is not None:
                rows.append(
                    {"section": section, "metric": key, "value": getattr(test, key)} | where
                )
    for c in t.cards:
        for dim, group in c.groups.items():
            if group is not None:
                add("model_card", c.model, "group", group, dimension=dim, category=group)
    return rows


def _is_nan_cell(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _csv(t: ReportTables) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), restval="")
    writer.writeheader()
    for row in _csv_rows(t):
        # None (absent) and NaN (undefined under HEMM's definitions) are both empty cells,
        # which pandas reads back as NaN; never the text "nan". Text (model names, labels from
        # data) that a spreadsheet would run as a formula is written inert; numbers stay numbers.
        writer.writerow(
            {k: ("" if v is None or _is_nan_cell(v) else inert_csv(v)) for k, v in row.items()}
        )
    return buf.getvalue()


def render_tables(tables: ReportTables, fmt: str, *, title: str | None = None) -> str:
    """Render a report's tables in a text format.

    Args:
        tables: From `build_tables`.
        fmt: ``md`` (Markdown tables), ``csv`` (one tidy table, columns `CSV_COLUMNS`) or
            ``json`` (every table, plus ``format`` and ``version`` fields).
        title: Heading of the Markdown report.

    Returns:
        The text.

    Raises:
        ValueError: Unknown format.

    """
    if fmt == "md":
        return _markdown(tables, title)
    if fmt == "csv":
        return _csv(tables)
    if fmt == "json":
        doc = {"format": "lmmprobe-report", "version": JSON_FORMAT_VERSION, **tables.to_dict()}
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    raise ValueError(f"table format must be md, csv or json, not {fmt!r}")
