"""ReForm-Eval A-OKVQAR: the ``reform-eval-a-okvqar`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["A_OKVQAR"]

A_OKVQAR = reform_set(
    ReformSet(
        slug="a-okvqar",
        title="A-OKVQAR",
        dimension="reasoning",
        files=("huggingface_data/A-OKVQAR/aokvqar_val_10p.json",),
        config="build/configs/VQAR_aokvqa_val.yaml",
        family="vqar",
        formulation="SingleChoice",
        source="build/AOKVQA/qar_dataset.py",
        instruct="Kindly assess the picture, question, and response provided. Then, select the accurate explanation from the given choices.",
        loader="VQAR",
    )
)
