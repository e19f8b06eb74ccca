"""The ReForm-Eval dimension suite ``reform-eval-fine``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_FINE"]

DIMENSION_FINE = dimension_suite(
    "fine",
    (
        "reform-eval-mscoco-mci",
        "reform-eval-mscoco-goi",
        "reform-eval-mscoco-mos",
        "reform-eval-tdiuc-color",
        "reform-eval-tdiuc-utility",
        "reform-eval-tdiuc-position",
        "reform-eval-tdiuc-detection",
        "reform-eval-tdiuc-counting",
        "reform-eval-refcoco",
        "reform-eval-mscoco-oc",
    ),
)
