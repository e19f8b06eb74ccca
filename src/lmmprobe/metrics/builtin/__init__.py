"""lmmprobe's own run-level metrics, one module per family (see `lmmprobe.metrics.run_metric`).

Importing this package registers them; `lmmprobe.metrics.run_metric.run_metrics` does so on
first use.
"""

from lmmprobe.metrics.builtin import answers, captions, description, repeats
from lmmprobe.metrics.builtin import benchmark_choice as benchmark_choice
from lmmprobe.metrics.builtin import benchmark_open as benchmark_open
from lmmprobe.metrics.builtin import hemm_bart as hemm_bart

__all__ = ["answers", "captions", "description", "repeats"]
