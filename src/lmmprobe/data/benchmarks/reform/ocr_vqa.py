"""ReForm-Eval OCR-VQA: the ``reform-eval-ocr-vqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["OCR_VQA"]

OCR_VQA = reform_set(
    ReformSet(
        slug="ocr-vqa",
        title="OCR-VQA",
        dimension="scene-text",
        files=("huggingface_data/OCR-VQA/ocrvqa_test_10p.json",),
        config="build/configs/OCR_ocrvqa_val.yaml",
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
