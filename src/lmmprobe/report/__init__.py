"""Reports built from run results (read-only over the layers below).

`Results` is what a run's ``results.json`` is a dump of (typed, versioned); `build_results`
makes it, `write_results` writes results.json and results.md, `load_results` reads a file back
(migrating an older version). The cross-run report (`lmmprobe report`) is an HTML page,
Markdown, CSV or JSON built from `ReportTables`; ``definitions`` picks lmmprobe's definitions
(default) or HEMM's released code for its dimension analysis (`definitions_sentence`).
"""

# Exports load on first use (PEP 562): the CLI and the web app import this package for light
# names (`format_metric`, `Results`) without paying for the HTML report and its analysis.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lmmprobe.report._build_tables import (
        REPORT_DEFINITIONS,
        ReportDefinitions,
        ReportTables,
        build_tables,
        definitions_sentence,
    )
    from lmmprobe.report._collect import ReportData, ReportError, load_report_data
    from lmmprobe.report._embed import json_ready
    from lmmprobe.report._format import format_metric
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
    from lmmprobe.report.results import (
        build_results,
        rebuild_results,
        render_markdown,
        write_results,
    )
    from lmmprobe.report.tables import render_tables

_EXPORTS: dict[str, str] = {
    "DataSummary": "lmmprobe.report.model",
    "FORMAT_VERSION": "lmmprobe.report.model",
    "Manifest": "lmmprobe.report.model",
    "ModelResults": "lmmprobe.report.model",
    "ModelStats": "lmmprobe.report.model",
    "QuestionTypeSensitivity": "lmmprobe.report.model",
    "REPORT_DEFINITIONS": "lmmprobe.report._build_tables",
    "REPORT_FORMATS": "lmmprobe.report.html",
    "ReportData": "lmmprobe.report._collect",
    "ReportDefinitions": "lmmprobe.report._build_tables",
    "ReportError": "lmmprobe.report._collect",
    "ReportFormat": "lmmprobe.report.html",
    "ReportTables": "lmmprobe.report._build_tables",
    "Results": "lmmprobe.report.model",
    "ResultsFormatError": "lmmprobe.report.model",
    "Sensitivity": "lmmprobe.report.model",
    "build_report": "lmmprobe.report.html",
    "build_results": "lmmprobe.report.results",
    "build_tables": "lmmprobe.report._build_tables",
    "definitions_sentence": "lmmprobe.report._build_tables",
    "format_metric": "lmmprobe.report._format",
    "json_ready": "lmmprobe.report._embed",
    "load_report_data": "lmmprobe.report._collect",
    "load_results": "lmmprobe.report.model",
    "rebuild_results": "lmmprobe.report.results",
    "render_html": "lmmprobe.report.html",
    "render_markdown": "lmmprobe.report.results",
    "render_tables": "lmmprobe.report.tables",
    "results_from_dict": "lmmprobe.report.model",
    "write_report": "lmmprobe.report.html",
    "write_results": "lmmprobe.report.results",
}

__all__ = [
    "FORMAT_VERSION",
    "REPORT_DEFINITIONS",
    "REPORT_FORMATS",
    "DataSummary",
    "Manifest",
    "ModelResults",
    "ModelStats",
    "QuestionTypeSensitivity",
    "ReportData",
    "ReportDefinitions",
    "ReportError",
    "ReportFormat",
    "ReportTables",
    "Results",
    "ResultsFormatError",
    "Sensitivity",
    "build_report",
    "build_results",
    "build_tables",
    "definitions_sentence",
    "format_metric",
    "json_ready",
    "load_report_data",
    "load_results",
    "rebuild_results",
    "render_html",
    "render_markdown",
    "render_tables",
    "results_from_dict",
    "write_report",
    "write_results",
]


def __getattr__(name: str) -> Any:
    """Import an export's module when the name is first used, then keep the value here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
