"""ReForm-Eval IC15: the ``reform-eval-ic15`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["IC15"]

IC15 = reform_set(
    ReformSet(
        slug="ic15",
        title="IC15",
        dimension="scene-text",
        files=("huggingface_data/IC15/ic15_core_open_ended.json",),
        config="build/configs/OCR_ic15_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/IC15/ocr_dataset.py",
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="IC15",
    )
)
