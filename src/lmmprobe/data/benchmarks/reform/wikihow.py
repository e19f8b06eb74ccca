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
        questions=(
            "For the task '{}', the image represents one step of the task. Select the text that best matches the image.",
            "For the task '{}', the image showcases a single stage within the task. Choose the text that most accurately corresponds to the image.",
            "The image depicts a specific step of the task '{}'. Indicate the text that correlates most effectively with the image.",
            "Concerning the task '{}', the image symbolizes one particular step of the task. Point out the text that demonstrates the closest resemblance to the image.",
            "Regarding the assigned task '{}', the image exhibits a distinct phase in the task. Select the text that mirrors the image with the highest fidelity.",
        ),
        likelihood_questions=(
            "For the task '{}', the image represents one step of the task. Give the answer that closely describes the image.",
            "For the task '{}', the image showcases a single stage within the task. Give the answer that most accurately corresponds to the image.",
            "The image depicts a specific step of the task '{}'. Answer the text that correlates most effectively with the image.",
            "Concerning the task '{}', the image symbolizes one particular step of the task. Answer the text that demonstrates the closest resemblance to the image.",
            "Regarding the assigned task '{}', the image exhibits a distinct phase in the task. Answer the text that mirrors the image with the highest fidelity.",
        ),
        instruction="For the task '{}', the image represents one step of the task. Select the text that best matches the image.",
        task="wikihow",
        loader="WikiHow",
    )
)
