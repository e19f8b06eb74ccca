"""Exports of a run's per-request results: JSONL or CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Literal, TextIO

from lmmprobe.store.sqlite import Store

ExportFormat = Literal["jsonl", "csv"]


def export_run(store: Store, run_id: str, fmt: ExportFormat, out: TextIO) -> int:
    """Write one row per (model, sample, repeat): prompt, raw output, prediction, score, error.

    Returns:
        The number of rows written.

    """
    n = 0
    if fmt == "jsonl":
        for rec in store.iter_score_rows(run_id):
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
        return n
    writer: csv.DictWriter[str] | None = None
    for rec in store.iter_score_rows(run_id):
        flat = {
            k: (json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v)
            for k, v in rec.items()
        }
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(flat))
            writer.writeheader()
        writer.writerow(flat)
        n += 1
    return n


def export_run_to_file(store: Store, run_id: str, fmt: ExportFormat, path: str | Path) -> int:
    """Export to a file (UTF-8, newline handling suitable for CSV)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        return export_run(store, run_id, fmt, f)
