"""The ReForm-Eval dimension suite ``reform-eval-spatial``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_SPATIAL"]

DIMENSION_SPATIAL = dimension_suite(
    "spatial",
    (
        "reform-eval-clevr",
        "reform-eval-vsr",
        "reform-eval-mp3d",
    ),
)
