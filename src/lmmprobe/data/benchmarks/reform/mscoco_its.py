"""ReForm-Eval MSCOCO-ITS: the ``reform-eval-mscoco-its`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MSCOCO_ITS"]

MSCOCO_ITS = reform_set(
    ReformSet(
        slug="mscoco-its",
        title="MSCOCO-ITS",
        dimension="cross-modal",
        files=("huggingface_data/MSCOCO/image-text-selection-object-sampled.json",),
        config="build/configs/ImageTextSelection_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/MSCOCO/image_text_selection_dataset.py",
        questions=(
            "Which text option most closely corresponds to the image?",
            "Which text option best matches the image?",
            "Based on the image, select one text option to describe it.",
            "Which text correctly describes the content of image?",
            "Please select the correct text description based on the image provided.",
        ),
        likelihood_questions=(
            "Which text most closely corresponds to the image?",
            "Which text best matches the image?",
            "Based on the image, select one text to describe it.",
            "Which text correctly describes the content of image?",
            "Please select the correct text description based on the image provided.",
        ),
        instruction="Which text option most closely corresponds to the image?",
        task="its",
        loader="MSCOCO",
    )
)
