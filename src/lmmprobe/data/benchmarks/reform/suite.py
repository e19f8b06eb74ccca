"""The suite ``reform-eval``: ReForm-Eval's 61 datasets in its 8 dimensions, from one clone.

``--data reform-eval,path=CLONE`` runs every dataset from one clone of ReForm-Eval-Data (or
``$LMMPROBE_DATA_DIR/reform-eval``); ``--by dimension,dataset`` breaks results down as the
paper's tables do. Its members are the dimension suites' members, dimension by dimension.
"""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform.dimensions import TABLE_DEFINITIONS as _DIMENSIONS
from lmmprobe.data.benchmarks.reform_common import (
    COPY,
    DIMENSIONS,
    HUB_ID,
    UNPINNED,
    suite_benchmark,
)

__all__ = ["REFORM_SUITE", "SUITE_NAME"]

SUITE_NAME = COPY

REFORM_SUITE = suite_benchmark(
    SUITE_NAME,
    "ReForm-Eval: 61 datasets in 8 dimensions",
    tuple(m for d in _DIMENSIONS for m in d.members),
    None,
    (
        f"path=CLONE is one clone of ReForm-Eval-Data (git clone "
        f"https://huggingface.co/datasets/{HUB_ID}), shared by every member.",
        "Dimensions: " + "; ".join(DIMENSIONS.values()) + ".",
        "As the paper: --matcher reform for generation runs, --method likelihood for "
        "likelihood runs, --repeats N for instability, --by dimension,dataset for its tables; "
        "captions score CIDEr, OCR/KIE accuracy.",
        UNPINNED,
    ),
)
"""The suite ``reform-eval``: every ReForm-Eval dataset."""
