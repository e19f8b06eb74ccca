"""Streaming reads shared by the prediction readers: hashes, JSONL, JSON, CSV/TSV and xlsx rows.

Nothing here loads a file whole. JSON Lines and JSON arrays or objects are read by
`lmmprobe.data.json_stream` (a record at a time, its text decoding and bounds; re-exported
here); CSV/TSV by `csv`; xlsx by openpyxl's read-only mode, when installed.

Every file is opened by `open_regular` (`lmmprobe.data.files`, shared with benchmark copies):
a regular file only, and a file found inside a folder only where its links stay inside that
folder. One rule bounds what is held at once: a JSON element of an array or object, a JSON
Lines line and a CSV/TSV field are each at most `MAX_ELEMENT`, and nested at most
`MAX_NESTING` levels (the data loader's limit). An xlsx is checked from its zip directory,
then by a streamed count of its XML elements, before openpyxl opens it (`XLSX_LIMITS`,
`lmmprobe.data.files.check_xlsx`).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.files import (
    CHUNK,
    MAX_COLUMNS,
    MAX_ELEMENT,
    XLSX_LIMITS,
    UnreadableFile,
    XlsxLimits,
    bounded_lines,
    broken_xlsx,
    check_workbook,
    open_regular,
)
from lmmprobe.data.json_stream import first_json_char, iter_json, iter_jsonl, open_text
from lmmprobe.data.rows import MAX_NESTING
from lmmprobe.schema.text import repeated_column

__all__ = [
    "CHUNK",
    "MAX_ELEMENT",
    "MAX_NESTING",
    "XLSX_LIMITS",
    "UnreadableFile",
    "XlsxLimits",
    "first_json_char",
    "iter_json",
    "iter_jsonl",
    "iter_table",
    "open_regular",
    "open_text",
    "sha256_of",
]


def sha256_of(path: Path, files: list[Path] | None = None, within: Path | None = None) -> str:
    """Hex SHA-256 of a file, or of `files` (sorted, each name then its bytes) for a folder.

    Each file is opened by `open_regular`: inside the folder `path` (or `within`, for a file
    found beside another).
    """
    digest = hashlib.sha256()
    if files is None:
        files = [path]
        named = False
    else:
        files = sorted(files)
        named = True
        within = path
    for f in files:
        if named:
            # The name's bytes as on disk: a name that is not UTF-8 hashes as well.
            digest.update(os.fsencode(f.relative_to(path).as_posix()) + b"\0")
        with open_regular(f, within) as fh:
            while block := fh.read(CHUNK):
                digest.update(block)
    return digest.hexdigest()


def iter_table(path: Path, within: Path | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, {column: value})`` for each data row of a CSV, TSV or xlsx table.

    Row numbers count the header as row 1, as a spreadsheet shows them. CSV and TSV values are
    strings; xlsx values keep their cell types.

    Raises:
        DataError: An unknown extension, xlsx without openpyxl installed, a CSV/TSV that is
            not text, has more than `MAX_COLUMNS` columns, or a field or line longer than
            `MAX_ELEMENT`.
        UnreadableFile: Not a regular file, a link leaving `within`, or an .xlsx that is not
            a readable spreadsheet or passes `XLSX_LIMITS`.

    """
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        yield from _iter_xlsx(path, within)
        return
    if suffix not in (".csv", ".tsv"):
        raise DataError(f"{path}: a table must be .csv, .tsv or .xlsx")
    # Long model outputs exceed csv's 128 KiB default; the element limit bounds a field as it
    # bounds a JSON element (the limit is the csv module's, process-wide).
    csv.field_size_limit(MAX_ELEMENT)
    with open_text(path, newline="", within=within) as fh:
        reader = csv.DictReader(
            bounded_lines(fh, path), delimiter="\t" if suffix == ".tsv" else ","
        )
        n = 1
        try:
            names = list(reader.fieldnames or ())
            if len(names) > MAX_COLUMNS:  # each row would be a dict that wide
                raise DataError(
                    f"{path}:1: {len(names):,} columns; a table of predictions has at most "
                    f"{MAX_COLUMNS:,} (a spreadsheet's limit): is it the right file?"
                )
            # A row's dict would keep the last of two columns of one name silently.
            if twice := repeated_column(names):
                raise DataError(f"{path}:1: {twice}")
            for n, row in enumerate(reader, start=2):
                yield n, dict(row)
        except csv.Error as exc:
            raise DataError(f"{path}:row {n + 1}: not a readable table row: {exc}") from None


def _iter_xlsx(path: Path, within: Path | None) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        # Optional, and not in the lock: imported by name so the type checker needs no stubs.
        openpyxl = importlib.import_module("openpyxl")
    except ImportError as exc:
        raise DataError(
            f"{path}: reading .xlsx needs openpyxl (pip install openpyxl), or save the table as "
            ".tsv (VLMEvalKit: PRED_FORMAT=tsv)"
        ) from exc
    with open_regular(path, within) as fh:
        check_workbook(path, fh, XLSX_LIMITS)
        try:
            book = openpyxl.load_workbook(fh, read_only=True, data_only=True)
        except Exception as exc:  # openpyxl's errors on a broken workbook have many types
            raise broken_xlsx(path, exc) from None
        try:
            sheet = book.worksheets[0]
            # The sheet's stated size is not trusted: a stated ``A1:XFD1048576`` would pad
            # every row to 16,384 cells and add empty rows to a million.
            sheet.reset_dimensions()
            rows = sheet.iter_rows(values_only=True)
            try:
                header = next(rows, None)
            except Exception as exc:  # the sheet's XML, read as the rows are
                raise broken_xlsx(path, exc) from None
            if header is None:
                return
            names = [str(h) if h is not None else "" for h in header]
            if twice := repeated_column(names):  # as a .csv's header: never the last silently
                raise DataError(f"{path}:1: {twice}")
            try:
                for n, values in enumerate(rows, start=2):
                    yield n, dict(zip(names, values, strict=False))
            except Exception as exc:
                raise broken_xlsx(path, exc) from None
        finally:
            book.close()
