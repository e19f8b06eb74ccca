"""ReForm-Eval TextCaps: the ``reform-eval-textcaps`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["TEXTCAPS"]

TEXTCAPS = reform_set(
    ReformSet(
        slug="textcaps",
        title="TextCaps",
        dimension="description",
        files=("huggingface_data/TextCaps/captions-sampled.json",),
        config="build/configs/Caption_TextCaps_val.yaml",
        family="caption",
        formulation="Generation",
        source="build/TextCaps/caption_dataset.py",
        questions=(
            "Write a one-sentence description of the image, which would require reading the text in the image.",
            "Write a brief caption that encompasses the key elements of the image, paying special attention to the text in the image and its connection to other objects or entities.",
            "Write a short description of the image, emphasizing visible text and its relationship to the surrounding visual context.",
            "In a single sentence, describe the image and its key elements, with particular attention to the visible text.",
            "Describe the image in a single sentence, making sure to mention the text present in the image.",
        ),
        instruction="Write a one-sentence description of the image, which would require reading the text in the image.",
        loader="TextCaps",
    )
)
