"""ReForm-Eval GQA: the ``reform-eval-gqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    VQA_INSTRUCTS,
    VQA_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["GQA"]

GQA = reform_set(
    ReformSet(
        slug="gqa",
        title="GQA",
        dimension="reasoning",
        files=("huggingface_data/GQA/gqa_testdev_10p.json",),
        config="build/configs/VQA_gqa_val_v2.0.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=VQA_INSTRUCTS,
        likelihood_instructs=VQA_LIKELIHOOD_INSTRUCTS,
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
