"""ReForm-Eval TextCaps: the ``reform-eval-textcaps`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["TEXTCAPS"]

TEXTCAPS = reform_set(
    ReformSet(
        slug="textcaps",
        title="TextCaps",
        dimension="description",
        files=("huggingface_data/TextCaps/captions-sampled.json",),
        config="build/configs/Caption_TextCaps_val.yaml",
        family="caption",
        formulation="Generation",
        source="build/TextCaps/caption_dataset.py",
        instruction="Write a one-sentence description of the image, which would require reading the text in the image.",
        loader="TextCaps",
    )
)
