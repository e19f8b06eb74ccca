"""ReForm-Eval VisDial: the ``reform-eval-visdial`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VISDIAL"]

VISDIAL = reform_set(
    ReformSet(
        slug="visdial",
        title="VisDial",
        dimension="dialogue",
        files=("huggingface_data/VisDial/Visdial_1.0_val_v1.2.json",),
        config="build/configs/VisDial_val_v1.2.yaml",
        family="dialogue",
        formulation="SingleChoice",
        source="build/VisDial/visual_dialog_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="VisDial",
    )
)
