"""The ReForm-Eval dimension suite ``reform-eval-description``: its datasets, from one clone."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import dimension_suite

__all__ = ["DIMENSION_DESCRIPTION"]

DIMENSION_DESCRIPTION = dimension_suite(
    "description",
    (
        "reform-eval-mscoco-caption",
        "reform-eval-textcaps",
        "reform-eval-nocaps",
        "reform-eval-flickr30k",
    ),
)
