"""lmmprobe's own run-level metrics, one module per family (see `lmmprobe.metrics.run_metric`).

Every module of this package is imported on the first lookup of `RUN_METRICS` (its
``discover``), so a new family is one file here; column order comes from each metric's family
and position (`lmmprobe.metrics.run_metric.FAMILIES`), not from import order.
"""
