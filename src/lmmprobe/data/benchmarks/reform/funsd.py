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
        instruct="Answer the following questions based on the image and the conversation history.",
        task="kie",
        loader="FUNSD",
    )
)
