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
        instruction="Generate one sentence to describe the content of the image.",
        loader="MSCOCO",
    )
)
