"""ReForm-Eval RefCOCO: the ``reform-eval-refcoco`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["REFCOCO"]

REFCOCO = reform_set(
    ReformSet(
        slug="refcoco",
        title="RefCOCO",
        dimension="fine",
        files=("huggingface_data/RefCOCO/referring-expression-selection-sampled.json",),
        config="build/configs/ReferringExpression_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/RefCOCO/referring_expression_selection.py",
        instruction="Select one text to describe the region in the red bounding box in the image. Select your answer from the options.",
        box=Box("region", 2, corners=True, several=True),
        loader="RefCOCO",
    )
)
