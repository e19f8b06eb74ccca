"""ReForm-Eval CUTE80: the ``reform-eval-cute80`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["CUTE80"]

CUTE80 = reform_set(
    ReformSet(
        slug="cute80",
        title="CUTE80",
        dimension="scene-text",
        files=("huggingface_data/CUTE80/cute80_core_open_ended.json",),
        config="build/configs/OCR_cute80_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/CUTE80/ocr_dataset.py",
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="CUTE80",
    )
)
