"""ReForm-Eval MSCOCO-GOI: the ``reform-eval-mscoco-goi`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import Box, ReformSet, reform_set

__all__ = ["MSCOCO_GOI"]

MSCOCO_GOI = reform_set(
    ReformSet(
        slug="mscoco-goi",
        title="MSCOCO-GOI",
        dimension="fine",
        files=("huggingface_data/MSCOCO/goi_core_multiple_choice.json",),
        config="build/configs/GroundedObjIdentification_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/grounded_object_identification_dataset.py",
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
        box=Box("bbox", 3),
        loader="MSCOCO",
    )
)
