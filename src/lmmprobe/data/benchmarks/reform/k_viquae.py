"""ReForm-Eval K-ViQuAE: the ``reform-eval-k-viquae`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["K_VIQUAE"]

K_VIQUAE = reform_set(
    ReformSet(
        slug="k-viquae",
        title="K-ViQuAE",
        dimension="reasoning",
        files=("huggingface_data/K-ViQuAE/kviquae_test_10p.json",),
        config="build/configs/KVQA_viquae_val.yaml",
        family="vqa",
        formulation="SingleChoice",
        source="build/VQA/kvqa_dataset.py",
        instructs=(
            "Take a moment to examine both the picture and its context, then pick the accurate choice from the provided options.",
            "Spend some time evaluating the image and its context, and then make your selection from the available options.",
            "Please consider both the image and its context before making a selection from the provided choices.",
            "Assess the image and its context, then indicate the appropriate choice from the following options.",
            "Make sure to understand the image and its context before picking the correct option from the choices.",
        ),
        likelihood_instructs=(
            "Kindly assess both the image and the surrounding context before responding to the question.",
            "Take a moment to examine the picture and its context, and then provide an answer to the question.",
            "After reviewing the image and its context, please proceed to address the question at hand.",
            "Carefully consider the image and its context before formulating a response to the posed question.",
            "Prior to answering the question, take the time to analyze the image and its relevant context.",
        ),
        instruct="Take a moment to examine both the picture and its context, then pick the accurate choice from the provided options.",
        task="kvqa",
        loader="KVQA",
    )
)
