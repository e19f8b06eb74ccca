"""ReForm-Eval MSCOCO-MOS: the ``reform-eval-mscoco-mos`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    Box,
    ReformSet,
    reform_set,
)

__all__ = ["MSCOCO_MOS"]

MSCOCO_MOS = reform_set(
    ReformSet(
        slug="mscoco-mos",
        title="MSCOCO-MOS",
        dimension="fine",
        files=("huggingface_data/MSCOCO/mos_core_multiple_choice.json",),
        config="build/configs/MissingObjectSelection_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/missing_object_selection_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", 3, several=True),
        loader="MSCOCO",
    )
)
