"""ReForm-Eval Flickr30K: the ``reform-eval-flickr30k`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["FLICKR30K"]

FLICKR30K = reform_set(
    ReformSet(
        slug="flickr30k",
        title="Flickr30K",
        dimension="description",
        files=("huggingface_data/Flickr30K/captions-sampled.json",),
        config="build/configs/Caption_Flickr30K_val.yaml",
        family="caption",
        formulation="Generation",
        source="build/Flickr30K/caption_dataset.py",
        questions=(
            "Generate one sentence to describe the content of the image.",
            "Produce a single-sentence caption of the image's contents.",
            "Generate a brief descriptive statement for the image's content.",
            "Compose a short sentence that outlines what is depicted in the figure.",
            "Develop a one-sentence summary of the visual elements present in the picture.",
        ),
        instruction="Generate one sentence to describe the content of the image.",
        loader="Flickr30K",
    )
)
