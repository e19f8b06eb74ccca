"""ReForm-Eval ImageNet-1K: the ``reform-eval-imagenet1k`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["IMAGENET1K"]

IMAGENET1K = reform_set(
    ReformSet(
        slug="imagenet1k",
        title="ImageNet-1K",
        dimension="coarse",
        files=("huggingface_data/ImageNet-1K/imagenet1k_val_10p.json",),
        config="build/configs/ImageClassification_imagenet1k_val.yaml",
        family="classify",
        formulation="SingleChoice",
        source="build/ImageNet1K/imagenet1k_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="ImageNet-1K",
    )
)
