"""ReForm-Eval MSCOCO: the ``reform-eval-mscoco-caption`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MSCOCO_CAPTION"]

MSCOCO_CAPTION = reform_set(
    ReformSet(
        slug="mscoco-caption",
        title="MSCOCO",
        dimension="description",
        files=("huggingface_data/MSCOCO/captions-sampled.json",),
        config="build/configs/Caption_MSCOCO_val.yaml",
        family="caption",
        formulation="Generation",
        source="build/MSCOCO/caption_dataset.py",
        questions=(
            "Generate one sentence to describe the content of the image.",
            "Produce a single-sentence caption of the image's contents.",
            "Generate a brief descriptive statement for the image's content.",
            "Compose a short sentence that outlines what is depicted in the figure.",
            "Develop a one-sentence summary of the visual elements present in the picture.",
        ),
        instruction="Generate one sentence to describe the content of the image.",
        loader="MSCOCO",
    )
)
