"""ReForm-Eval A-OKVQRA: the ``reform-eval-a-okvqra`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["A_OKVQRA"]

A_OKVQRA = reform_set(
    ReformSet(
        slug="a-okvqra",
        title="A-OKVQRA",
        dimension="reasoning",
        files=("huggingface_data/A-OKVQRA/aokvqra_val_10p.json",),
        config="build/configs/VQRA_aokvqa_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/AOKVQA/qra_dataset.py",
        instructs=(
            "Kindly examine the picture, reasoning, and query, and subsequently choose the accurate response from the provided choices.",
            "Take a moment to analyze the image, along with the underlying logic and the posed question, before picking the right answer from the given alternatives.",
            "Begin by dissecting the image, understanding the reasoning, and considering the question; then, indicate the correct answer from the provided options.",
            "Your task is to assess the image, the rationale behind it, and the question being asked. Afterward, select the appropriate answer from the given options.",
            "Your assignment involves a careful analysis of the image, rationale, and question. Once done, proceed to select the correct answer from the provided options.",
        ),
        likelihood_instructs=(
            "Kindly examine the image and its underlying reasoning, and proceed to respond to the posed question.",
            "Take a moment to analyze both the image and the reasoning behind it, and then provide an answer to the question.",
            "Begin by carefully assessing the image and its rationale, and subsequently offer your response to the presented question.",
            "Your task involves analyzing the image and the accompanying reasoning, followed by addressing the question with your answer.",
            "Your assignment requires you to thoroughly review the image and its rationale, and then provide a response to the question.",
        ),
        instruct="Kindly examine the picture, reasoning, and query, and subsequently choose the accurate response from the provided choices.",
        task="vqra",
        loader="VQRA",
    )
)
