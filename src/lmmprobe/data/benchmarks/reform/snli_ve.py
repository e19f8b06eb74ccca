"""ReForm-Eval SNLI-VE: the ``reform-eval-snli-ve`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["SNLI_VE"]

SNLI_VE = reform_set(
    ReformSet(
        slug="snli-ve",
        title="SNLI-VE",
        dimension="cross-modal",
        files=("huggingface_data/SNLI_VE/visual-entailment-matching-sampled.json",),
        config="build/configs/VisualEntailment_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/SNLI_VE/visual_entailment_dataset.py",
        questions=(
            "Can you conclude '{}' from the content of image? Select your answer from the options.",
            "Can you draw an inference about '{}' based on the visual elements captured within the image? Select your answer from the given selections.",
            "Are you able to derive a deduction regarding '{}' from the visual constituents depicted within the image? Choose your response from the choices provided.",
            "Could you come to a conclusion pertaining to '{}' by analyzing the visual content of the image? Please select one option from candidates.",
            "Can the text description '{}' be inferred from the content of image? Choose your answer from the provided options.",
        ),
        likelihood_questions=(
            "Can you conclude '{}' from the content of image? Please answer yes, not sure or no.",
            "Can you draw an inference about '{}' based on the visual elements captured within the image? Please answer yes, not sure or no.",
            "Are you able to derive a deduction regarding '{}' from the visual constituents depicted within the image? Please answer yes, not sure, or no.",
            "Could you come to a conclusion pertaining to '{}' by analyzing the visual content of the image? Please answer yes, not sure or no.",
            "Can the text description '{}' be inferred from the content of image? Please answer yes, not sure or no.",
        ),
        instruction="Can you conclude '{}' from the content of image? Select your answer from the options.",
        task="ve",
        loader="SNLI-VE",
    )
)
