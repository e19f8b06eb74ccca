"""Streaming reads shared by the prediction readers: hashes, JSONL, JSON, CSV/TSV and xlsx rows.

Nothing here loads a file whole. JSON Lines are read line by line; a top-level JSON array or
object is read element by element with `json.JSONDecoder.raw_decode` over a bounded buffer
(the standard library's decoder, fed 1 MiB chunks: memory is bounded by the largest single
element, not the file); CSV/TSV by `csv`; xlsx by openpyxl's read-only mode, when installed.
``ijson`` is not in the lock, and this covers the layouts the readers meet (an array of
records, an object of records keyed by id).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError

__all__ = [
    "CHUNK",
    "first_json_char",
    "iter_json",
    "iter_jsonl",
    "iter_table",
    "sha256_of",
]

CHUNK = 1 << 20
"""Bytes read at a time (1 MiB)."""

_WS = " \t\r\n"


def sha256_of(path: Path, files: list[Path] | None = None) -> str:
    """Hex SHA-256 of a file, or of `files` (sorted, each name then its bytes) for a folder."""
    digest = hashlib.sha256()
    if files is None:
        files = [path]
        named = False
    else:
        files = sorted(files)
        named = True
    for f in files:
        if named:
            digest.update(f.relative_to(path).as_posix().encode() + b"\0")
        with f.open("rb") as fh:
            while block := fh.read(CHUNK):
                digest.update(block)
    return digest.hexdigest()


def first_json_char(path: Path) -> str:
    """The first non-space character of a text file ("" when empty or unreadable)."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            while chunk := fh.read(4096):
                stripped = chunk.lstrip(_WS)
                if stripped:
                    return stripped[0]
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON Lines file.

    Raises:
        DataError: A line is not JSON (named ``FILE:LINE``).

    """
    with path.open(encoding="utf-8-sig") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{n}: not a JSON value: {exc.msg}") from exc


class _Chunks:
    """A text buffer over a file that grows by `CHUNK` and drops what was consumed."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        if self.eof:
            return False
        block = self.fh.read(CHUNK)
        if not block:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + block
        self.pos = 0
        return True

    def skip_ws(self) -> str:
        """The next non-space character (not consumed), or "" at the end."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def value(self, decoder: json.JSONDecoder, where: str) -> Any:
        """Decode one JSON value at the cursor, reading more until it is whole."""
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.more():
                    continue
                raise DataError(f"{where}: not valid JSON: {exc.msg}") from exc
            # A number or literal ending exactly at the buffer's end may continue in the next
            # chunk ("12" of "123"): read on before trusting it.
            if end == len(self.buf) and not self.eof and self.more():
                continue
            self.pos = end
            return value


def iter_json(path: Path) -> Iterator[tuple[int, str | None, Any]]:
    """``(position, key, value)`` for each element of a top-level JSON array or object.

    Positions count from 1; `key` is the object's key, None for an array's element. The file is
    read in chunks: memory holds one element at a time.

    Raises:
        DataError: The file is not a JSON array or object, or breaks off (named ``FILE:#N``).

    """
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8-sig") as fh:
        s = _Chunks(fh)
        opener = s.skip_ws()
        if opener not in ("[", "{"):
            raise DataError(f"{path}: expected a JSON array or object, got {opener or 'nothing'!r}")
        closer = "]" if opener == "[" else "}"
        s.pos += 1
        n = 0
        while True:
            c = s.skip_ws()
            if c == closer:
                return
            if n:
                if c != ",":
                    raise DataError(f"{path}:#{n + 1}: expected ',' or {closer!r}, got {c!r}")
                s.pos += 1
                s.skip_ws()
            n += 1
            where = f"{path}:#{n}"
            key: str | None = None
            if opener == "{":
                key = s.value(decoder, where)
                if not isinstance(key, str):
                    raise DataError(f"{where}: expected a key")
                if s.skip_ws() != ":":
                    raise DataError(f"{where}: expected ':' after the key {key!r}")
                s.pos += 1
                s.skip_ws()
            if s.skip_ws() == "":
                raise DataError(f"{where}: the file ends inside the JSON {opener}")
            yield n, key, s.value(decoder, where)


def iter_table(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, {column: value})`` for each data row of a CSV, TSV or xlsx table.

    Row numbers count the header as row 1, as a spreadsheet shows them. CSV and TSV values are
    strings; xlsx values keep their cell types.

    Raises:
        DataError: An unknown extension, or xlsx without openpyxl installed.

    """
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        yield from _iter_xlsx(path)
        return
    if suffix not in (".csv", ".tsv"):
        raise DataError(f"{path}: a table must be .csv, .tsv or .xlsx")
    csv.field_size_limit(sys.maxsize)  # long model outputs exceed csv's 128 KiB default
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ",")
        for n, row in enumerate(reader, start=2):
            yield n, dict(row)


def _iter_xlsx(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        # Optional, and not in the lock: imported by name so the type checker needs no stubs.
        openpyxl = importlib.import_module("openpyxl")
    except ImportError as exc:
        raise DataError(
            f"{path}: reading .xlsx needs openpyxl (pip install openpyxl), or save the table as "
            ".tsv (VLMEvalKit: PRED_FORMAT=tsv)"
        ) from exc
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            return
        names = [str(h) if h is not None else "" for h in header]
        for n, values in enumerate(rows, start=2):
            yield n, dict(zip(names, values, strict=False))
    finally:
        book.close()
