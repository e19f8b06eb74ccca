"""Number and text formatting shared by every report format (results.md, tables, HTML)."""

from __future__ import annotations

import math

from lmmprobe.metrics import MetricValue

SMALL_N = 10
"""Fewer rows than this behind an interval get a mark (`SMALL_N_MARK`) and a footnote: a
bootstrap over a handful of rows is often zero-width ([0.00, 0.00] from two wrong answers),
which read as certainty where it is none (re-test 20b #7). The terminal (`run`, `show`,
`score`) and the HTML report's breakdowns mark it alike."""
SMALL_N_MARK = " *"
SMALL_N_NOTE = (
    f"* fewer than {SMALL_N} rows: the interval resamples so few rows that it can be "
    "zero-width or far too narrow; read it as no interval"
)


def n_cell(n: int) -> str:
    """A row count for a table's n column, marked where it is small (`SMALL_N`)."""
    return f"{n}{SMALL_N_MARK}" if 0 < n < SMALL_N else str(n)


def format_metric(m: MetricValue | None, *, ci: bool = True, digits: int = 3) -> str:
    """``0.734 [0.70, 0.77]`` as a percentage-free fraction; ``-`` when undefined.

    `digits` decimals for the value (the metric's `RunMetric.digits`: 1 for token counts, 5 for
    a cost per correct answer); the interval keeps two fewer, at least two.
    """
    if m is None or m.value is None:
        return "-"
    out = f"{m.value:.{digits}f}"
    if ci and m.low is not None and m.high is not None:
        d = max(2, digits - 1)
        out += f" [{m.low:.{d}f}, {m.high:.{d}f}]"
    return out


def md_cell(text: object) -> str:
    """Text for a Markdown table cell (None: ``-``).

    Dataset and model text is untrusted: HTML is escaped and pipes and newlines neutralized so
    it can neither break the table nor inject markup when the Markdown is rendered.
    """
    s = "-" if text is None else str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("\n", " ")):
        s = s.replace(a, b)
    return s


def num(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """``value`` with `digits` decimals (a sign when `signed`); ``-`` for None."""
    if value is None:
        return "-"
    return f"{float(value):+.{digits}f}" if signed else f"{float(value):.{digits}f}"


def stat(value: float | None, digits: int = 2) -> str:
    """A test statistic: ``-`` when undefined (NaN: no variance), ``+inf`` when infinite.

    scipy gives an infinite t when every paired difference is equal and non-zero.
    """
    if value is None or math.isnan(float(value)):
        return "-"
    return f"{float(value):.{digits}f}" if math.isfinite(float(value)) else f"{float(value):+}"


def pval(value: float | None) -> str:
    """A p-value: ``<0.001`` below that, ``-`` when undefined."""
    if value is None or math.isnan(float(value)):
        return "-"
    return "<0.001" if float(value) < 0.001 else f"{float(value):.3f}"
