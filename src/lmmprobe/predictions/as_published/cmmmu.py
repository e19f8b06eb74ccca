"""CMMMU's figure as ``eval/eval_script.py`` computes it, behind the ``--as-published`` hook.

The reproduction is `lmmprobe.metrics.cmmmu.cmmmu_evaluate` (CMMMU's reading, its random
answers drawn from seed 42 in its order); this hook reads the joined rows of any reader (CMMMU's
own response file, ``{"id", "type", "response"}`` lines, read with ``--field
prediction=response``; an lmms-eval log; a VLMEvalKit table) into the script's rows and lays the
result out as the table it prints: each discipline's correct, entries and accuracy, then
``Overall``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lmmprobe.metrics.cmmmu import (
    CMMMU_CATEGORIES,
    CMMMU_COMMIT,
    CMMMU_SEED,
    CmmmuItem,
    CmmmuResult,
    cmmmu_evaluate,
)
from lmmprobe.predictions.answer_keys import plain_id
from lmmprobe.predictions.as_published.base import (
    ANY_READER,
    PUBLISHED_FIGURES,
    Cell,
    Published,
    PublishedSource,
    PublishedTable,
)
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.schema import Sample

__all__ = ["CmmmuScript", "cmmmu_items", "cmmmu_published_figure"]


def cmmmu_items(rows: Sequence[tuple[Sample, ImportedPrediction]]) -> list[CmmmuItem]:
    """The script's rows for the joined rows, in file order.

    Type, discipline and options come from the local copy (the script reads them from its data
    file); the gold is the file's where it records one, else the local copy's; the response is
    the file's text as written (the script reads it unstripped).
    """
    out = []
    for sample, pred in rows:
        m = sample.metadata
        letters = list(m.get("option_letters") or ())
        texts = list(m.get("option_texts") or ())
        local = sample.answer if isinstance(sample.answer, list) else [str(sample.answer)]
        gold = pred.gold if isinstance(pred.gold, str) else local[0]
        out.append(
            CmmmuItem(
                id=plain_id(sample.id, "cmmmu"),
                type=str(m.get("question_type") or ""),
                answer=gold,
                response=pred.prediction,
                category=str(m.get("category") or ""),
                index2ans=dict(zip(letters, texts, strict=True)),
            )
        )
    return out


def cmmmu_published_figure(result: CmmmuResult) -> Published:
    """CMMMU's table as ``eval_script.py`` prints it: one row per discipline, then Overall."""
    rows: list[tuple[Cell, ...]] = []
    for category, name in CMMMU_CATEGORIES.items():
        right, n = result.categories.get(category, (0, 0))
        # evaluate_response gives acc 0 (an int) for a discipline with no row.
        rows.append((name, right, n, right / n if n else 0))
    right, n = result.overall
    rows.append(("Overall", right, n, right / n if n else 0.0))
    drawn = len(result.guessed)
    return Published(
        definition="CMMMU's eval_script.py, random answers included",
        source=f"CMMMU-Benchmark/CMMMU @ {CMMMU_COMMIT[:7]}, eval/eval_script.py and "
        "eval/utils/eval_utils.py (evaluate_response)",
        tables=(
            PublishedTable(
                "by discipline", ("Subject", "Correct Num", "Entries Num", "Acc"), tuple(rows)
            ),
        ),
        notes=(
            f"{drawn} answer{'' if drawn == 1 else 's'} drawn at random (seed {CMMMU_SEED}, in "
            f"CMMMU's discipline order); {sum(result.correct[i] for i in result.guessed)} of "
            f"{drawn} right",
        ),
        extra={
            "guessed": dict(result.guessed),
            "correct": {k: v for k, v in result.correct.items()},
        },
        detail=result,
    )


class CmmmuScript:
    """CMMMU's ``eval_script.py`` over the joined rows of any reader."""

    tool = ANY_READER
    benchmark = "cmmmu"
    files = "any reader's CMMMU answers, with --benchmark cmmmu"
    versions: tuple[str, ...] = ()

    def recognises(self, path: Path) -> bool:
        """Never from the file alone: CMMMU's figure is asked for with ``--benchmark cmmmu``."""
        return False

    def figure(self, source: PublishedSource) -> Published:
        """CMMMU's figures over the joined rows (`cmmmu_evaluate`)."""
        return cmmmu_published_figure(cmmmu_evaluate(cmmmu_items(source.rows)))


PUBLISHED_FIGURES.register(f"{ANY_READER}/cmmmu", "CMMMU's eval_script.py")(CmmmuScript())
