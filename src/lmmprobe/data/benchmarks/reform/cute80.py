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
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="CUTE80",
    )
)
