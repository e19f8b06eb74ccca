"""ReForm-Eval NoCaps: the ``reform-eval-nocaps`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["NOCAPS"]

NOCAPS = reform_set(
    ReformSet(
        slug="nocaps",
        title="NoCaps",
        dimension="description",
        files=("huggingface_data/NoCaps/captions-sampled.json",),
        config="build/configs/Caption_NoCaps_val.yaml",
        family="caption",
        formulation="Generation",
        source="build/NoCaps/caption_dataset.py",
        questions=(
            "Generate one sentence to describe the content of the image.",
            "Produce a single-sentence caption of the image's contents.",
            "Generate a brief descriptive statement for the image's content.",
            "Compose a short sentence that outlines what is depicted in the figure.",
            "Develop a one-sentence summary of the visual elements present in the picture.",
        ),
        instruction="Generate one sentence to describe the content of the image.",
        loader="NoCaps",
    )
)
