"""HEMM's 30 datasets by name (``hemm-vqa`` ... ``hemm-screen2words``) and the suite ``hemm``.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models",
arXiv:2407.03418; code: pliang279/HEMM) evaluates multimodal models on 30 datasets annotated
along skill, information-flow and use-case dimensions, scoring every text answer with BARTScore
and comparing models per dimension after min-max normalizing each dataset.

One file per dataset, each registering one `Benchmark`; the benchmark registry imports every
module of this folder whose name does not start with ``_`` (nothing lists them). Each definition
reads the files HEMM's loader (``hemm/data/*.py`` at `HEMM_COMMIT`) reads, at the same paths
relative to the copy's folder (HEMM's ``download_dir``), and asks HEMM's prompt
(``hemm/prompts/*.py``; see ``hemm_common``). Where HEMM's loader has a quirk that decides which
rows are asked, the definition keeps it and says so in its notes; where HEMM shuffles without a
seed (FER-2013, RESISC45) the order does not change its score (a mean over rows) and lmmprobe
reads in sorted order. Its ``hemm`` field and each sample's ``metadata["task"]`` are the
dataset's name in the task catalog (``lmmprobe/holistic/data/hemm_tasks.json``), so the holistic
analysis groups results by HEMM's dimensions.
"""
