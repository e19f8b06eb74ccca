"""ReForm-Eval's figures for its prediction file, as its ``run_loader_eval.metric_eval`` gives them.

The hook of the ``reform`` reader (`lmmprobe.predictions.readers.reform`): the file is read
again an entry at a time and scored by `lmmprobe.predictions.reform` (ReForm-Eval's accuracy
over its per-sample matrix, format-hit rate and instability; OCR / KIE and caption metrics),
whose parity with FudanDISC/ReForm-Eval @ df1cfa7b is tested in ``tests/parity/test_reform.py``.
The formulation is the one the file was read with (``--formulation``, recorded in its origin),
else told from its first entry: ``answer_options`` a single choice (an integer prediction:
likelihood inference), ``references`` captions. OCR and KIE entries look alike: they need
``--formulation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from lmmprobe.data.base import DataError
from lmmprobe.metrics.text import CaptionTokenizer
from lmmprobe.predictions._stream import iter_entries
from lmmprobe.predictions.as_published.base import (
    PUBLISHED_FIGURES,
    Cell,
    Published,
    PublishedSource,
    PublishedTable,
)
from lmmprobe.predictions.reform import (
    FileFormulation,
    InferMethod,
    score_open_ended_file,
    score_single_choice_file,
)

__all__ = ["ReformEvalFigures", "reform_published", "reform_settings"]

SOURCE = "FudanDISC/ReForm-Eval @ df1cfa7b, run_loader_eval.py metric_eval, utils/run_utils.py"


def reform_settings(
    path: Path, detail: Mapping[str, str]
) -> tuple[FileFormulation, InferMethod, CaptionTokenizer]:
    """The formulation, inference method and caption tokenizer to score `path` with.

    Those recorded in `detail` (``--formulation``, ``--infer-method``, ``--tokenizer``); the
    formulation and method not given are told from the file's first entry.

    Raises:
        DataError: The first entry does not tell (an OCR or KIE entry), or the file is empty.

    """
    formulation = detail.get("formulation")
    method = detail.get("infer_method")
    if formulation is None or (formulation == "single_choice" and method is None):
        first = next(iter_entries(path), None)
        if first is None:
            raise DataError(f"{path}: no entry to score")
        where, value = first
        entry = value if isinstance(value, dict) else {}
        if formulation is None:
            if "answer_options" in entry:
                formulation = "single_choice"
            elif "references" in entry:
                formulation = "generation"
            else:
                raise DataError(
                    f"{where}: an OCR or KIE entry (no answer_options, no references): say "
                    "which with --formulation ocr or --formulation kie"
                )
        if formulation == "single_choice" and method is None:
            method = "likelihood" if type(entry.get("prediction")) is int else "generation"
    # The CLI checked each against its choices (`one_of`) before recording it.
    return (
        cast(FileFormulation, formulation),
        cast(InferMethod, method or "generation"),
        cast(CaptionTokenizer, detail.get("tokenizer", "none")),
    )


def reform_published(path: Path, detail: Mapping[str, str] | None = None) -> Published:
    """ReForm-Eval's figures for the file at `path` (`reform_settings` says how it is read).

    Raises:
        DataError: The file cannot be read, or no entry can (`lmmprobe.predictions.reform`).

    """
    formulation, method, tokenizer = reform_settings(path, detail or {})
    entries = iter_entries(path)
    if formulation == "single_choice":
        metrics, notes, problems = score_single_choice_file(None, method, path, entries=entries)
    else:
        metrics, notes, problems = score_open_ended_file(
            None,
            formulation,
            path,
            tokenizer=tokenizer,
            entries=entries,
        )
    rows: list[tuple[Cell, ...]] = [
        (name, value) for name, value in metrics.items() if isinstance(value, int | float | str)
    ]
    extra: dict[str, Any] = {
        "format": "reform-eval",
        "formulation": formulation,
        "metrics": metrics,
        "skipped": problems.count,
        "problems": problems.lines,
    }
    if formulation == "single_choice":
        extra["infer_method"] = method
    return Published(
        definition="ReForm-Eval's metric_eval",
        source=SOURCE,
        tables=(PublishedTable(f"ReForm-Eval ({formulation})", ("metric", "value"), tuple(rows)),),
        notes=tuple(notes),
        extra=extra,
    )


class ReformEvalFigures:
    """``--as-published`` for ReForm-Eval's prediction files: ``metric_eval``'s figures."""

    tool = "reform-eval"
    benchmark = "reform-eval"
    files = "ReForm-Eval's prediction JSON (run_loader_eval)"
    versions: tuple[str, ...] = ()
    reads_rows = False
    """It reads the file again an entry at a time: ``score`` keeps none of its rows for it."""

    def recognises(self, path: Path) -> bool:
        """True: a ReForm-Eval file holds no benchmark but ReForm-Eval's own."""
        return True

    def figure(self, source: PublishedSource) -> Published:
        """ReForm-Eval's figures, the file read again an entry at a time."""
        return reform_published(source.path, source.detail)


PUBLISHED_FIGURES.register("reform-eval/reform-eval", "ReForm-Eval's run_loader_eval metric_eval")(
    ReformEvalFigures()
)
