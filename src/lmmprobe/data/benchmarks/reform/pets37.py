"""ReForm-Eval Pets37: the ``reform-eval-pets37`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["PETS37"]

PETS37 = reform_set(
    ReformSet(
        slug="pets37",
        title="Pets37",
        dimension="coarse",
        files=("huggingface_data/Pets37/pets37_test_10p.json",),
        config="build/configs/ImageClassification_pets37_val.yaml",
        family="classify",
        formulation="SingleChoice",
        source="build/Pets37/pets37_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="Pets37",
    )
)
