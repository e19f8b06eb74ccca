"""The ReForm-Eval dimension suite ``reform-eval-cross-modal``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_CROSS_MODAL"]

DIMENSION_CROSS_MODAL = dimension_suite(
    "cross-modal",
    (
        "reform-eval-mscoco-itm",
        "reform-eval-mscoco-its",
        "reform-eval-wikihow",
        "reform-eval-winoground",
        "reform-eval-snli-ve",
        "reform-eval-mocheg",
    ),
)
