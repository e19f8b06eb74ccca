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
        questions=(
            "Select one text to describe the region in the red bounding box in the image. Select your answer from the options.",
            "Which text option most closely corresponds to the red bounding box region in the image? Select your answer from the given selections.",
            "Based on the red bounding box region in the image, select one most matched text from following options.",
            "From the available options, please indicate the text that corresponds most closely with the content contained within the red bounding box in the image.",
            "Which of the provided text choices best matches the area enclosed by the red bounding box in the image? Choose your response from the choices provided.",
        ),
        likelihood_questions=(
            "Give one text answer to describe the region in the red bounding box in the image.",
            "What text closely corresponds to the red bounding box region in the image?",
            "Based on the red bounding box region in the image, give one matched text.",
            "Please give the text answer that corresponds closely with the content contained within the red bounding box in the image.",
            "What text matches the area enclosed by the red bounding box in the image?",
        ),
        instruction="Select one text to describe the region in the red bounding box in the image. Select your answer from the options.",
        box=Box("region", 2, corners=True, several=True),
        loader="RefCOCO",
    )
)
