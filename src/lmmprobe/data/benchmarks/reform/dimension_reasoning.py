"""The ReForm-Eval dimension suite ``reform-eval-reasoning``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_REASONING"]

DIMENSION_REASONING = dimension_suite(
    "reasoning",
    (
        "reform-eval-vqav2",
        "reform-eval-gqa",
        "reform-eval-whoops",
        "reform-eval-okvqa",
        "reform-eval-scienceqa",
        "reform-eval-vizwiz",
        "reform-eval-viquae",
        "reform-eval-k-viquae",
        "reform-eval-a-okvqa",
        "reform-eval-a-okvqra",
        "reform-eval-a-okvqar",
        "reform-eval-imagenetvc",
    ),
)
