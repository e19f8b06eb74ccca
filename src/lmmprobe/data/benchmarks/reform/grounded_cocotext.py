"""ReForm-Eval Grounded COCO-Text: the ``reform-eval-grounded-cocotext`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["GROUNDED_COCOTEXT"]

GROUNDED_COCOTEXT = reform_set(
    ReformSet(
        slug="grounded-cocotext",
        title="Grounded COCO-Text",
        dimension="scene-text",
        files=("huggingface_data/COCO_Text/cocotext_gocr_core_open_ended.json",),
        config="build/configs/GroundOCR_cocotext_val.yaml",
        family="ocr",
        formulation="OCROpenEnded",
        source="build/COCO_text/groundocr_dataset.py",
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", 5),
        loader="COCO_text",
    )
)
