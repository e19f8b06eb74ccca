"""Reports built from run results (read-only over the layers below)."""

from lmmprobe.report.results import build_results, format_metric, render_markdown, write_results

__all__ = ["build_results", "format_metric", "render_markdown", "write_results"]
