"""ReForm-Eval A-OKVQRA: the ``reform-eval-a-okvqra`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["A_OKVQRA"]

A_OKVQRA = reform_set(
    ReformSet(
        slug="a-okvqra",
        title="A-OKVQRA",
        dimension="reasoning",
        files=("huggingface_data/A-OKVQRA/aokvqra_val_10p.json",),
        config="build/configs/VQRA_aokvqa_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/AOKVQA/qra_dataset.py",
        instruct="Kindly examine the picture, reasoning, and query, and subsequently choose the accurate response from the provided choices.",
        task="vqra",
        loader="VQRA",
    )
)
