"""Reports built from run results (read-only over the layers below)."""

from lmmprobe.report.results import build_results, format_metric, render_markdown, write_results

__all__ = ["build_results", "format_metric", "render_markdown", "write_results"]

# The cross-run report (`lmmprobe report`): HTML page, Markdown, CSV, JSON.
from lmmprobe.report._analysis import ReportTables, build_tables
from lmmprobe.report._collect import ReportData, ReportError, load_report_data
from lmmprobe.report.html import (
    REPORT_FORMATS,
    ReportFormat,
    build_report,
    render_html,
    write_report,
)
from lmmprobe.report.tables import render_tables

__all__ += [
    "REPORT_FORMATS",
    "ReportData",
    "ReportError",
    "ReportFormat",
    "ReportTables",
    "build_report",
    "build_tables",
    "load_report_data",
    "render_html",
    "render_tables",
    "write_report",
]
