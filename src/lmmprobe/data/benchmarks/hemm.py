"""HEMM's 30 datasets by name (``hemm-vqa`` ... ``hemm-screen2words``) and the suite ``hemm``.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models",
arXiv:2407.03418; code: pliang279/HEMM) evaluates multimodal models on 30 datasets annotated
along skill, information-flow and use-case dimensions, scoring every text answer with BARTScore
and comparing models per dimension after min-max normalizing each dataset. Each definition here
reads what HEMM's loader reads and asks HEMM's prompt (see ``hemm_common``); its ``hemm`` field
and each sample's ``metadata["task"]`` are the dataset's name in the task catalog
(``lmmprobe/holistic/data/hemm_tasks.json``), so the holistic analysis groups results by HEMM's
dimensions.

``--data hemm,path=FOLDER`` runs the 28 text datasets from ``FOLDER/hemm-NAME`` (or
``$LMMPROBE_DATA_DIR/hemm-NAME``); the two whose answer is an image, LNCOCO and MagicBrush,
need an image-generation backend, so the suite lists them as skipped, and running either alone
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext
from lmmprobe.data.benchmarks.hemm_affect_science import DEFINITIONS as _AFFECT_SCIENCE
from lmmprobe.data.benchmarks.hemm_common import CITATION, HEMM_COMMIT, HEMM_REPO, METRIC
from lmmprobe.data.benchmarks.hemm_health_hci import DEFINITIONS as _HEALTH_HCI
from lmmprobe.data.benchmarks.hemm_multimedia import DEFINITIONS as _MULTIMEDIA
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["HEMM_DATASETS", "HEMM_SUITE", "SUITE_NAME"]

SUITE_NAME = "hemm"

HEMM_DATASETS: tuple[Benchmark, ...] = tuple(
    benchmark(b) for b in (*_MULTIMEDIA, *_AFFECT_SCIENCE, *_HEALTH_HCI)
)
"""The 30 definitions, registered, in HEMM's README order (use case by use case)."""


def _suite_row(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    # A suite has no rows of its own: the loader reads each member.
    raise DataError(f"{SUITE_NAME} is a suite: its members are read, not its rows")


HEMM_SUITE = benchmark(
    Benchmark(
        name=SUITE_NAME,
        title="HEMM: all 30 datasets (the 28 with text answers run)",
        citation=CITATION,
        license="each dataset's own (see lmmprobe data show hemm-NAME)",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate("{question}", f"{HEMM_REPO} hemm/prompts/ @ {HEMM_COMMIT}"),
        to_sample=_suite_row,
        fetch="each member's own: lmmprobe data show hemm-NAME",
        layout="files",
        members=tuple(b.name for b in HEMM_DATASETS),
        schema_confirmed=f"each member's HEMM loader, {HEMM_REPO} hemm/data/ @ {HEMM_COMMIT}",
        notes=(
            "path=FOLDER holds one copy per member, FOLDER/hemm-NAME (as $LMMPROBE_DATA_DIR does).",
            "LNCOCO and MagicBrush answer with an image: they need an image-generation backend "
            "and are skipped (each listed as a problem saying so).",
            "HEMM's score is BARTScore (bart-large-cnn) per dataset: set LMMPROBE_BART_MODEL to a "
            "local copy of facebook/bart-large-cnn and break results down by dataset with "
            "--by task (HEMM's catalog names).",
        ),
    )
)
"""The suite ``hemm``: every HEMM dataset; the image-generation ones are skipped with a note."""
