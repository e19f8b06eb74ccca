"""ReForm-Eval OK-VQA: the ``reform-eval-okvqa`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["OKVQA"]

OKVQA = reform_set(
    ReformSet(
        slug="okvqa",
        title="OK-VQA",
        dimension="reasoning",
        files=("huggingface_data/OK-VQA/okvqa_val_10p.json",),
        config="build/configs/VQA_okvqa_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/vqa_dataset.py",
        instructs=(
            "Please analyze the image and the question, then select the correct option.",
            "Take a close look at the image and question, and then choose the correct option.",
            "Examine both the image and the question before selecting the right option.",
            "Carefully analyze the image and question and then pick the correct option.",
            "Evaluate the image and question thoroughly before making your selection.",
        ),
        likelihood_instructs=(
            "Assess this image and provide an answer to the question.",
            "Take a look at this image and give your thoughts on the question.",
            "Please investigate this image and share your response to the question.",
            "Analyze this image and answer the question.",
            "Your task is to analyze this picture and respond to the question.",
        ),
        instruct="Please analyze the image and the question, then select the correct option.",
        loader="VQA",
    )
)
