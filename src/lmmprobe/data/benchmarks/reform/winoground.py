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
        instruct="Take a moment to examine this image and choose the correct option for the question.",
        task="winoground",
        loader="CaptionSelection",
    )
)
