"""ReForm-Eval VQA-MT: the ``reform-eval-vqa-mt`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VQA_MT"]

VQA_MT = reform_set(
    ReformSet(
        slug="vqa-mt",
        title="VQA-MT",
        dimension="dialogue",
        files=("huggingface_data/VisDial/VQA_MultiTurn_v1.0.json",),
        config="build/configs/VQA_vqa_MultiRound_val.yaml",
        family="dialogue",
        formulation="SingleChoice",
        source="build/VisDial/visual_dialog_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="VisDial",
    )
)
