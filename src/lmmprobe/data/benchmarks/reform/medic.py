"""ReForm-Eval MEDIC: the ``reform-eval-medic`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MEDIC"]

MEDIC = reform_set(
    ReformSet(
        slug="medic",
        title="MEDIC",
        dimension="coarse",
        files=("huggingface_data/MEDIC/disaster-type-selection-sampled.json",),
        config="build/configs/DisasterType_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/MEDIC/disaster_type_dataset.py",
        instruction="What disaster happens in the image? Please select one option.",
        loader="MEDIC",
    )
)
