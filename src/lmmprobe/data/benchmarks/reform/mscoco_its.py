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
        instruction="Which text option most closely corresponds to the image?",
        task="its",
        loader="MSCOCO",
    )
)
