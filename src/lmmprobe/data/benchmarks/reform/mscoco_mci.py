"""ReForm-Eval MSCOCO-MCI: the ``reform-eval-mscoco-mci`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MSCOCO_MCI"]

MSCOCO_MCI = reform_set(
    ReformSet(
        slug="mscoco-mci",
        title="MSCOCO-MCI",
        dimension="fine",
        files=("huggingface_data/MSCOCO/mci_core_multiple_choice.json",),
        config="build/configs/MulticlassIdentification_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MSCOCO/multiclass_identification_dataset.py",
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
        loader="MSCOCO",
    )
)
