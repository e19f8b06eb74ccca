"""ReForm-Eval Flowers102: the ``reform-eval-flowers102`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["FLOWERS102"]

FLOWERS102 = reform_set(
    ReformSet(
        slug="flowers102",
        title="Flowers102",
        dimension="coarse",
        files=("huggingface_data/Flowers102/flower102_val_1p.json",),
        config="build/configs/ImageClassification_flowers102_val.yaml",
        family="classify",
        formulation="SingleChoice",
        source="build/Flowers102/flowers102_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="Flowers102",
    )
)
