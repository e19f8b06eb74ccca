"""Dysca's figures for a model-output file, as its ``Dysca_compute.py`` prints them.

The hook of the ``dysca`` reader (`lmmprobe.predictions.readers.dysca`): the output file and
the ground truth it was read against (recorded in its origin) are read again, in step, and
scored by `lmmprobe.predictions.dysca.score_dysca_files` (``calculate_result`` overall and per
question majority, ``__main__``'s averages), whose parity with Robin-WZQ/Dysca @ ac202cb is
tested in ``tests/parity/test_dysca.py``. The figures are Dysca's own percentages, rounded by
its code to 2 decimals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.predictions.as_published.base import (
    PUBLISHED_FIGURES,
    Cell,
    Published,
    PublishedSource,
    PublishedTable,
)
from lmmprobe.predictions.dysca import score_dysca_files

__all__ = ["DyscaFigures", "dysca_published"]

SOURCE = "Robin-WZQ/Dysca @ ac202cb, evaluate_LVLMs/Dysca_compute.py (DyscaDataset, __main__)"
_COLUMNS = ("multi_choice_accuracy", "true_or_false_accuracy", "caption_score")


def _cell(value: Any) -> Cell:
    return "-" if value is None else value  # a None average: the reference divides by zero


def dysca_published(output: Path, ground_truth: Path) -> Published:
    """Dysca's figures for `output` against `ground_truth`, as ``Dysca_compute.py`` gives them.

    Raises:
        DataError: What `score_dysca_files` raises (unreadable or misaligned files).

    """
    result = score_dysca_files(output, ground_truth)
    overall = PublishedTable(
        "all questions",
        ("metric", "value"),
        tuple((k, _cell(v)) for k, v in result["overall"].items() if k != "question_majority"),
    )
    majorities = PublishedTable(
        "per question_majority",
        ("question_majority", *_COLUMNS),
        tuple(
            (qm, *(_cell(values[f"{qm}_{c}"]) for c in _COLUMNS))
            for qm, values in result["by_question_majority"].items()
        ),
    )
    averages = PublishedTable(
        "mean over question majorities",
        ("metric", "value"),
        tuple((k, _cell(v)) for k, v in result["averages"].items()),
    )
    return Published(
        definition="Dysca's Dysca_compute.py",
        source=SOURCE,
        tables=(overall, majorities, averages),
        notes=tuple(result["notes"]),
        extra={k: v for k, v in result.items() if k != "notes"},
    )


class DyscaFigures:
    """``--as-published`` for Dysca's output files: ``Dysca_compute.py``'s figures."""

    tool = "dysca"
    benchmark = "dysca"
    files = "Dysca's model-output JSON with its ground truth (--ground-truth)"
    versions: tuple[str, ...] = ()
    reads_rows = False
    """It reads the file again an entry at a time: ``score`` keeps none of its rows for it."""

    def recognises(self, path: Path) -> bool:
        """True: an output file read by the ``dysca`` reader answers Dysca."""
        return True

    def figure(self, source: PublishedSource) -> Published:
        """Dysca's figures, both files read again in step."""
        truth = source.detail.get("ground_truth")
        if not truth:
            raise DataError(f"--as-published: {source.path}: no ground truth recorded for it")
        return dysca_published(source.path, Path(truth))


PUBLISHED_FIGURES.register("dysca/dysca", "Dysca's Dysca_compute.py")(DyscaFigures())
