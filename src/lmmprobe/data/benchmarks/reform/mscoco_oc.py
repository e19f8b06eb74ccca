"""ReForm-Eval MSCOCO-OC: the ``reform-eval-mscoco-oc`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["MSCOCO_OC"]

MSCOCO_OC = reform_set(
    ReformSet(
        slug="mscoco-oc",
        title="MSCOCO-OC",
        dimension="fine",
        files=(
            "huggingface_data/MSCOCO/object-counting-all.json",
            "huggingface_data/MSCOCO/objectCounting_answer_list/answer_list.json",
        ),
        config="build/configs/ObjectCounting_mscoco_val.yaml",
        family="counting",
        formulation="SingleChoice",
        source="build/MSCOCO/object_counting_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="MSCOCO",
    )
)
