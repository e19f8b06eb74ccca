"""ReForm-Eval VQA-MT: the ``reform-eval-vqa-mt`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["VQA_MT"]

VQA_MT = reform_set(
    ReformSet(
        slug="vqa-mt",
        title="VQA-MT",
        dimension="dialogue",
        files=("huggingface_data/VisDial/VQA_MultiTurn_v1.0.json",),
        config="build/configs/VQA_vqa_MultiRound_val.yaml",
        family="dialogue",
        formulation="SingleChoice",
        source="build/VisDial/visual_dialog_dataset.py",
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
        loader="VisDial",
    )
)
