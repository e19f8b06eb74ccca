"""ReForm-Eval Winoground: the ``reform-eval-winoground`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["WINOGROUND"]

WINOGROUND = reform_set(
    ReformSet(
        slug="winoground",
        title="Winoground",
        dimension="cross-modal",
        files=("huggingface_data/Winoground/winoground_all_10p.json",),
        config="build/configs/CaptionSelection_winoground_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/Winoground/caption_selection_dataset.py",
        instructs=(
            "Take a moment to examine this image and choose the correct option for the question.",
            "Your task is to analyze this image and then pick the right choice for the question.",
            "Kindly assess the image and make the appropriate selection in response to the question.",
            "Begin by evaluating this image and then indicate the correct option for the question.",
            "Please review this image and select the appropriate answer for the question.",
        ),
        likelihood_instructs=(
            "Kindly examine the image and provide a response to the question.",
            "Take a moment to analyze the picture and then respond to the question.",
            "Your task is to assess the image and offer an answer to the question.",
            "Begin by analyzing the image and then proceed to answer the question.",
            "Please review the image and then provide your response to the question.",
        ),
        likelihood_questions=("Please generate a sentence to describe this image.",),
        instruct="Take a moment to examine this image and choose the correct option for the question.",
        task="winoground",
        loader="CaptionSelection",
    )
)
