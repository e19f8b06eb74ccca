"""ReForm-Eval MSCOCO-MCI: the ``reform-eval-mscoco-mci`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["MSCOCO_MCI"]

MSCOCO_MCI = reform_set(
    ReformSet(
        slug="mscoco-mci",
        title="MSCOCO-MCI",
        dimension="fine",
        files=("huggingface_data/MSCOCO/mci_core_multiple_choice.json",),
        config="build/configs/MulticlassIdentification_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/multiclass_identification_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="MSCOCO",
    )
)
