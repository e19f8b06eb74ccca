"""ReForm-Eval K-ViQuAE: the ``reform-eval-k-viquae`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["K_VIQUAE"]

K_VIQUAE = reform_set(
    ReformSet(
        slug="k-viquae",
        title="K-ViQuAE",
        dimension="reasoning",
        files=("huggingface_data/K-ViQuAE/kviquae_test_10p.json",),
        config="build/configs/KVQA_viquae_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/kvqa_dataset.py",
        instruct="Take a moment to examine both the picture and its context, then pick the accurate choice from the provided options.",
        task="kvqa",
        loader="KVQA",
    )
)
