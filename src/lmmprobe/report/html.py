"""The self-contained HTML report: one file, plotly embedded, readable offline.

It gathers the views the research systems lmmprobe follows use to present results: a leaderboard
with confidence intervals (HELM-style), the runs' ``--by`` breakdowns (groups × models), scores
per category of HEMM's task dimensions (Liang et al., 2024; lmmprobe's definitions or, with
``definitions="hemm"``, HEMM's released code), Dysca's per-scenario radar charts and sensitivity
metrics (Zhang et al., 2024, figure 7 and section 4), ReForm-Eval's instability (Li et al., 2023),
the blind-setting gap, APEx campaign reports (Conti et al., 2024) and a sample browser with every
model's raw answer. With model cards it adds paired t-tests between model groups, paired as HEMM
pairs them; with runs on different data, Dysca's rank agreement between benchmarks (Spearman's
rho, Kendall's tau).

Safety: text from datasets and models is untrusted. Markup goes through jinja2's autoescape;
the data the page's script reads sits in one ``application/json`` script element serialized by
`lmmprobe.report._embed.script_json` and is shown with ``textContent``; a Content-Security-Policy
allows only this file's own scripts (by nonce), so even a missed escape could not run a script,
and no fetch of any kind can leave the page.
"""

from __future__ import annotations

import importlib
import importlib.resources
import logging
import secrets
import time
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lmmprobe.metrics import metric_digits
from lmmprobe.report._browser import THUMB_PX, browser_payload
from lmmprobe.report._build_tables import (
    ALPHA,
    DEFINITIONS_PAGE,
    REPORT_DEFINITIONS,
    UNDEFINED,
    ReportDefinitions,
    ReportTables,
    build_tables,
    definitions_sentence,
)
from lmmprobe.report._collect import ReportData, load_report_data
from lmmprobe.report._embed import inline_script, script_json
from lmmprobe.report._format import SMALL_N_NOTE, format_metric, n_cell, num, pval, stat
from lmmprobe.report._view import View, build_view
from lmmprobe.report.rows import TTestRow

if TYPE_CHECKING:
    from lmmprobe.holistic import ModelCard

log = logging.getLogger(__name__)

ReportFormat = Literal["html", "md", "csv", "json"]
REPORT_FORMATS: tuple[str, ...] = ("html", "md", "csv", "json")


class MissingDependency(ImportError):
    """An optional package the HTML report needs (plotly, jinja2) is not installed."""


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"the HTML report needs {module}: pip install 'lmmprobe[report]'"
        ) from exc


@cache
def _plotly_js() -> str:
    offline = _require("plotly.offline")
    return inline_script(str(offline.get_plotlyjs()))


def _asset(name: str) -> str:
    return (importlib.resources.files("lmmprobe.report") / "templates" / name).read_text(
        encoding="utf-8"
    )


def _count(value: Any) -> str:
    if value is None:
        return "-"
    for size, suffix in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return str(value)


def _dimension_tests(tables: ReportTables) -> tuple[dict[str, list[TTestRow]], dict[str, str]]:
    """Category t-tests by dimension, and why a dimension has none."""
    tests: dict[str, list[TTestRow]] = {}
    for t in tables.category_tests:
        tests.setdefault(t.dimension, []).append(t)
    cats: dict[str, set[str]] = {}
    for row in tables.dimensions:
        cats.setdefault(row.dimension, set()).add(row.category)
    notes = {}
    for dim, found in cats.items():
        if dim not in tests:
            notes[dim] = (
                f"No t-test: every task of these runs is in one category ({next(iter(found))})."
                if len(found) < 2
                else "No t-test: fewer than two models (with images) scored in two categories."
            )
    return tests, notes


def _definitions_markup(tables: ReportTables) -> Any:
    """`definitions_sentence` as markup: escaped, the option and the page's path as code."""
    markupsafe = _require("markupsafe")
    html = str(markupsafe.escape(definitions_sentence(tables.definitions)))
    # Our own fixed sentence, escaped above; only these literal tokens gain <code> tags.
    for token in ("--definitions hemm", "--definitions lmmprobe", DEFINITIONS_PAGE):
        html = html.replace(token, f"<code>{token}</code>")
    return markupsafe.Markup(html)


