"""MMMU's figure as ``main_parse_and_eval.py`` computes it, behind the ``--as-published`` hook.

The reproduction itself is `lmmprobe.predictions.mmmu_published` (random letters, seed 42, its
subject order); this hook reads the joined rows of any reader (an MMMU ``output.json`` folder,
an lmms-eval log, a VLMEvalKit table) into MMMU's ``output.json`` entries and lays the result
out as the script's ``Overall-DISCIPLINE`` / ``Overall`` table (3 decimals, as it prints them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lmmprobe.data.base import DataError
from lmmprobe.metrics.benchmark_choice import MMMU_MAX_GOLDS
from lmmprobe.predictions.answer_keys import plain_id
from lmmprobe.predictions.as_published.base import (
    ANY_READER,
    PUBLISHED_FIGURES,
    Published,
    PublishedSource,
    PublishedTable,
)
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.mmmu_published import (
    MmmuItem,
    MmmuPublished,
    mmmu_as_published,
    mmmu_subject,
)
from lmmprobe.schema import Sample

__all__ = ["MmmuScript", "mmmu_items", "mmmu_published_figure"]


def mmmu_items(
    rows: Sequence[tuple[Sample, ImportedPrediction]], where: str | Path = "predictions"
) -> dict[str, list[MmmuItem]]:
    """MMMU's ``output.json`` entries of the joined rows, by subject, in file order.

    The options come from the local copy (the file's ``index2ans`` is built from the same
    dataset); the gold is the file's where it records one (what MMMU's script compares with),
    else the local copy's.

    Raises:
        DataError: A file's answer list longer than `MMMU_MAX_GOLDS` (named at `where`, its
            row and id): MMMU's ``eval_open`` tests each text candidate against each answer,
            time the script would spend on such a list, here refused (docs/definitions.md).

    """
    out: dict[str, list[MmmuItem]] = {}
    for sample, pred in rows:
        m = sample.metadata
        letters = tuple(m.get("option_letters") or ())
        texts = list(m.get("option_texts") or ())
        qtype = str(m.get("question_type") or "")
        local = list(m.get("answers") or sample.answer)  # type: ignore[arg-type]
        gold = pred.gold if pred.gold is not None else (local[0] if len(local) == 1 else local)
        sid = plain_id(sample.id, "mmmu")
        if isinstance(gold, list) and len(gold) > MMMU_MAX_GOLDS:
            raise DataError(
                f"{where}: row {pred.row} (id {sid}): answer: {len(gold):,} answers, more "
                f"than {MMMU_MAX_GOLDS} (MMMU's items have a few): not scored as published"
            )
        out.setdefault(mmmu_subject(sid), []).append(
            MmmuItem(
                id=sid,
                question_type=qtype,
                answer=gold,
                response=pred.prediction,
                all_choices=letters,
                index2ans=dict(zip(letters, texts, strict=True)),
                # The mmmu reader's parsed-answers layout ({id: answer}) keeps "parsed".
                parsed="parsed" in pred.fields,
            )
        )
    return out


def mmmu_published_figure(p: MmmuPublished) -> Published:
    """MMMU's result as the script prints it: ``Overall-DISCIPLINE`` rows, then ``Overall``."""
    rows: list[tuple[str, int, str]] = [
        (f"Overall-{name}", n, f"{acc:.3f}") for name, (acc, n) in p.domains.items() if n
    ]
    rows.append(("Overall", sum(n for _, n in p.subjects.values()), f"{p.overall:.3f}"))
    return Published(
        definition="MMMU's main_parse_and_eval.py, random letters included",
        source="MMMU-Benchmark/MMMU @ bb0b95a, mmmu/main_parse_and_eval.py",
        tables=(PublishedTable("by discipline", ("subset", "n", "acc"), tuple(rows)),),
        notes=(
            f"{len(p.guessed)} letters drawn at random (seed 42, in MMMU's subject order); "
            f"unrounded overall {p.overall!r}",
        ),
        extra={
            "overall": p.overall,
            "domains": {k: {"acc": a, "num": n} for k, (a, n) in p.domains.items() if n},
            "subjects": {k: {"acc": a, "num": n} for k, (a, n) in p.subjects.items()},
            "guessed": dict(p.guessed),
        },
        detail=p,
    )


class MmmuScript:
    """MMMU's ``main_parse_and_eval.py`` over the joined rows of any reader."""

    tool = ANY_READER
    benchmark = "mmmu"
    files = "any reader's MMMU answers, with --benchmark mmmu"
    versions: tuple[str, ...] = ()

    def recognises(self, path: Path) -> bool:
        """Never from the file alone: MMMU's figure is asked for with ``--benchmark mmmu``."""
        return False

    def figure(self, source: PublishedSource) -> Published:
        """MMMU's figures over the joined rows (`mmmu_as_published`)."""
        return mmmu_published_figure(mmmu_as_published(mmmu_items(source.rows, source.path)))


PUBLISHED_FIGURES.register(f"{ANY_READER}/mmmu", "MMMU's main_parse_and_eval.py")(MmmuScript())
