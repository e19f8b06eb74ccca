"""ReForm-Eval MSCOCO-GOI: the ``reform-eval-mscoco-goi`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    Box,
    ReformSet,
    reform_set,
)

__all__ = ["MSCOCO_GOI"]

MSCOCO_GOI = reform_set(
    ReformSet(
        slug="mscoco-goi",
        title="MSCOCO-GOI",
        dimension="fine",
        files=("huggingface_data/MSCOCO/goi_core_multiple_choice.json",),
        config="build/configs/GroundedObjIdentification_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/grounded_object_identification_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", 3),
        loader="MSCOCO",
    )
)
