"""ReForm-Eval CLEVR: the ``reform-eval-clevr`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["CLEVR"]

CLEVR = reform_set(
    ReformSet(
        slug="clevr",
        title="CLEVR",
        dimension="spatial",
        files=("huggingface_data/CLEVR/clevr_core_multiple_choice.json",),
        config="build/configs/Spatial_clevr_val.yaml",
        family="qa",
        formulation="SingleChoice",
        source="build/CLEVR/spatial_dataset.py",
        task="clevr",
        loader="CLEVR",
    )
)
