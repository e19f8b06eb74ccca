"""`MetricValue`: the value type of every metric, a point value with its 95% interval.

Every run metric, breakdown and comparison (answer rates, official benchmark scores, caption
scores, instability) returns one; `results.json`, the report and the web app read its fields.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MetricValue", "stored_metric_problem"]

_SLACK = 1e-6
"""Relative slack of ``low <= value <= high``: the bootstrap sums in float32
(`lmmprobe.metrics.bootstrap`), so a degenerate interval (every resample the same) may sit a few
float32 ulps off a point value computed in float64."""


@dataclass(frozen=True, slots=True)
class MetricValue:
    """A metric's point value with its 95% bootstrap confidence interval.

    Attributes:
        value: The metric, or None when undefined (no eligible rows).
        low: 2.5th percentile of the bootstrap distribution; None when ``value`` is None or no
            resampling was done.
        high: 97.5th percentile of the bootstrap distribution, likewise.
        n: Number of rows the metric is computed over (its denominator).

    """

    value: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict[str, float | int | None]:
        """Return the fields as a JSON-ready dictionary."""
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def stored_metric_problem(doc: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why a metric object read back (``{value, low, high, n}``) is not one lmmprobe writes.

    Of the fields present: each figure is a finite number or null (not text, not a boolean),
    ``n`` a whole number ``>= 0``, and where they exist ``low <= high`` and
    ``low <= value <= high`` (within a relative 1e-6, the float32 of the bootstrap). Checked
    wherever stored results are read, so a store or file edited by hand cannot put a figure
    outside its own interval on screen. (Whether every field is present is the reader's rule.)

    Returns:
        The first problem as ``(field, what is wrong)``, or None.

    """
    figures: dict[str, float | None] = {}
    for key in ("value", "low", "high"):
        x = doc.get(key)
        if x is not None and (isinstance(x, bool) or not isinstance(x, int | float)):
            return key, f"{x!r:.40} is not a number"
        if x is not None and not math.isfinite(x):
            return key, f"{x!r} is not a finite number"
        figures[key] = x
    n = doc.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        return "n", f"{n!r:.40} is not a whole number"
    if n is not None and n < 0:
        return "n", f"{n} is negative (a count of rows)"
    value, low, high = figures["value"], figures["low"], figures["high"]
    if low is None or high is None:
        return None
    slack = _SLACK * max(1.0, abs(low), abs(high))
    if low > high + slack:
        return "low", f"{low!r} is above high {high!r} (an inverted interval)"
    if value is not None and not low - slack <= value <= high + slack:
        return "value", f"{value!r} lies outside its own interval [{low!r}, {high!r}]"
    return None
