"""ReForm-Eval ViQuAE: the ``reform-eval-viquae`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["VIQUAE"]

VIQUAE = reform_set(
    ReformSet(
        slug="viquae",
        title="ViQuAE",
        dimension="reasoning",
        files=("huggingface_data/ViQuAE/viquae_test_10p.json",),
        config="build/configs/VQA_viquae_val.yaml",
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
