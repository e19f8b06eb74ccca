"""ReForm-Eval Grounded IC15: the ``reform-eval-grounded-ic15`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["GROUNDED_IC15"]

GROUNDED_IC15 = reform_set(
    ReformSet(
        slug="grounded-ic15",
        title="Grounded IC15",
        dimension="scene-text",
        files=("huggingface_data/IC15/ic15_gocr_core_open_ended.json",),
        config="build/configs/GroundOCR_ic15_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/IC15/groundocr_dataset.py",
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", 2, corners=True),
        loader="IC15",
    )
)
