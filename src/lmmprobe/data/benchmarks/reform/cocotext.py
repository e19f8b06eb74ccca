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
        instruct="Answer the following questions based on the image and the conversation history.",
        loader="COCO_text",
    )
)
