"""ReForm-Eval CIFAR10: the ``reform-eval-cifar10`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["CIFAR10"]

CIFAR10 = reform_set(
    ReformSet(
        slug="cifar10",
        title="CIFAR10",
        dimension="coarse",
        files=("huggingface_data/CIFAR10/cifar10_test_10p.json",),
        config="build/configs/ImageClassification_cifar10_val.yaml",
        family="classify",
        formulation="SingleChoice",
        source="build/CIFAR10/cifar10_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="CIFAR10",
    )
)
