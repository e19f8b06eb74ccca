"""ReForm-Eval MOCHEG: the ``reform-eval-mocheg`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MOCHEG"]

MOCHEG = reform_set(
    ReformSet(
        slug="mocheg",
        title="MOCHEG",
        dimension="cross-modal",
        files=("huggingface_data/MOCHEG/mocheg_test_10p.json",),
        config="build/configs/MCV_mocheg_val.yaml",
        family="claim",
        formulation="SingleChoice",
        source="build/MOCHEG/mcv_dataset.py",
        instructs=(
            "Utilizing the textual and visual proof, confirm the assertion by choosing the accurate response.",
            "After examining the text and image evidence, validate the claim by selecting the appropriate choice.",
            "Evaluate the claim's authenticity through the provided text and image evidence, then choose the correct option.",
            "Using the information from both the text and image, determine the accuracy of the claim by selecting the right answer.",
            "Assess the claim's validity based on the text and image evidence, and then pick the correct option.",
        ),
        # mcv_dataset.py appends the answer space to the likelihood instruct it picks.
        likelihood_instructs=(
            "Based on the text and image evidence, predict the truthfulness of the claim. Please answer supported, refuted or not enough information.",
            "Using textual and visual evidence, make an educated guess about the accuracy of the statement. Please answer supported, refuted or not enough information.",
            "Assess the credibility of the assertion by analyzing both the text and image proof. Please answer supported, refuted or not enough information.",
            "Evaluate the validity of the claim by considering both textual and visual evidence. Please answer supported, refuted or not enough information.",
            "Determine the likelihood of the statement being true based on the provided text and image. Please answer supported, refuted or not enough information.",
        ),
        instruct="Utilizing the textual and visual proof, confirm the assertion by choosing the accurate response.",
        loader="MCV",
    )
)
