"""Reports built from run results (read-only over the layers below).

`Results` is what a run's ``results.json`` is a dump of (typed, versioned); `build_results`
makes it, `write_results` writes results.json and results.md, `load_results` reads a file back
(migrating an older version). The cross-run report (`lmmprobe report`) is an HTML page,
Markdown, CSV or JSON built from `ReportTables`.
"""

from lmmprobe.report._analysis import ReportTables, build_tables
from lmmprobe.report._collect import ReportData, ReportError, load_report_data
from lmmprobe.report.html import (
    REPORT_FORMATS,
    ReportFormat,
    build_report,
    render_html,
    write_report,
)
from lmmprobe.report.model import (
    FORMAT_VERSION,
    DataSummary,
    Manifest,
    ModelResults,
    ModelStats,
    QuestionTypeSensitivity,
    Results,
    ResultsFormatError,
    Sensitivity,
    load_results,
    results_from_dict,
)
from lmmprobe.report.results import build_results, format_metric, render_markdown, write_results
from lmmprobe.report.tables import render_tables

__all__ = [
    "FORMAT_VERSION",
    "REPORT_FORMATS",
    "DataSummary",
    "Manifest",
    "ModelResults",
    "ModelStats",
    "QuestionTypeSensitivity",
    "ReportData",
    "ReportError",
    "ReportFormat",
    "ReportTables",
    "Results",
    "ResultsFormatError",
    "Sensitivity",
    "build_report",
    "build_results",
    "build_tables",
    "format_metric",
    "load_report_data",
    "load_results",
    "render_html",
    "render_markdown",
    "render_tables",
    "results_from_dict",
    "write_report",
    "write_results",
]
