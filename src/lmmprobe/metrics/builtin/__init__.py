"""lmmprobe's own run-level metrics, one module per family (see `lmmprobe.metrics.run_metric`).

Importing this package registers them; `lmmprobe.metrics.run_metric.run_metrics` does so on
first use.
"""

from lmmprobe.metrics.builtin import answers, captions, description, repeats

__all__ = ["answers", "captions", "description", "repeats"]
