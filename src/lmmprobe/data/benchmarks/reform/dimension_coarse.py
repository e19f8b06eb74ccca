"""The ReForm-Eval dimension suite ``reform-eval-coarse``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_COARSE"]

DIMENSION_COARSE = dimension_suite(
    "coarse",
    (
        "reform-eval-flowers102",
        "reform-eval-cifar10",
        "reform-eval-imagenet1k",
        "reform-eval-pets37",
        "reform-eval-vizwiz-yesno",
        "reform-eval-vizwiz-singlechoice",
        "reform-eval-tdiuc-sport",
        "reform-eval-tdiuc-scene",
        "reform-eval-medic",
    ),
)
