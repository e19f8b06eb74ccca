"""ReForm-Eval IIIT5K: the ``reform-eval-iiit5k`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["IIIT5K"]

IIIT5K = reform_set(
    ReformSet(
        slug="iiit5k",
        title="IIIT5K",
        dimension="scene-text",
        files=("huggingface_data/IIIT5K/iiit5k_core_open_ended.json",),
        config="build/configs/OCR_iiit5k_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/IIIT5K/ocr_dataset.py",
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="IIIT5K",
    )
)
