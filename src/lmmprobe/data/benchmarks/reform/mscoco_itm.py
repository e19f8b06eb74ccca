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
        instruction="Does the image match the following caption '{}'? Please select one option to answer the question.",
        task="itm",
        loader="MSCOCO",
    )
)
