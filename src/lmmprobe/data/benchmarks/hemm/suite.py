"""The suite ``hemm``: HEMM's 30 datasets, of which the 28 with text answers run.

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
from lmmprobe.data.benchmarks.hemm_common import CITATION, HEMM_COMMIT, HEMM_REPO, METRIC
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

__all__ = ["HEMM_SUITE", "MEMBERS", "SUITE_NAME"]

SUITE_NAME = "hemm"

MEMBERS: tuple[str, ...] = (
    # Multimedia (HEMM's README list, then LNCOCO).
    "hemm-vqa",
    "hemm-visualgenome",
    "hemm-vcr",
    "hemm-okvqa",
    "hemm-gqa",
    "hemm-nocaps",
    "hemm-flickr30k",
    "hemm-winoground",
    "hemm-nlvr",
    "hemm-nlvr2",
    "hemm-irfl",
    "hemm-mmimdb",
    "hemm-magicbrush",
    "hemm-lncoco",
    # Affective computing and science.
    "hemm-nycartoon",
    "hemm-hatefulmemes",
    "hemm-memecap",
    "hemm-memotion",
    "hemm-fer2013",
    "hemm-scienceqa",
    "hemm-resisc45",
    "hemm-ucmerced",
    "hemm-inat",
    "hemm-decimer",
    # Healthcare and HCI.
    "hemm-pathvqa",
    "hemm-vqarad",
    "hemm-openpath",
    "hemm-slake",
    "hemm-enrico",
    "hemm-screen2words",
)
"""The members in HEMM's README order (use case by use case), which is the order the suite reads
them. HEMM's published set of 30, not a list of files: each member is its own discovered file,
and a test checks this tuple names exactly the registered ``hemm-*`` benchmarks."""


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
        members=MEMBERS,
        groups=("hemm",),
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
