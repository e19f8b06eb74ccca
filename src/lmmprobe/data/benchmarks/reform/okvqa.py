"""ReForm-Eval OK-VQA: the ``reform-eval-okvqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    VQA_INSTRUCTS,
    VQA_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["OKVQA"]

OKVQA = reform_set(
    ReformSet(
        slug="okvqa",
        title="OK-VQA",
        dimension="reasoning",
        files=("huggingface_data/OK-VQA/okvqa_val_10p.json",),
        config="build/configs/VQA_okvqa_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=VQA_INSTRUCTS,
        likelihood_instructs=VQA_LIKELIHOOD_INSTRUCTS,
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
