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
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
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
    "EntryProblems",
    "UnreadableFile",
    "XlsxLimits",
    "first_json_char",
    "iter_entries",
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


MAX_PROBLEMS = 20
"""Entries left out named one by one (`EntryProblems`); the rest are counted."""


@dataclass
class EntryProblems:
    """Entries of a file left out for bad input: the first `MAX_PROBLEMS` named, all counted."""

    lines: list[str] = field(default_factory=list)
    """One line each: ``FILE:#N: FIELD: why`` (``FILE:LINE: ...`` in JSON Lines)."""
    count: int = 0

    def add(self, exc: DataError) -> None:
        """Count an entry left out, naming it while fewer than `MAX_PROBLEMS` are."""
        self.count += 1
        if len(self.lines) < MAX_PROBLEMS:
            self.lines.append(str(exc))


def _first_line_object(path: Path, within: Path | None) -> tuple[bool, bool]:
    """(the first non-blank line is a JSON object by itself, another non-blank line follows).

    Each line is read with a bounded ``readline``: a file of one endless line is not read
    whole (a line past `MAX_ELEMENT` is no object here; `iter_json` names it).
    """
    with open_text(path, within=within) as fh:
        while line := fh.readline(MAX_ELEMENT + 1):
            if line.strip():
                break
        else:
            return False, False
        try:
            is_object = isinstance(json.loads(line), dict)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            is_object = False
        while more := fh.readline(MAX_ELEMENT + 1):
            if more.strip():
                return is_object, True
        return is_object, False


def _object_entries(path: Path, within: Path | None) -> list[Any]:
    """The entries of a file that is one JSON object: its ``data`` list, else the object.

    Members are read one at a time; only ``data`` is kept once seen. Without it, the object is
    one entry, so the members held until the end are at most `MAX_ELEMENT` in all (their JSON
    lengths): an object of many large members is refused, never held whole.

    Raises:
        DataError: ``data`` is not a list, or an object without one is past `MAX_ELEMENT`.

    """
    members: dict[str | None, Any] = {}
    held = 0
    for _, key, value in iter_json(path, within):
        if key == "data":
            members = {"data": value}
            held = -1  # found: nothing else is kept
        elif held >= 0:
            held += len(json.dumps(value))
            if held > MAX_ELEMENT:
                members, held = {}, -2  # too big to be one entry: kept only if data comes
            else:
                members[key] = value
    if "data" in members:
        records = members["data"]
        if not isinstance(records, list):
            raise DataError(f"{path}: data: expected a list of predictions")
        return records
    if held == -2:
        raise DataError(
            f"{path}: an object of more than {MAX_ELEMENT >> 20} MiB with no data list: neither "
            "a list of predictions nor one entry"
        )
    return [members]


def iter_entries(path: Path, within: Path | None = None) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each entry of a list of records, read an entry at a time.

    The layouts ReForm-Eval's files come in: a JSON array (`where` is ``FILE:#N``, N from 1),
    JSON Lines (``FILE:LINE``; a file whose first non-blank line is an object and that has
    another line), or a JSON object: its ``data`` list when it has one (a ``{"data": [...]}``
    wrapper, that list one element of at most `MAX_ELEMENT`), else the object itself as the one
    entry. Entries are yielded as decoded; which ones are records is the caller's to say.

    Raises:
        DataError: The file is none of these, an entry is malformed, cut off, larger than
            `MAX_ELEMENT` or nested past `MAX_NESTING` (`iter_json`, `iter_jsonl`), or the
            file is not text.
        UnreadableFile: Not a regular file, or a link leaving `within`.

    """
    first = first_json_char(path, within)
    lines, more = _first_line_object(path, within) if first == "{" else (False, False)
    if first == "[":
        for n, _, value in iter_json(path, within):
            yield f"{path}:#{n}", value
    elif first == "{" and not (lines and more):
        for n, value in enumerate(_object_entries(path, within), start=1):
            yield f"{path}:#{n}", value
    else:
        for n, value in iter_jsonl(path, within):
            yield f"{path}:{n}", value


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
