"""ReForm-Eval SNLI-VE: the ``reform-eval-snli-ve`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["SNLI_VE"]

SNLI_VE = reform_set(
    ReformSet(
        slug="snli-ve",
        title="SNLI-VE",
        dimension="cross-modal",
        files=("huggingface_data/SNLI_VE/visual-entailment-matching-sampled.json",),
        config="build/configs/VisualEntailment_val.yaml",
        family="bootstrap",
        formulation="SingleChoice",
        source="build/SNLI_VE/visual_entailment_dataset.py",
        instruction="Can you conclude '{}' from the content of image? Select your answer from the options.",
        task="ve",
        loader="SNLI-VE",
    )
)
