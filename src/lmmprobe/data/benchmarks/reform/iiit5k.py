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
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="IIIT5K",
    )
)
