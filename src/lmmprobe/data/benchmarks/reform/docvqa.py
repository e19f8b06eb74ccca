"""ReForm-Eval DocVQA: the ``reform-eval-docvqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["DOCVQA"]

DOCVQA = reform_set(
    ReformSet(
        slug="docvqa",
        title="DocVQA",
        dimension="scene-text",
        files=("huggingface_data/DocVQA/docvqa_val_10p.json",),
        config="build/configs/OCR_docvqa_val.yaml",
        family="ocr_vqa",
        formulation="OCROpenEnded",
        source="build/OCR/ocr_dataset.py",
        instructs=(
            "Assess this image and provide an answer to the question.",
            "Take a look at this image and give your thoughts on the question.",
            "Please investigate this image and share your response to the question.",
            "Analyze this image and answer the question.",
            "Your task is to analyze this picture and respond to the question.",
        ),
        instruct="Assess this image and provide an answer to the question.",
        loader="OCR",
    )
)
