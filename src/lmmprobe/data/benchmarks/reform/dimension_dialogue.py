"""The ReForm-Eval dimension suite ``reform-eval-dialogue``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_DIALOGUE"]

DIMENSION_DIALOGUE = dimension_suite(
    "dialogue",
    (
        "reform-eval-vqa-mt",
        "reform-eval-visdial",
    ),
)
