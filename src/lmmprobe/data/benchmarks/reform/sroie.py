"""ReForm-Eval SROIE: the ``reform-eval-sroie`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["SROIE"]

SROIE = reform_set(
    ReformSet(
        slug="sroie",
        title="SROIE",
        dimension="scene-text",
        files=("huggingface_data/SROIE/sroie_core_open_ended.json",),
        config="build/configs/KIE_sroie_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/SROIE/kie_dataset.py",
        instruct="Answer the following questions based on the image and the conversation history.",
        task="kie",
        loader="SROIE",
    )
)
