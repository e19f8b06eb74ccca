"""ReForm-Eval A-OKVQAR: the ``reform-eval-a-okvqar`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["A_OKVQAR"]

A_OKVQAR = reform_set(
    ReformSet(
        slug="a-okvqar",
        title="A-OKVQAR",
        dimension="reasoning",
        files=("huggingface_data/A-OKVQAR/aokvqar_val_10p.json",),
        config="build/configs/VQAR_aokvqa_val.yaml",
        family="vqar",
        formulation="SingleChoice",
        source="build/AOKVQA/qar_dataset.py",
        instructs=(
            "Kindly assess the picture, question, and response provided. Then, select the accurate explanation from the given choices.",
            "Take a moment to analyze the image, question, and answer. Your task is to identify the correct reasoning from the options provided.",
            "Begin by examining the image, question, and provided answer. Your objective is to pick the right justification from the available options.",
            "Your assignment involves analyzing the image, question, and answer. Subsequently, select the appropriate rationale from the choices below.",
            "Carefully review the image, question, and answer. Your goal is to choose the correct explanation from the options provided.",
        ),
        likelihood_instructs=(
            "Take a look at the image, question, and answer, and afterwards, offer an explanation for your chosen response.",
            "After examining the image, question, and answer, explain the reasoning behind your selected response.",
            "Analyze the image, question, and answer, and then provide the rationale that supports your chosen response.",
            "Evaluate the image, question, and answer, and subsequently give the reasoning behind your provided response.",
            "Carefully assess the image, question, and answer, and then provide the justification for your selected response.",
        ),
        instruct="Kindly assess the picture, question, and response provided. Then, select the accurate explanation from the given choices.",
        loader="VQAR",
    )
)
