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
        questions=(
            "What disaster happens in the image? Please select one option.",
            "Choose the disaster happened in the image from the following options.",
            "Identify the disaster happened in the image by choosing one of the options below.",
            "What disaster happened in the image can you infer? Choose one answer from the following options.",
            "Pick the catastrophe that has occurred in the image from the listed alternatives.",
        ),
        likelihood_questions=(
            "What disaster happens in the image?",
            "Give answer of the disaster happened in the image from the following options.",
            "Identify and answer the disaster happened in the image.",
            "What disaster happened in the image can you infer?",
            "Answer the catastrophe that has occurred in the image.",
        ),
        instruction="What disaster happens in the image? Please select one option.",
        loader="MEDIC",
    )
)
