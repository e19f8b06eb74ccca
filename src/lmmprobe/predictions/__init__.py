"""Scoring predictions made elsewhere, with the definitions of the benchmark that made them.

Other tools' files (lmms-eval logs, VLMEvalKit tables, MMMU and MathVista outputs, ReForm-Eval's
prediction JSON, Dysca's outputs with their ground truth) are read by the registered readers
(`lmmprobe.predictions.readers`) and scored on one path (`lmmprobe.predictions.importing`); the
tools' own figures are their readers' ``--as-published`` hooks
(`lmmprobe.predictions.as_published`: ReForm-Eval's ``metric_eval`` by
`lmmprobe.predictions.reform`, Dysca's ``Dysca_compute.py`` by `lmmprobe.predictions.dysca`).

Rows of ``lmmprobe export`` (`lmmprobe.predictions.export`) are scored per model, as a run
would, optionally re-reading the raw outputs with another matcher: `export_rows` tells an
export apart, `score_prediction_file` scores one.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.predictions._stream import first_json_char, iter_entries, iter_jsonl
from lmmprobe.predictions.dysca import score_dysca_files
from lmmprobe.predictions.export import score_export
from lmmprobe.predictions.reform import FileFormulation, InferMethod

__all__ = [
    "FileFormulation",
    "InferMethod",
    "export_rows",
    "is_csv_export",
    "score_dysca_files",
    "score_export",
    "score_prediction_file",
]


def export_rows(path: str | Path) -> Iterator[dict[str, Any]] | None:
    """The rows of the ``lmmprobe export`` at `path`, an entry at a time; None if it is not one.

    Told by its first entry (an object with ``stage`` and ``model``): JSON lines (what
    ``lmmprobe export`` writes) or a JSON list. Any other file, or one that cannot be read as
    JSON, is None: it is another tool's, whose reader says what is wrong with it.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        streamed = _export_lines(path)
        if streamed is not None:
            return streamed
        if first_json_char(path) != "[":
            return None
        entries = iter_entries(path)
        first = next(entries, None)
    except DataError:
        return None
    if first is None or not _is_export_row(first[1]):
        return None
    return _objects(itertools.chain([first], entries))


def score_prediction_file(path: str | Path, *, matcher: str | None = None) -> dict[str, Any]:
    """Score the rows of an ``lmmprobe export`` per model, as a run scores them.

    Args:
        path: The export (JSON lines, or a JSON list of rows).
        matcher: Re-read the raw outputs with this registered matcher.

    Returns:
        A JSON-serializable dict: ``format`` (``lmmprobe-export``), ``matcher`` and ``models``
        (each model's figures).

    Raises:
        DataError: The file is not an export (another tool's file is read by its reader:
            ``lmmprobe score FILE``), or a row is malformed (with its position).

    """
    rows = export_rows(path)
    if rows is None:
        raise DataError(
            f"{path}: not an lmmprobe export (no row with stage and model); another tool's "
            "file is read by its registered reader (lmmprobe score FILE, "
            "lmmprobe.predictions.importing.score_file)"
        )
    # Reduced as read: a million rows never sit in memory as dicts and Scores.
    return {"format": "lmmprobe-export", "matcher": matcher} | {
        "models": score_export(rows, matcher=matcher)
    }


def _objects(entries: Iterator[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
    """An export's rows held as a JSON list, each an object (named by its place when not)."""
    for where, value in entries:
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected an object, got {type(value).__name__}")
        yield value


_CSV_EXPORT_COLUMNS = frozenset({"model", "sample_id", "repeat", "key", "stage"})
"""Columns every ``lmmprobe export --format csv`` header holds (`lmmprobe.store.export`)."""


def is_csv_export(path: str | Path) -> bool:
    """Whether `path` is an ``lmmprobe export --format csv`` (told by its header; never raises).

    Such a file is a spreadsheet's copy of a run: every value is text there (JSON lists and
    objects quoted, formula-like cells marked with ``'``), so it is not read back as an export
    (`export_rows` reads the JSON lines), and a mapped reader would merge its models' rows.
    """
    path = Path(path)
    try:
        if not path.is_file():
            return False
        with path.open(encoding="utf-8", errors="replace", newline="") as f:
            first = f.readline(65536)
    except OSError:
        return False
    try:
        header = next(csv.reader([first]), [])
    except csv.Error:
        return False
    return {name.strip() for name in header} >= _CSV_EXPORT_COLUMNS


def _is_export_row(value: Any) -> bool:
    return isinstance(value, dict) and "stage" in value and "model" in value


def _export_lines(path: Path) -> Iterator[dict[str, Any]] | None:
    """The rows of an ``lmmprobe export`` in JSON lines, one at a time; None if not one.

    Told by its first line (an object with ``stage`` and ``model``, a line of its own);
    another file (a JSON document, ReForm-Eval's list) is left to `export_rows`' other
    check.

    Raises:
        DataError: The file cannot be read as text.

    """
    if first_json_char(path) != "{":
        return None  # a JSON array or no JSON: never read as lines (a one-line array is whole)
    lines = iter_jsonl(path)
    try:
        first = next(lines, None)
    except DataError:
        return None  # not JSON lines: read (or refused) as a JSON document
    if first is None or not _is_export_row(first[1]):
        return None
    return _each_row(path, first, lines)


def _each_row(
    path: Path, first: tuple[int, Any], rest: Iterator[tuple[int, Any]]
) -> Iterator[dict[str, Any]]:
    yield first[1]
    for n, value in rest:
        if not isinstance(value, dict):
            raise DataError(f"{path}:{n}: expected an object, got {type(value).__name__}")
        yield value
