"""ReForm-Eval ViQuAE: the ``reform-eval-viquae`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    VQA_INSTRUCTS,
    VQA_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VIQUAE"]

VIQUAE = reform_set(
    ReformSet(
        slug="viquae",
        title="ViQuAE",
        dimension="reasoning",
        files=("huggingface_data/ViQuAE/viquae_test_10p.json",),
        config="build/configs/VQA_viquae_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=VQA_INSTRUCTS,
        likelihood_instructs=VQA_LIKELIHOOD_INSTRUCTS,
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