def _apex_blocks(dirs: Sequence[Path]) -> list[dict[str, Any]]:
    if not dirs:
        return []
    Markup = _require("markupsafe").Markup
    try:
        module = importlib.import_module("lmmprobe.report.apex_section")
        render = module.apex_section
    except (ImportError, AttributeError) as exc:
        note = f"APEx report found; rendering it needs lmmprobe.report.apex_section ({exc})"
        return [{"path": str(d), "html": None, "note": note} for d in dirs]
    blocks = []
    for d in dirs:
        try:
            # The APEx fragment escapes its own text (its contract); it is inserted as markup.
            html = Markup(str(render(Path(d))))
            blocks.append({"path": str(d), "html": html, "note": None})
        except Exception as exc:  # one broken campaign must not sink the whole report
            log.warning("APEx report %s could not be rendered: %s", d, exc)
            blocks.append({"path": str(d), "html": None, "note": f"could not render: {exc}"})
    return blocks


def _sections(
    tables: ReportTables, view: View, browser: dict[str, Any], apex: list[Any]
) -> list[tuple[str, str]]:
    """The page's sections that have something to show, as (id, nav title), in page order."""
    present = [
        ("runs", "Runs", bool(tables.runs)),
        ("leaderboard", "Leaderboards", any(b.rows for b in view.boards)),
        (
            "breakdowns",
            "Breakdowns",
            any(b.breakdowns for b in view.boards) or tables.breakdowns_note is not None,
        ),
        ("agreement", "Agreement", bool(tables.rank_agreement or tables.agreement_note)),
        ("dimensions", "Dimensions", bool(tables.dimensions)),
        ("cards", "Model cards", tables.cards_source is not None),
        ("radar", "Scenarios", any(b.radars for b in view.boards)),
        ("heatmap", "Subtasks", any(b.heatmap for b in view.boards)),
        ("subtask-dimensions", "Subtask dimensions", bool(tables.dimension_accuracy)),
        ("sensitivity", "Sensitivity", bool(tables.sensitivity)),
        ("blind", "Blind gaps", bool(tables.blind_gaps)),
        ("apex", "APEx", bool(apex)),
        ("samples", "Samples", bool(browser["items"])),
    ]
    return [(sid, title) for sid, title, shown in present if shown]


