"""A report's tables as Markdown, CSV or JSON (``lmmprobe report --format md|csv|json``).

The numbers are the HTML report's (see `lmmprobe.report._analysis`): the leaderboard with 95%
bootstrap intervals, per-subtask and per-scenario accuracy (Dysca figure 7), Dysca's SQ/SC and
scenario deltas, ReForm-Eval's instability, blind-setting gaps, HEMM's dimension means with its
paired t-tests (between task categories, and between model groups of the model cards), and the
rank agreement (Spearman, Kendall) between runs on different data.
Markdown is for reading, CSV is one tidy table (one value per row) for spreadsheets and pandas,
JSON holds every table as it is.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from lmmprobe.report._analysis import ALPHA, ReportTables, build_tables
from lmmprobe.report._embed import json_ready
from lmmprobe.report.results import format_metric

__all__ = ["CSV_COLUMNS", "ReportTables", "build_tables", "render_tables"]

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
)
"""Columns of the CSV format; cells that do not apply to a row are empty."""

JSON_FORMAT_VERSION = 1


def _cell(text: Any) -> str:
    # Dataset and model text is untrusted: keep it from breaking the table or injecting HTML
    # when the Markdown is rendered.
    s = "-" if text is None else str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("\n", " ")):
        s = s.replace(a, b)
    return s


def _num(value: Any, digits: int = 1, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{float(value):+.{digits}f}" if signed else f"{float(value):.{digits}f}"


def _stat(value: Any, digits: int = 2) -> str:
    # NaN: the paired differences do not vary; inf: they are all equal and non-zero.
    if value is None or math.isnan(float(value)):
        return "-"
    return f"{float(value):.{digits}f}" if math.isfinite(float(value)) else f"{float(value):+}"


def _p(value: Any) -> str:
    if value is None or math.isnan(float(value)):
        return "-"
    return "<0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def _tests(rows: list[dict[str, Any]], groups: bool = False) -> list[str]:
    head = ["dimension", "A", "B"] + (["models A", "models B"] if groups else [])
    head += ["mean A", "mean B", "A - B", "t", "p", "n", f"significant at {ALPHA}"]
    body = []
    for t in rows:
        row = [_cell(t["dimension"]), _cell(t["a"]), _cell(t["b"])]
        if groups:
            row += [_cell(", ".join(t["models_a"])), _cell(", ".join(t["models_b"]))]
        if t.get("note"):
            row += ["-"] * 6 + [_cell(t["note"])]
        else:
            row += [_num(t.get(k), 3) for k in ("mean_a", "mean_b", "mean_diff")]
            row += [_stat(t["statistic"]), _p(t["p_value"]), str(t["n"])]
            row.append("yes" if t["significant"] else "no")
        body.append(row)
    return _table(head, body)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _markdown(t: ReportTables, title: str | None) -> str:
    runs = ", ".join(r["run_id"] for r in t.runs) or "APEx campaigns"
    out = [f"# {_cell(title or f'lmmprobe report: {runs}')}", ""]
    if t.warnings:
        out += ["## Notes", ""] + [f"- {_cell(w)}" for w in t.warnings] + [""]
    out += ["## Runs", ""]
    out += _table(
        ["run", "status", "data", "setting", "models"],
        [
            [
                _cell(r["run_id"]),
                _cell(r["status"]),
                f"`{_cell(r['data'])}`",
                "blind" if r["blind"] else "with images",
                _cell(", ".join(r["models"])),
            ]
            for r in t.runs
        ],
    )
    out += [
        "",
        "## Leaderboard",
        "",
        "Fractions with 95% bootstrap confidence intervals (accuracy); errors are left out of "
        "accuracy and counted in error_rate, unparsed answers count as wrong.",
        "",
    ]
    out += _table(
        ["#", "model", "run", "n", *t.metric_names],
        [
            [
                str(i),
                _cell(r["label"]),
                _cell(r["run_id"]),
                str(r["n"]),
                *(format_metric(r["metrics"].get(m), ci=m == "accuracy") for m in t.metric_names),
            ]
            for i, r in enumerate(t.leaderboard, 1)
        ],
    )
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
                    _cell(r["run_a"]),
                    f"`{_cell(r['data_a'])}`",
                    _cell(r["run_b"]),
                    f"`{_cell(r['data_b'])}`",
                    _cell(r["metric"]),
                    str(r["n"]),
                    _stat(r["spearman_rho"], 3),
                    _p(r["spearman_p"]),
                    _stat(r["kendall_tau"], 3),
                    _p(r["kendall_p"]),
                    _cell(", ".join(r["models"])),
                ]
                for r in t.rank_agreement
            ],
        )
    out += ["", "## Per-dimension scores (HEMM, normalized)", ""]
    if t.dimensions_note:
        out += [_cell(t.dimensions_note), ""]
    if t.dimensions:
        out += _table(
            ["dimension", "category", "model", "mean", "sd", "n"],
            [
                [
                    _cell(d["dimension"]),
                    _cell(d["category"]),
                    _cell(d["model"]),
                    _num(d.get("mean"), 3),
                    _num(d.get("sd"), 3),
                    _cell(d.get("n")),
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
                        _cell(c["model"]),
                        *(_cell(c[d]) for d in MODEL_DIMENSIONS),
                        _cell(c["parameter_count"]),
                        _cell(c["notes"] or "-"),
                    ]
                    for c in t.cards
                ],
            )
        if t.group_tests:
            out += ["", "### Paired t-tests between model groups (pairs: tasks)", ""]
            out += _tests(t.group_tests, groups=True)
        if t.groups_note:
            out += ["", _cell(t.groups_note)]
    if t.subtask_accuracy:
        out += ["", "## Accuracy per subtask (%)", ""]
        out += _table(
            ["model", *t.subtasks],
            [
                [_cell(label), *(_num((per.get(s) or {}).get("value")) for s in t.subtasks)]
                for label, per in t.subtask_accuracy.items()
            ],
        )
        for scenario, per_model in t.scenario_accuracy.items():
            if scenario == "all" and len(t.scenarios) == 1:
                continue  # the same numbers as the table above
            out += ["", f"### Scenario {_cell(scenario)} (%)", ""]
            out += _table(
                ["model", *t.subtasks],
                [
                    [_cell(label), *(_num(accs.get(s)) for s in t.subtasks)]
                    for label, accs in per_model.items()
                ],
            )
    if t.sensitivity:
        scen: dict[str, None] = {}
        for r in t.sensitivity:
            scen.update(dict.fromkeys(r.get("scenario_deltas") or {}))
        out += ["", "## Sensitivity (Dysca, percent scale; instability in nats)", ""]
        keys = ["S_tf", "S_mc", "TFSQ", "MCSQ", "SQ", "SC"]
        out += _table(
            ["model", *keys, "instability", *(f"{s} vs clean" for s in scen)],
            [
                [
                    _cell(r["label"]),
                    *(_num(r.get(k)) for k in keys),
                    _num(r.get("instability"), 3),
                    *(_num((r.get("scenario_deltas") or {}).get(s), signed=True) for s in scen),
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
                    _cell(g["model"]),
                    f"`{_cell(g['data'])}`",
                    _num(g["normal_accuracy"]),
                    _num(g["blind_accuracy"]),
                    _num(g["gap"], signed=True),
                ]
                for g in t.blind_gaps
            ],
        )
    if t.apex:
        out += ["", "## APEx campaigns", ""]
        for a in t.apex:
            q = f": {_cell(a['query'])}" if a.get("query") else ""
            out.append(f"- `{_cell(a['path'])}`, {a['experiments']} experiment(s){q}")
    return "\n".join(out) + "\n"


def _csv_rows(t: ReportTables) -> list[dict[str, Any]]:
    run_of = {r["label"]: r["run_id"] for r in t.leaderboard}
    rows: list[dict[str, Any]] = []

    def add(section: str, model: str, metric: str, value: Any, **extra: Any) -> None:
        rows.append(
            {"section": section, "model": model, "run_id": run_of.get(model, ""), "metric": metric}
            | {"value": value}
            | extra
        )

    for r in t.leaderboard:
        for name, m in r["metrics"].items():
            if isinstance(m, dict):
                add("leaderboard", r["label"], name, m.get("value"), low=m.get("low"), high=m.get("high"), n=m.get("n"))  # fmt: skip
    for label, per in t.subtask_accuracy.items():
        for sub, cell in per.items():
            add("subtask", label, "accuracy_pct", cell["value"], subtask=sub, n=cell["n"])
    for scenario, per_model in t.scenario_accuracy.items():
        for label, accs in per_model.items():
            for sub, value in accs.items():
                add("scenario", label, "accuracy_pct", value, scenario=scenario, subtask=sub)
    for r in t.sensitivity:
        for key in ("S_tf", "S_mc", "TFSQ", "MCSQ", "SQ", "SC", "instability"):
            if r.get(key) is not None:
                add("sensitivity", r["label"], key, r[key])
        for scenario, delta in (r.get("scenario_deltas") or {}).items():
            add("sensitivity", r["label"], "delta_vs_clean_points", delta, scenario=scenario)
    for g in t.blind_gaps:
        add("blind_gap", g["normal"], "gap_points", g["gap"])
        for sub, gap in g["by_subtask"].items():
            add("blind_gap", g["normal"], "gap_points", gap, subtask=sub)
    for d in t.dimensions:
        add("dimension", str(d["model"]), "normalized_mean", d.get("mean"), dimension=d["dimension"], category=d["category"], n=d.get("n"))  # fmt: skip
        if d.get("sd") is not None:
            add("dimension", str(d["model"]), "normalized_sd", d["sd"], dimension=d["dimension"], category=d["category"], n=d.get("n"))  # fmt: skip
    for r in t.rank_agreement:
        pair = f"{r['run_a']} vs {r['run_b']}"
        for key in ("spearman_rho", "spearman_p", "kendall_tau", "kendall_p"):
            rows.append(
                {"section": "rank_agreement", "run_id": pair, "metric": key, "value": r[key]}
                | {"subtask": r["metric"], "n": r["n"]}
            )
    for section, tests in (("category_ttest", t.category_tests), ("group_ttest", t.group_tests)):
        for r in tests:
            if r.get("note"):
                continue  # a pair that could not be tested has no values to list
            where = {"dimension": r["dimension"], "category": f"{r['a']} vs {r['b']}", "n": r["n"]}
            for key in ("mean_a", "mean_b", "mean_diff", "statistic", "p_value", "significant"):
                if r.get(key) is not None:
                    rows.append({"section": section, "metric": key, "value": r[key]} | where)
    from lmmprobe.holistic import MODEL_DIMENSIONS

    for c in t.cards:
        for dim in MODEL_DIMENSIONS:
            if c[dim] is not None:
                add("model_card", c["model"], "group", c[dim], dimension=dim, category=c[dim])
    return rows


def _csv(t: ReportTables) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), restval="")
    writer.writeheader()
    for row in _csv_rows(t):
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
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
        return json.dumps(json_ready(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    raise ValueError(f"table format must be md, csv or json, not {fmt!r}")
