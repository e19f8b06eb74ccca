"""ReForm-Eval TextOCR: the ``reform-eval-textocr`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["TEXTOCR"]

TEXTOCR = reform_set(
    ReformSet(
        slug="textocr",
        title="TextOCR",
        dimension="scene-text",
        files=("huggingface_data/TextOCR/textocr_core_open_ended.json",),
        config="build/configs/OCR_textocr_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/textOCR/ocr_dataset.py",
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", crop=True),
        loader="TextOCR",
    )
)