def render_html(
    data: ReportData,
    *,
    title: str | None = None,
    thumb_px: int = THUMB_PX,
    definitions: ReportDefinitions = "lmmprobe",
) -> str:
    """Render a report as one self-contained HTML page.

    Args:
        data: Runs and samples from `load_report_data`.
        title: Page title; by default names the runs.
        thumb_px: Longest side of sample thumbnails.
        definitions: ``"lmmprobe"`` (default) or ``"hemm"``: whose normalization, dimension
            means and t-test inputs the dimension section uses (`build_tables`).

    Returns:
        The page: plotly.js, the data and the page's script are inline; nothing is fetched.

    Raises:
        MissingDependency: plotly or jinja2 is not installed.

    """
    jinja2 = _require("jinja2")
    Markup = _require("markupsafe").Markup
    from lmmprobe._version import __version__

    tables = build_tables(data, definitions=definitions)
    view = build_view(data, tables)
    view_labels = view.labels
    browser = browser_payload(
        data,
        max_px=thumb_px,
        names=view_labels.entry,
        data_names={spec: f"{k.code} {spec}" for spec, k in view_labels.datasets.items()},
    )
    # Thumbnails that failed to load add a warning after the tables were built.
    tables.warnings = list(data.warnings)
    figures = view.figures
    category_tests, dim_test_note = _dimension_tests(tables)
    from lmmprobe.holistic import MODEL_DIMENSIONS
    from lmmprobe.report.tables import is_nan, num_or_undefined

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("lmmprobe.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    delta_scenarios: dict[str, None] = {}
    for row in tables.sensitivity:
        delta_scenarios.update(dict.fromkeys(row.scenario_deltas))
    gap_subtasks: dict[str, None] = {}
    for gap in tables.blind_gaps:
        gap_subtasks.update(dict.fromkeys(gap.by_subtask))
    payload = {
        "figures": figures,
        "browser": browser,
    }
    apex = _apex_blocks(data.apex_dirs)
    runs = ", ".join(r.run_id for r in tables.runs) or "APEx campaigns"
    if len(tables.runs) > 2:  # a dozen run ids make a title nobody reads
        runs = f"{len(tables.runs)} runs on {len(view_labels.datasets)} data spec(s)"
    return str(
        template.render(
            title=title or f"lmmprobe report: {runs}",
            version=__version__,
            generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            nonce=secrets.token_urlsafe(18),
            tables=tables,
            figures=figures,
            dimension_ids=view.dimension_ids,
            view=view,
            labels=view_labels,
            sections=_sections(tables, view, browser, apex),
            delta_scenarios=list(delta_scenarios),
            gap_subtasks=list(gap_subtasks),
            apex=apex,
            fmt_metric=lambda m, ci=False, name="": format_metric(
                m, ci=ci, digits=metric_digits(name) if name else 3
            ),
            category_tests=category_tests,
            dim_test_note=dim_test_note,
            card_fields=MODEL_DIMENSIONS,
            alpha=ALPHA,
            num=num,
            dnum=num_or_undefined,
            is_nan=is_nan,
            undefined=UNDEFINED,
            definitions_text=_definitions_markup(tables),
            signed=lambda v: num(v, 1, signed=True),
            n_cell=n_cell,
            small_n_note=SMALL_N_NOTE,
            stat=stat,
            pval=pval,
            count=_count,
            css=Markup(_asset("report.css")),
            plotly_js=Markup(_plotly_js()),
            data_json=Markup(script_json(payload)),
            report_js=Markup(inline_script(_asset("report.js"))),
        )
    )


def build_report(
    refs: Sequence[str | Path],
    *,
    fmt: ReportFormat = "html",
    db: str | Path | None = None,
    title: str | None = None,
    cards: str | Path | Mapping[str, ModelCard] | None = None,
    definitions: ReportDefinitions = "lmmprobe",
) -> str:
    """Read runs and render a report in one format.

    Args:
        refs: Run ids, prefixes, ``latest``, run folders or APEx campaign folders.
        fmt: ``html`` (self-contained page), ``md``, ``csv`` (one tidy table) or ``json``.
        db: Store to look run ids up in (default ``./lmmprobe-runs/lmmprobe.db``).
        title: Page title (HTML and Markdown).
        cards: Model cards (a YAML/JSON file or cards by model spec): adds each model's card
            and the t-tests between model groups.
        definitions: ``"lmmprobe"`` (default: a task every model aces counts 1.0, the "all"
            row pools every model-task score with the n - 1 SD) or ``"hemm"`` (HEMM's
            released code: missing scores count 0, such a task is undefined, the "all" row is
            the mean of per-model means with ``np.std``); see `definitions_sentence`.

    Returns:
        The report text.

    Raises:
        ReportError: A reference names no run or campaign, or the card file is invalid.
        ValueError: Unknown format or definitions.
        MissingDependency: plotly or jinja2 is missing (HTML only).

    """
    from lmmprobe.report.tables import render_tables

    if fmt not in REPORT_FORMATS:
        raise ValueError(f"report format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")
    if definitions not in REPORT_DEFINITIONS:
        raise ValueError(
            f"definitions must be one of {', '.join(REPORT_DEFINITIONS)}, not {definitions!r}"
        )
    data = load_report_data(refs, db=db, samples=fmt == "html", cards=cards)
    if fmt == "html":
        return render_html(data, title=title, definitions=definitions)
    return render_tables(build_tables(data, definitions=definitions), fmt, title=title)


def write_report(
    refs: Sequence[str | Path],
    out: str | Path,
    *,
    fmt: ReportFormat = "html",
    db: str | Path | None = None,
    title: str | None = None,
    cards: str | Path | Mapping[str, ModelCard] | None = None,
    definitions: ReportDefinitions = "lmmprobe",
) -> Path:
    """Render a report and write it to `out` (parent folders created); return the path.

    Args:
        refs: Run ids, prefixes, ``latest``, run folders or APEx campaign folders.
        out: File to write.
        fmt: ``html``, ``md``, ``csv`` or ``json``.
        db: Store to look run ids up in.
        title: Page title (HTML and Markdown).
        cards: Model cards (a YAML/JSON file or cards by model spec).
        definitions: ``"lmmprobe"`` (default) or ``"hemm"`` (see `build_report`).

    Raises:
        ReportError: A reference names no run or campaign, or the card file is invalid.
        ValueError: Unknown format or definitions.

    """
    text = build_report(refs, fmt=fmt, db=db, title=title, cards=cards, definitions=definitions)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="" if fmt == "csv" else None)
    return path
