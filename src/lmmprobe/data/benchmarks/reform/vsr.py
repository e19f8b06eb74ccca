"""ReForm-Eval VSR: the ``reform-eval-vsr`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VSR"]

VSR = reform_set(
    ReformSet(
        slug="vsr",
        title="VSR",
        dimension="spatial",
        files=("huggingface_data/VSR/vsr_core_multiple_choice.json",),
        config="build/configs/Spatial_vsr_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/VSR/spatial_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        task="vsr",
        loader="VSR",
    )
)
