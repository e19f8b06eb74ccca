"""ReForm-Eval VizWiz-yesno: the ``reform-eval-vizwiz-yesno`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import (
    CHOICE_INSTRUCTS,
    CHOICE_LIKELIHOOD_INSTRUCTS,
    ReformSet,
    reform_set,
)

__all__ = ["VIZWIZ_YESNO"]

VIZWIZ_YESNO = reform_set(
    ReformSet(
        slug="vizwiz-yesno",
        title="VizWiz-yesno",
        dimension="coarse",
        files=("huggingface_data/VizWiz/vizwiz_yesno_val_10p.json",),
        config="build/configs/ImageQuality_vizwiz_yesNo_val.yaml",
        family="classify",
        formulation="SingleChoice",
        source="build/VizWiz/vizwiz_dataset.py",
        instructs=CHOICE_INSTRUCTS,
        likelihood_instructs=CHOICE_LIKELIHOOD_INSTRUCTS,
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        loader="VizWiz",
    )
)
