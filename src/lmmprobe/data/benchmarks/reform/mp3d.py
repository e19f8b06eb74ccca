"""ReForm-Eval MP3D: the ``reform-eval-mp3d`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    DIALOGUE_INSTRUCTS,
    DIALOGUE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["MP3D"]

MP3D = reform_set(
    ReformSet(
        slug="mp3d",
        title="MP3D",
        dimension="spatial",
        files=("huggingface_data/MP3D/mp3d_core_multiple_choice.json",),
        config="build/configs/Spatial_mp3d_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MP3D/spatial_dataset.py",
        instructs=DIALOGUE_INSTRUCTS,
        likelihood_instructs=DIALOGUE_LIKELIHOOD_INSTRUCTS,
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="MP3D",
    )
)
