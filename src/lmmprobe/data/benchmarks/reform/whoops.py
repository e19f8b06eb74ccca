"""ReForm-Eval Whoops: the ``reform-eval-whoops`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    VQA_INSTRUCTS,
    VQA_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["WHOOPS"]

WHOOPS = reform_set(
    ReformSet(
        slug="whoops",
        title="Whoops",
        dimension="reasoning",
        files=("huggingface_data/Whoops/whoops_all_10p.json",),
        config="build/configs/VQA_whoops_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=VQA_INSTRUCTS,
        likelihood_instructs=VQA_LIKELIHOOD_INSTRUCTS,
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
