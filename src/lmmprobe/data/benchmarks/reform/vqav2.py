"""ReForm-Eval VQA v2: the ``reform-eval-vqav2`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    VQA_INSTRUCTS,
    VQA_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VQAV2"]

VQAV2 = reform_set(
    ReformSet(
        slug="vqav2",
        title="VQA v2",
        dimension="reasoning",
        files=("huggingface_data/VQA_v2/vqa_val_10p.json",),
        config="build/configs/VQA_vqa_v2_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=VQA_INSTRUCTS,
        likelihood_instructs=VQA_LIKELIHOOD_INSTRUCTS,
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
