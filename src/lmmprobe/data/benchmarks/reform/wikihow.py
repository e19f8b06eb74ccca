"""ReForm-Eval WikiHow: the ``reform-eval-wikihow`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["WIKIHOW"]

WIKIHOW = reform_set(
    ReformSet(
        slug="wikihow",
        title="WikiHow",
        dimension="cross-modal",
        files=("huggingface_data/WikiHow/wikihow-image-text-selection-in-method-sampled.json",),
        config="build/configs/TemporalOrdering_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/WikiHow/temporal_ordering_dataset.py",
        instruction="For the task '{}', the image represents one step of the task. Select the text that best matches the image.",
        task="wikihow",
        loader="WikiHow",
    )
)
