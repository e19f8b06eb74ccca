"""ReForm-Eval MSCOCO-MOS: the ``reform-eval-mscoco-mos`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["MSCOCO_MOS"]

MSCOCO_MOS = reform_set(
    ReformSet(
        slug="mscoco-mos",
        title="MSCOCO-MOS",
        dimension="fine",
        files=("huggingface_data/MSCOCO/mos_core_multiple_choice.json",),
        config="build/configs/MissingObjectSelection_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/missing_object_selection_dataset.py",
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        likelihood_instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Provide answers to the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        box=Box("bbox", 3, several=True),
        loader="MSCOCO",
    )
)
