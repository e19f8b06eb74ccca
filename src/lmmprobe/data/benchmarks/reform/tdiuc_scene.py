"""ReForm-Eval TDIUC-Scene: the ``reform-eval-tdiuc-scene`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["TDIUC_SCENE"]

TDIUC_SCENE = reform_set(
    ReformSet(
        slug="tdiuc-scene",
        title="TDIUC-Scene",
        dimension="coarse",
        files=(
            "huggingface_data/TDIUC/TDIUC_val_ques.json",
            "huggingface_data/TDIUC/TDIUC_val_anns.json",
            "huggingface_data/TDIUC/choice_list/scene_recognition.json",
        ),
        config="build/configs/TDIUC_scene.yaml",
        family="tdiuc",
        formulation="SingleChoice",
        source="build/TDIUC/tdiuc_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        task="scene_recognition",
        loader="TDIUC",
    )
)
