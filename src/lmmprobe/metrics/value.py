"""`MetricValue`: the value type of every metric, a point value with its 95% interval.

Every run metric, breakdown and comparison (answer rates, official benchmark scores, caption
scores, instability) returns one; `results.json`, the report and the web app read its fields.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetricValue"]


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
