"""``lmmprobe report``: one self-contained HTML page (or Markdown, CSV, JSON) from runs."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer
from rich import filesize

from lmmprobe._inert import inert
from lmmprobe.cli._common import (
    DbOption,
    err_console,
    fail,
    said_when_interrupted,
    write_document,
    write_out_file,
)
from lmmprobe.schema.text import json_escaped, shown_path

_FORMATS = ("html", "md", "csv", "json")


# The report is written whole or not at all (`write_out_file`): an earlier file stays.
@said_when_interrupted(
    "no report was written (a file already at its path is as it was); the runs in the store "
    "are unchanged, and the same command writes the report"
)
def report(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="RUN...",
            help="Run ids, unique prefixes, 'latest', run folders (with results.json) or APEx "
            "campaign folders (with report.json) [default: latest].",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="File to write [default: report.html; stdout for md/csv/json]."
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="html, md, csv or json.")] = "html",
    title: Annotated[str | None, typer.Option(help="Report title.")] = None,
    db: DbOption = None,
    cards: Annotated[
        Path | None,
        typer.Option(
            "--cards",
            help="Model cards (YAML or JSON: model spec -> size, modality processing, training "
            "type, data, instruction tuning) to show and compare model groups with t-tests.",
        ),
    ] = None,
    definitions: Annotated[
        str,
        typer.Option(
            "--definitions",
            help="Normalization, dimension means and t-test inputs: 'lmmprobe' (a task every "
            "model aces counts 1.0; the 'all' row pools every model-task score, SD with n-1) "
            "or 'hemm' (HEMM's released code: missing scores count 0, such a task is undefined, "
            "the 'all' row is the mean of per-model means, SD with n). See docs/definitions.md.",
        ),
    ] = "lmmprobe",
) -> None:
    """Build a report of one or more runs: leaderboard, charts, sensitivity, sample browser.

    With several runs on different data it compares their model rankings (Spearman, Kendall);
    with --cards it adds each model's card and t-tests between model groups (HEMM's pairing).
    """
    from lmmprobe.report import REPORT_DEFINITIONS, ReportError, build_report
    from lmmprobe.report.html import MissingDependency

    if fmt not in _FORMATS:
        fail(f"--format must be one of {', '.join(_FORMATS)}, not {fmt!r}")
    if definitions not in REPORT_DEFINITIONS:
        fail(f"--definitions must be one of {', '.join(REPORT_DEFINITIONS)}, not {definitions!r}")
    try:
        text = build_report(
            runs or ["latest"],
            fmt=fmt,  # type: ignore[arg-type]
            db=db,
            title=title,
            cards=cards,
            definitions=definitions,  # type: ignore[arg-type]
        )
    except (ReportError, MissingDependency) as exc:
        fail(exc)
    if fmt == "md":  # read in terminals, as results.md: control characters shown escaped
        text = inert(text)
    # A file name that is not UTF-8 (the data's): its bytes escaped, so the text can be written.
    text = json_escaped(text) if fmt == "json" else shown_path(text)
    if out is None and fmt != "html":
        write_document(text, json_text=fmt == "json")
        return
    path = out or Path("report.html")
    with contextlib.suppress(OSError):  # a folder that cannot be made: the write says so
        path.parent.mkdir(parents=True, exist_ok=True)
    write_out_file(path, lambda f: f.write(text), db=db, newline="" if fmt == "csv" else None)
    # rich's decimal units ("9.1 kB", "2.3 MB"): a CSV of a few kB read "(0.0 MB)".
    size = filesize.decimal(path.stat().st_size)
    err_console.print(f"wrote {fmt} report to {path} ({size})", highlight=False)
