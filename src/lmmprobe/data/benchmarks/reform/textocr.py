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
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", crop=True),
        loader="TextOCR",
    )
)
