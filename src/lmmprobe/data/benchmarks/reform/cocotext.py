"""ReForm-Eval COCO-Text: the ``reform-eval-cocotext`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["COCOTEXT"]

COCOTEXT = reform_set(
    ReformSet(
        slug="cocotext",
        title="COCO-Text",
        dimension="scene-text",
        files=("huggingface_data/COCO_Text/cocotext_core_open_ended.json",),
        config="build/configs/OCR_cocotext_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/COCO_text/ocr_dataset.py",
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="COCO_text",
    )
)
