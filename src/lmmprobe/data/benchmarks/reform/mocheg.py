"""ReForm-Eval MOCHEG: the ``reform-eval-mocheg`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MOCHEG"]

MOCHEG = reform_set(
    ReformSet(
        slug="mocheg",
        title="MOCHEG",
        dimension="cross-modal",
        files=("huggingface_data/MOCHEG/mocheg_test_10p.json",),
        config="build/configs/MCV_mocheg_val.yaml",
        family="claim",
        formulation="SingleChoice",
        source="build/MOCHEG/mcv_dataset.py",
        instruct="Utilizing the textual and visual proof, confirm the assertion by choosing the accurate response.",
        loader="MCV",
    )
)
