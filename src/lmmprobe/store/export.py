"""Exports of a run's per-request results: JSONL or CSV."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

from lmmprobe._inert import inert_csv
from lmmprobe.store.sqlite import Store

ExportFormat = Literal["jsonl", "csv"]

Columns = Callable[[dict[str, Any]], dict[str, Any]]
"""Columns computed from a row and added to it (or replacing its own of the same name)."""


def _rows(store: Store, run_id: str, columns: Columns | None) -> Iterator[dict[str, Any]]:
    for rec in store.iter_score_rows(run_id):
        yield rec if columns is None else {**rec, **columns(rec)}


def export_run(
    store: Store, run_id: str, fmt: ExportFormat, out: TextIO, columns: Columns | None = None
) -> int:
    """Write one row per (model, sample, repeat): prompt, raw output, prediction, score, error.

    CSV text cells that would start a spreadsheet formula (``=``, ``+``, ``-``, ``@``...) get a
    leading ``'`` (`lmmprobe._inert.inert_csv`); JSON lines hold the values as stored.

    Args:
        store: The store holding the run.
        run_id: The run.
        fmt: ``jsonl`` or ``csv``.
        out: Where to write.
        columns: Columns read from each row by a layer above the store, added to it (the CLI
            adds the answer and thinking as scoring reads them, `lmmprobe.parse.thinking`).

    Returns:
        The number of rows written.

    """
    n = 0
    if fmt == "jsonl":
        for rec in _rows(store, run_id, columns):
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
        return n
    writer: csv.DictWriter[str] | None = None
    for rec in _rows(store, run_id, columns):
        # Text from models and imported files that a spreadsheet would run as a formula is
        # written inert (`inert_csv`); numbers stay numbers.
        flat = {
            k: inert_csv(json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v)
            for k, v in rec.items()
        }
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(flat))
            writer.writeheader()
        writer.writerow(flat)
        n += 1
    return n


def export_run_to_file(
    store: Store,
    run_id: str,
    fmt: ExportFormat,
    path: str | Path,
    columns: Columns | None = None,
) -> int:
    """Export to a file (UTF-8, newline handling suitable for CSV); `columns` as `export_run`."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        return export_run(store, run_id, fmt, f, columns)
