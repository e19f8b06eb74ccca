"""ReForm-Eval MSCOCO-ITM: the ``reform-eval-mscoco-itm`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MSCOCO_ITM"]

MSCOCO_ITM = reform_set(
    ReformSet(
        slug="mscoco-itm",
        title="MSCOCO-ITM",
        dimension="cross-modal",
        files=("huggingface_data/MSCOCO/image-text-matching-object-sampled.json",),
        config="build/configs/ImageTextMatching_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/MSCOCO/image_text_matching_dataset.py",
        questions=(
            "Does the image match the following caption '{}'? Please select one option to answer the question.",
            "Is the caption '{}' in line with the visual content of the image? Choose one answer from the following options.",
            "Does the text content '{}' provide an interpretation of the image? Provide your answer by selecting the option.",
            "Based on the photograph, does the caption '{}' make sense? Please indicate an following option to answer the question.",
            "Are the image and caption '{}' representing the same scene? Kindly respond with one following option.",
        ),
        likelihood_questions=(
            "Does the image match the following caption '{}'?",
            "Is the caption '{}' in line with the visual content of the image?",
            "Does the text content '{}' provide an interpretation of the image?",
            "Based on the photograph, does the caption '{}' make sense?",
            "Are the image and caption '{}' representing the same scene?",
        ),
        instruction="Does the image match the following caption '{}'? Please select one option to answer the question.",
        task="itm",
        loader="MSCOCO",
    )
)
