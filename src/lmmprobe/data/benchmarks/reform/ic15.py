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
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="IC15",
    )
)
