"""ReForm-Eval FUNSD: the ``reform-eval-funsd`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["FUNSD"]

FUNSD = reform_set(
    ReformSet(
        slug="funsd",
        title="FUNSD",
        dimension="scene-text",
        files=("huggingface_data/FUNSD/funsd_core_open_ended.json",),
        config="build/configs/KIE_funsd_val.yaml",
        family="ocr",
        formulation="KIEOpenEnded",
        source="build/FUNSD/kie_dataset.py",
        instructs=(
            "Answer the following questions based on the image and the conversation history.",
            "Select the correct option for the questions by referring to the provided image and dialogue history.",
            "Utilize the content of the image and conversation to infer the answers to the questions.",
            "Based on the image and previous conversation, answer the questions with the provided options.",
            "Respond to the following questions according to the image and the dialogue history.",
        ),
        instruct="Answer the following questions based on the image and the conversation history.",
        task="kie",
        loader="FUNSD",
    )
)
