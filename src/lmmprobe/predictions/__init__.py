"""Scoring predictions made elsewhere, with the definitions of the benchmark that made them.

- ReForm-Eval: the JSON written by its ``run_loader_eval`` (`lmmprobe.predictions.reform`).
- Dysca: a model-output JSON aligned with Dysca's ground-truth JSON, scored as Dysca's
  ``Dysca_compute.py`` (`lmmprobe.predictions.dysca`).
- Rows of ``lmmprobe export`` (`lmmprobe.predictions.export`), per model, as a run would,
  optionally re-reading the raw outputs with another matcher.

`score_prediction_file` tells the formats apart and dispatches.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.metrics.text import CaptionTokenizer
from lmmprobe.predictions._stream import first_json_char, iter_jsonl
from lmmprobe.predictions.dysca import score_dysca_files
from lmmprobe.predictions.export import score_export
from lmmprobe.predictions.reform import (
    FileFormulation,
    InferMethod,
    read_records,
    score_open_ended_file,
    score_single_choice_file,
)

__all__ = [
    "FileFormulation",
    "InferMethod",
    "read_records",
    "score_dysca_files",
    "score_export",
    "score_prediction_file",
]


def score_prediction_file(
    path: str | Path,
    formulation: FileFormulation = "single_choice",
    infer_method: InferMethod = "generation",
    *,
    matcher: str | None = None,
    tokenizer: CaptionTokenizer = "none",
    ground_truth: str | Path | None = None,
) -> dict[str, Any]:
    """Score a prediction file: a Dysca output file, an ``lmmprobe export`` or a ReForm-Eval file.

    Args:
        path: The predictions.
        formulation: Formulation of a ReForm-Eval file.
        infer_method: ``generation`` (text predictions) or ``likelihood`` (option indices), for
            ReForm-Eval single-choice files.
        matcher: Re-read an export's raw outputs with this registered matcher.
        tokenizer: Caption tokenization for ReForm-Eval caption files (``none`` or ``ptb``).
        ground_truth: Dysca's ground-truth JSON; `path` is then Dysca model output.

    Returns:
        A JSON-serializable dict with ``format`` (``dysca``, ``lmmprobe-export`` or
        ``reform-eval``), the figures, ``notes`` where a quirk of the reference decided
        an outcome, and for ReForm-Eval and Dysca files ``skipped`` and ``problems``: the
        entries left out for bad input, each named in one line (the first 20).

    Raises:
        DataError: Unreadable or malformed file (with the position), no entry readable, or a
            `matcher` given for a file that is not an export.

    """
    if ground_truth is not None:
        return score_dysca_files(path, ground_truth)
    streamed = _export_lines(Path(path))
    if streamed is not None:
        # An export in JSON lines (what `lmmprobe export` writes) is read a line at a time
        # and reduced as it comes: a million rows never sit in memory as dicts and Scores.
        if formulation != "single_choice" or infer_method != "generation" or tokenizer != "none":
            raise DataError(
                f"{path} is an lmmprobe export: each row carries its own formulation and method; "
                "--formulation, --infer-method and --tokenizer apply to ReForm-Eval files only"
            )
        result = {"format": "lmmprobe-export", "matcher": matcher}
        return result | {"models": score_export(streamed, matcher=matcher)}
    entries = read_records(path)
    first = next(entries, None)
    if first is not None:
        entries = itertools.chain([first], entries)
    if first is not None and _is_export_row(first[1]):
        if formulation != "single_choice" or infer_method != "generation" or tokenizer != "none":
            raise DataError(
                f"{path} is an lmmprobe export: each row carries its own formulation and method; "
                "--formulation, --infer-method and --tokenizer apply to ReForm-Eval files only"
            )
        result = {"format": "lmmprobe-export", "matcher": matcher}
        return result | {"models": score_export(_objects(entries), matcher=matcher)}
    if matcher is not None:
        raise DataError(
            f"{path}: --matcher re-reads the raw outputs of an lmmprobe export; a ReForm-Eval "
            "file is read with ReForm-Eval's own rule"
        )
    if formulation == "single_choice":
        metrics, notes, problems = score_single_choice_file(
            None, infer_method, path, entries=entries
        )
    else:
        metrics, notes, problems = score_open_ended_file(
            None, formulation, path, tokenizer=tokenizer, entries=entries
        )
    return {
        "format": "reform-eval",
        "formulation": formulation,
        "metrics": metrics,
        "notes": notes,
        "skipped": problems.count,
        "problems": problems.lines,
    }


def _objects(entries: Iterator[tuple[str, Any]]) -> Iterator[dict[str, Any]]:
    """An export's rows held as a JSON list, each an object (named by its place when not)."""
    for where, value in entries:
        if not isinstance(value, dict):
            raise DataError(f"{where}: expected an object, got {type(value).__name__}")
        yield value


def _is_export_row(value: Any) -> bool:
    return isinstance(value, dict) and "stage" in value and "model" in value


def _export_lines(path: Path) -> Iterator[dict[str, Any]] | None:
    """The rows of an ``lmmprobe export`` in JSON lines, one at a time; None if not one.

    Told by its first line (an object with ``stage`` and ``model``, a line of its own);
    another file (a JSON document, ReForm-Eval's list) is left to `read_records`, which
    streams it too.

    Raises:
        DataError: The file cannot be read as text (named as `read_records` names it).

    """
    if first_json_char(path) != "{":
        return None  # a JSON array or no JSON: never read as lines (a one-line array is whole)
    lines = iter_jsonl(path)
    try:
        first = next(lines, None)
    except DataError:
        return None  # not JSON lines: `read_records` reads (or refuses) it, an entry at a time
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
