"""ReForm-Eval TDIUC-Scene: the ``reform-eval-tdiuc-scene`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

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
        task="scene_recognition",
    )
)
