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
        instruction="Generate one sentence to describe the content of the image.",
        loader="NoCaps",
    )
)
