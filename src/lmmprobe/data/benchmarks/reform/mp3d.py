"""ReForm-Eval MP3D: the ``reform-eval-mp3d`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MP3D"]

MP3D = reform_set(
    ReformSet(
        slug="mp3d",
        title="MP3D",
        dimension="spatial",
        files=("huggingface_data/MP3D/mp3d_core_multiple_choice.json",),
        config="build/configs/Spatial_mp3d_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/MP3D/spatial_dataset.py",
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
        loader="MP3D",
    )
)
