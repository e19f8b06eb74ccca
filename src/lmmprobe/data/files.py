"""Files read from outside: regular files only, and .xlsx workbooks checked before any reader opens them.

Both the prediction readers (`lmmprobe.predictions._stream`) and benchmark copies read by a
data source (HEMM's Memotion ``labels.xlsx``) open files a user points at; this module is the
one place that decides what may be opened and what a workbook may hold.

`open_regular` opens a regular file only: a FIFO or a device such as ``/dev/zero`` would hang
the read or never end; a file found inside a folder is opened only where its links stay inside
that folder. An xlsx is checked from its zip directory, then by a streamed count of its XML
elements (`check_xlsx`, under `XLSX_LIMITS`), before openpyxl or pandas opens it. A parquet
file's decoded size is checked from its footer and then counted by a bounded scan of every
column (`check_parquet`, or `check_parquets` for the files of one source together, under
`PARQUET_LIMITS`) before its rows are read or converted; a compressed data file's
decompressed size is counted as it streams, under the same rule (`check_compressed`).
"""

from __future__ import annotations

import bz2
import codecs
import csv
import functools
import gzip
import io
import json
import lzma
import os
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO
from xml.parsers import expat

from lmmprobe._file_kind import (
    NotRegularFile,
    open_regular_file,
)
from lmmprobe.data.arrow_files import watch_arrow_files
from lmmprobe.data.base import DataError
from lmmprobe.data.parquet_pages import PageHeaderError, column_pages
from lmmprobe.data.rows import MAX_NESTING, nesting_reason

__all__ = [
    "ARCHIVE_MEMBERS",
    "CHUNK",
    "COMPRESSIONS",
    "JSON_SUFFIXES",
    "MAX_COLUMNS",
    "MAX_ELEMENT",
    "PARQUET_LIMITS",
    "TABLE_CELLS",
    "XLSX_LIMITS",
    "FileTooLarge",
    "ParquetLimits",
    "UnreadableFile",
    "XlsxLimits",
    "bounded_lines",
    "broken_xlsx",
    "check_arrow",
    "check_compressed",
    "check_csv",
    "check_json",
    "check_parquet",
    "check_parquets",
    "check_workbook",
    "check_xlsx",
    "decompressed",
    "open_regular",
    "read_regular",
    "unpack_zips",
]

CHUNK = 1 << 20
"""Bytes read at a time (1 MiB)."""

MAX_ELEMENT = 64 << 20
"""The largest single element read (characters): a JSON array's or object's element, a JSON
Lines line, a CSV/TSV field or line: 64 MiB.

Far above any prediction record; it bounds the memory a malformed file can take, where the
decoder cannot tell a broken element from one that has not been read whole yet (a line without
its newline, an unterminated string).
"""

MAX_COLUMNS = 16_384
"""Columns a CSV or TSV table may have: an .xlsx sheet's own limit (column XFD)."""


@dataclass(frozen=True)
class XlsxLimits:
    """What an .xlsx may hold, checked before openpyxl opens it.

    A zip states each part's uncompressed size, and Python's `zipfile` stops a part at that
    size (a part that holds more fails its checksum), so these are checked before any XML is
    read. Then every XML part is parsed as a stream (expat, element by element, nothing kept)
    and its elements counted by local name whatever their namespace prefix: openpyxl holds
    every shared string in memory at once and spends about 15 µs on each, and reads each row
    whole, so shared strings, cells per row, rows and cells are bounded too.
    """

    part: int = 256 << 20
    """The largest uncompressed part (a sheet, the shared strings): 256 MiB."""
    total: int = 512 << 20
    """All parts together, uncompressed: 512 MiB."""
    ratio: int = 200
    """The most a part over 1 MiB, or all the parts together when over 1 MiB, may be compressed
    (uncompressed / compressed size): text a tool wrote compresses about 5 to 20 times; a run
    of one character about 1,000 times. The whole archive's ratio catches many small parts,
    each under 1 MiB."""
    members: int = 10_000
    """Parts in the zip (a workbook written by a tool has a dozen)."""
    shared_strings: int = 1_000_000
    """Entries of the shared-string table (``<si>`` elements, whatever their prefix)."""
    row_cells: int = 16_384
    """Cells in one row (``<c>`` elements): Excel's own limit of columns. openpyxl reads a
    whole row into memory before it yields it; a VLMEvalKit table has under 20 columns."""
    rows: int = 1_048_576
    """Rows in a sheet: Excel's own limit."""
    cells: int = 5_000_000
    """Cells in a sheet: a VLMEvalKit table has under 20 columns and 100,000 rows (2,000,000
    cells); openpyxl spends several microseconds on each."""
    tag: int = 1 << 20
    """The longest tag (bytes from its ``<`` to its ``>``): 1 MiB. expat (and openpyxl's
    parser) holds a tag whole and parses it again each time more of it is fed, so one tag of
    256 MiB would take hours; a tag a tool writes is under 1 KiB."""
    attributes: int = 10_000
    """Attributes of one tag: expat slows sharply past tens of thousands (a tag of 100,000
    took 1 s, of 400,000 6 s); a cell has two or three."""
    rich_text: int = 100_000
    """Elements inside the strings (``<si>`` and ``<is>``) beyond each one's first: rich-text
    runs (``<r>``), their font properties and texts, phonetic runs. openpyxl builds an object
    for each, about 100 µs a run (a string of 1,000,000 runs took 98 s and 531 MB); a table
    pandas writes has none, a hand-formatted one some thousands."""
    elements: int = 20_000_000
    """Elements in all the parts together: a sheet at the cell limit with a shared string in
    each cell holds about 16,000,000; the scan spends about 1 µs on each, openpyxl more."""


XLSX_LIMITS = XlsxLimits()
"""The limits every .xlsx is read under (docs/predictions.md lists them)."""

TABLE_CELLS = XLSX_LIMITS.cells
"""Cells of a CSV table read whole (pandas holds every cell at once): a sheet's limit."""


class UnreadableFile(DataError):
    """The file itself cannot be read, whatever its layout.

    Not a regular file, a link leaving its folder, a broken or oversized spreadsheet. Detection
    reports it as it is, rather than as a layout no reader recognises.
    """


def open_regular(path: Path, within: Path | None = None, *, what: str = "predictions") -> IO[bytes]:
    """`path` opened for reading as bytes, when it is a regular file.

    Args:
        path: The file.
        within: The folder `path` was found in (a model's ``SUBJECT/output.json``, a table
            beside another): `path` must still lie inside it once its links are followed.
            None for a path the user gave, whose links are the user's choice.
        what: What the file holds, for the error (``"predictions"``, ``"a benchmark copy"``).

    Raises:
        UnreadableFile: `path` is a FIFO, a device, a socket or a folder (reading one would
            hang or never end), or leaves `within` through a link.
        OSError: It cannot be opened (missing, no permission).

    """
    if within is not None:
        try:
            real, root = path.resolve(), within.resolve()
        except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError for a link loop
            raise UnreadableFile(
                f"{path}: a link that loops back on itself (or cannot be followed); lmmprobe "
                "reads only files inside the folder it was given: put the file there"
            ) from None
        if not real.is_relative_to(root):
            raise UnreadableFile(
                f"{path}: a link to {real}, outside {within}; lmmprobe reads only files inside "
                "the folder it was given: copy the file there"
            )
    try:
        return open_regular_file(path, what)
    except NotRegularFile as exc:
        raise UnreadableFile(str(exc)) from None


class FileTooLarge(UnreadableFile):
    """A regular file larger than its reader's cap (`read_regular`)."""


def read_regular(path: Path, cap: int, *, what: str, within: Path | None = None) -> bytes:
    """The bytes of `path`, when it is a regular file of at most `cap` bytes.

    `open_regular`'s rule (no FIFO, device or folder: reading one could hang or never end),
    and a cap checked before reading and again on the bytes read (the file may grow).

    Args:
        path: The file.
        cap: The most bytes read.
        what: What the file holds, for the error (``"a judge prompt template"``).
        within: The folder `path` was found in, as for `open_regular` (None: the user's path).

    Raises:
        UnreadableFile: Not a regular file, or a link leaving `within`.
        FileTooLarge: Larger than `cap`.
        OSError: It cannot be opened or read.

    """
    with open_regular(path, within, what=what) as f:
        size = os.fstat(f.fileno()).st_size
        # One byte past the size tells a file that grew after it was measured; only then is
        # the rest read, up to one byte past the cap. (``read(cap + 1)`` would allocate the
        # whole cap up front, however small the file: 12 readers of a 1 KB image asked for
        # 2 GB of address space.)
        raw = b"" if size > cap else f.read(size + 1)
        if size < len(raw) <= cap:
            raw += f.read(cap + 1 - len(raw))
    if size > cap or len(raw) > cap:
        raise FileTooLarge(f"{path}: larger than {cap:,} bytes, the most lmmprobe reads for {what}")
    return raw


class _XlsxOverLimit(Exception):
    """Raised from the XML scan's handler the moment a count passes its limit."""


_NAMES_KEPT = 1_000
"""Distinct element names whose local name the scan remembers (a workbook uses a few dozen)."""


@dataclass
class _Totals:
    """What the scan counts over the whole workbook, part after part."""

    elements: int = 0
    rich_text: int = 0


_CONTENT_TYPES = "[Content_Types].xml"


class _ContentTypes:
    """The content types ``[Content_Types].xml`` gives the parts: by name, else by extension.

    Read by the scan of that part (its ``Default`` and ``Override`` elements); at most
    `_NAMES_KEPT` defaults and `XlsxLimits.members` overrides (one per part) are kept.
    """

    def __init__(self) -> None:
        self.defaults: dict[str, str] = {}
        self.overrides: dict[str, str] = {}

    def add(self, kind: str, attrs: list[str]) -> None:
        """Record a ``Default`` or ``Override`` element's content type."""
        values = {k.rpartition(":")[2]: v for k, v in zip(attrs[::2], attrs[1::2], strict=False)}
        content = values.get("ContentType", "")
        if kind == "Default" and len(self.defaults) < _NAMES_KEPT:
            self.defaults[values.get("Extension", "").lower()] = content
        elif kind == "Override" and len(self.overrides) < XLSX_LIMITS.members:
            self.overrides[values.get("PartName", "").lstrip("/").lower()] = content

    def xml(self, name: str) -> bool:
        """Whether part `name` is XML by its name or the content type given it."""
        lower = name.lower()
        content = self.overrides.get(lower)
        if content is None:
            content = self.defaults.get(lower.rpartition(".")[2] if "." in lower else "")
        return lower.endswith((".xml", ".rels")) or (content or "").lower().endswith("xml")


class _PartScan:
    """Counts one part's elements by local name, whatever their namespace prefix.

    openpyxl matches elements by namespace and local name, so a prefix (``<x:si>``, ``<é:si>``)
    changes nothing for it; here the prefix is dropped and every ``si``, ``row`` and ``c`` is
    counted, a superset of what openpyxl reads. Every ``c`` after a ``row`` starts is counted in
    that row (openpyxl reads the row's cells into one list before it yields the row: a row of
    3,000,000 cells took 1.7 GB). Inside a string (``si``, ``is``) every element after the
    first counts as rich text, and every element of every part counts towards `_Totals`.
    """

    def __init__(
        self,
        path: Path,
        part: str,
        limits: XlsxLimits,
        totals: _Totals,
        types: _ContentTypes | None = None,
    ) -> None:
        self.path = path
        self.part = part
        self.limits = limits
        self.totals = totals
        self.types = types  # filled from this part's elements: it is the content types
        self.string_depth = 0  # the depth of the string being read, 0 outside one
        self.string_elements = 0
        self.shared = 0
        self.rows = 0
        self.cells = 0
        self.row_cells = 0
        self.row_label = ""
        self.depth = 0
        # Local name of each qualified name met, computed once: a part repeats a few names
        # (a hostile one may hold millions of distinct ones: only the first are kept).
        self.kinds: dict[str, str] = {}

    def start(self, name: str, attrs: list[str]) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            # expat keeps every open element: 80 million nested in a 240 MB part took 10 GB.
            raise _XlsxOverLimit(
                f"{self.path}: {self.part} nests elements more than {MAX_NESTING} deep: not "
                "a spreadsheet a tool wrote"
            )
        totals = self.totals
        totals.elements += 1
        if totals.elements > self.limits.elements:
            raise _XlsxOverLimit(
                f"{self.path}: more than {self.limits.elements:,} XML elements (the last in "
                f"{self.part}); save the table as .tsv instead (VLMEvalKit: PRED_FORMAT=tsv)"
            )
        if self.string_depth:
            self.string_elements += 1
            if self.string_elements > 1:
                totals.rich_text += 1
                if totals.rich_text > self.limits.rich_text:
                    raise _XlsxOverLimit(
                        f"{self.path}: more than {self.limits.rich_text:,} rich-text elements "
                        f"in its strings (runs, their fonts and texts; the last in {self.part}): "
                        "save the table as .tsv instead (VLMEvalKit: PRED_FORMAT=tsv)"
                    )
        kind = self.kinds.get(name)
        if kind is None:
            kind = name.rpartition(":")[2]
            if len(self.kinds) < _NAMES_KEPT:
                self.kinds[name] = kind
        if self.types is not None and kind in ("Default", "Override"):
            self.types.add(kind, attrs)
        if kind in ("si", "is") and not self.string_depth:
            self.string_depth = self.depth
            self.string_elements = 0
        if kind == "c":
            self.cells += 1
            self.row_cells += 1
            if self.row_cells > self.limits.row_cells:
                raise _XlsxOverLimit(
                    f"{self.path}: row {self.row_label} of {self.part} has more than "
                    f"{self.limits.row_cells:,} cells (Excel's own limit of columns): not a "
                    "table a tool wrote"
                )
            if self.cells > self.limits.cells:
                raise _XlsxOverLimit(
                    f"{self.path}: {self.part} holds more than {self.limits.cells:,} cells; "
                    "save the table as .tsv instead (VLMEvalKit: PRED_FORMAT=tsv)"
                )
        elif kind == "row":
            self.rows += 1
            self.row_cells = 0
            self.row_label = _row_label(attrs, self.rows)
            if self.rows > self.limits.rows:
                raise _XlsxOverLimit(
                    f"{self.path}: {self.part} has more than {self.limits.rows:,} rows "
                    "(Excel's own limit): not a table a tool wrote"
                )
        elif kind == "si":
            self.shared += 1
            if self.shared > self.limits.shared_strings:
                raise _XlsxOverLimit(
                    f"{self.path}: more than {self.limits.shared_strings:,} shared strings (in "
                    f"{self.part}); save the table as .tsv instead (VLMEvalKit: PRED_FORMAT=tsv)"
                )

    def end(self, _name: str) -> None:
        if self.depth == self.string_depth:
            self.string_depth = 0
        self.depth -= 1


def _row_label(attrs: list[str], ordinal: int) -> str:
    """The row's stated number (``r="7"``) where it is a plain one, else its place in the part."""
    for key, value in zip(attrs[::2], attrs[1::2], strict=False):
        if key.rpartition(":")[2] == "r" and value.isdigit() and len(value) <= 7:
            return value
    return str(ordinal)


# A tag (or any markup) from its "<" to just before its ">": what is not a quote or an angle
# bracket, and quoted values (which may hold ">"). Possessive: read once, never backtracked.
_TAG = re.compile(rb"""<(?:[^<>"']++|"[^"<]*+"|'[^'<]*+')*+""")
_ATTRIBUTE = re.compile(rb"""=\s*+["']""")
_ATTRIBUTE_BYTES = 5
"""The fewest bytes an attribute takes in a tag (`` a=""``)."""


@functools.lru_cache(maxsize=4)
def _long_gap(size: int) -> re.Pattern[bytes]:
    """A ``<`` followed by `size` bytes or more without another ``<``."""
    return re.compile(rb"<[^<]{%d,}" % size)


class _TagBound:
    """Refuses a part's first tag over `XlsxLimits.tag` bytes or `XlsxLimits.attributes`.

    Run on each block before expat is fed it, so no long tag reaches expat. Linear in the part:
    no ``<`` may stand inside a tag, so a tag over either limit starts a gap between two ``<``
    at least as long as the shorter tag over one of them (`gap`); such gaps are found by one
    regular expression (in a tool's file only long texts make them), and only their tags, and
    the one still open at the block's end (kept for the next block, at most `XlsxLimits.tag`
    bytes), are measured.
    """

    def __init__(self, path: Path, part: str, limits: XlsxLimits) -> None:
        self.path = path
        self.part = part
        self.limits = limits
        self.open = b""  # the tag still open at the end of the blocks seen, from its "<"
        self.gap = _long_gap(min(limits.tag, _ATTRIBUTE_BYTES * limits.attributes))
        # A UTF-16 part is measured in UTF-8: its "<" and quote bytes also stand inside other
        # characters (U+3C00-U+3CFF), which would cut a tag's gap short.
        self.utf16: codecs.IncrementalDecoder | None = None
        self.first = True

    def feed(self, block: bytes) -> None:
        """Check `block`, the part's next bytes, with the tag left open before it.

        Raises:
            _XlsxOverLimit: A tag is over the limits, or the open one already is.

        """
        if self.first:
            self.first = False
            codec = _utf16(block)
            if codec is not None:
                self.utf16 = codecs.getincrementaldecoder(codec)(errors="replace")
        if self.utf16 is not None:
            block = self.utf16.decode(block).encode("utf-8", "surrogatepass")
        data = self.open + block if self.open else block
        self.open = b""
        for gap in self.gap.finditer(data):
            self._measure(data, gap.start())
        last = data.rfind(b"<")
        if last >= 0 and self._measure(data, last):
            self.open = data[last:]

    def _measure(self, data: bytes, at: int) -> bool:
        """Check the tag at `at`; return whether it is still open at the end of `data`."""
        match = _TAG.match(data, at)
        end = match.end() if match else at
        # Stopped at ">" or "<": the tag ends there. At the end of the data, or at a quote not
        # closed before the data's end: it goes on in the next block.
        still_open = end == len(data) or (data[end] in b"\"'" and data.find(b"<", end) < 0)
        size = (len(data) if still_open else end) - at
        if size > self.limits.tag:
            raise _XlsxOverLimit(
                f"{self.path}: {self.part} has a tag of more than {self.limits.tag:,} bytes: "
                "not a spreadsheet a tool wrote"
            )
        if (
            size >= _ATTRIBUTE_BYTES * self.limits.attributes
            and len(_ATTRIBUTE.findall(data, at, end)) > self.limits.attributes
        ):
            raise _XlsxOverLimit(
                f"{self.path}: {self.part} has a tag of more than {self.limits.attributes:,} "
                "attributes: not a spreadsheet a tool wrote"
            )
        return still_open


def _utf16(head: bytes) -> str | None:
    """The UTF-16 codec a part's first bytes start, as expat tells it, else None.

    expat reads a part as UTF-16 by a byte-order mark, and without one as big-endian when its
    first byte is 0 and as little-endian when its second is (no XML starts with a NUL).
    """
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"
    if head[:1] == b"\x00":
        return "utf-16-be"
    if head[1:2] == b"\x00":
        return "utf-16-le"
    return None


def _scan_part(
    path: Path,
    book: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    limits: XlsxLimits,
    totals: _Totals,
    xml: bool,
    types: _ContentTypes | None = None,
) -> None:
    """Parse part `info` as a stream, refusing it as soon as a count passes `limits`.

    Every part is parsed, whatever its first bytes: openpyxl's parser (the same expat) reads a
    sheet after a megabyte of spaces, or in UTF-16 without a byte-order mark, and a sheet may
    bear any name its workbook's relations give it. A part that is not XML (an image) stops
    expat at its first bytes; one declared XML (`xml`: by its content type or its name) that
    does not parse is refused, any other is left to openpyxl, which stops at the same error
    if it reads the part at all, having read no more than was counted here.

    expat is fed the part in `CHUNK`-sized pieces; its handlers count and keep nothing, so
    memory is the parser's buffer and its stack of open elements (bounded by `MAX_NESTING`),
    time is linear in the part (no tag it is fed is over `XlsxLimits.tag` bytes or
    `XlsxLimits.attributes`, where expat slows sharply: `_TagBound`), and the first element past a limit stops it. An
    entity-expansion bomb is stopped by expat's own amplification limit.
    """
    scan = _PartScan(path, info.filename, limits, totals, types)
    bound = _TagBound(path, info.filename, limits)
    parser = expat.ParserCreate()
    parser.ordered_attributes = True
    parser.StartElementHandler = scan.start
    parser.EndElementHandler = scan.end
    with book.open(info) as fh:
        try:
            while block := fh.read(CHUNK):
                bound.feed(block)  # before expat holds a long tag: it would take hours
                parser.Parse(block, False)
            parser.Parse(b"", True)
        except _XlsxOverLimit as exc:
            raise UnreadableFile(str(exc)) from None
        except expat.ExpatError as exc:
            if not xml:
                return
            raise UnreadableFile(
                f"{path}: not a readable .xlsx spreadsheet: its XML does not parse "
                f"({info.filename}: {exc})"[:500]
            ) from None


def check_xlsx(path: Path, book: zipfile.ZipFile, limits: XlsxLimits) -> None:
    """Refuse a workbook over `limits`: its zip directory, then a streamed count of its XML."""
    infos = book.infolist()
    if len(infos) > limits.members:
        raise UnreadableFile(
            f"{path}: an .xlsx of {len(infos):,} parts (at most {limits.members:,}): not a "
            "spreadsheet a tool wrote"
        )
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        if size > limits.part:
            raise UnreadableFile(
                f"{path}: part {info.filename} unpacks to {size:,} bytes (at most "
                f"{limits.part >> 20} MiB per part); save the table as .tsv instead "
                "(VLMEvalKit: PRED_FORMAT=tsv)"
            )
        if size > 1 << 20 and size > limits.ratio * max(info.compress_size, 1):
            raise UnreadableFile(
                f"{path}: part {info.filename} unpacks to {size:,} bytes from "
                f"{info.compress_size:,} (more than {limits.ratio} times): a zip bomb, not a "
                "spreadsheet a tool wrote"
            )
    if total > limits.total:
        raise UnreadableFile(
            f"{path}: its parts unpack to {total:,} bytes (at most {limits.total >> 20} MiB); "
            "save the table as .tsv instead (VLMEvalKit: PRED_FORMAT=tsv)"
        )
    packed = sum(info.compress_size for info in infos)
    if total > 1 << 20 and total > limits.ratio * max(packed, 1):
        raise UnreadableFile(
            f"{path}: its {len(infos):,} parts unpack to {total:,} bytes from {packed:,} (more "
            f"than {limits.ratio} times): a zip bomb, not a spreadsheet a tool wrote"
        )
    # Parts are named by the workbook's own relations and content types, not by fixed names, so
    # every part is counted, the content types first (they say which parts are XML).
    totals = _Totals()
    infos.sort(key=lambda info: info.filename != _CONTENT_TYPES)
    types = _ContentTypes()
    for info in infos:
        if info.filename == _CONTENT_TYPES:
            _scan_part(path, book, info, limits, totals, True, types)
        else:
            _scan_part(path, book, info, limits, totals, types.xml(info.filename))


def broken_xlsx(path: Path, exc: Exception) -> UnreadableFile:
    """One line for an .xlsx openpyxl could not read, naming what it found wrong."""
    if isinstance(exc, zipfile.BadZipFile | zipfile.LargeZipFile):
        why = f"not a zip archive ({exc})"
    elif type(exc).__name__ == "ParseError":  # xml.etree's, from the XML of one of its parts
        why = f"its XML does not parse ({exc})"
    elif isinstance(exc, KeyError):
        why = f"a part is missing ({exc})"
    else:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return UnreadableFile(f"{path}: not a readable .xlsx spreadsheet: {why}"[:500])


def check_workbook(path: Path, fh: IO[bytes], limits: XlsxLimits = XLSX_LIMITS) -> None:
    """Refuse the .xlsx open in `fh` unless it is a zip within `limits` (`check_xlsx`).

    `fh` is left at its start, for openpyxl (or pandas) to read next.

    Raises:
        UnreadableFile: An empty file, not a zip, or a workbook over `limits`; one line naming
            `path`.

    """
    if not fh.read(1):
        raise UnreadableFile(f"{path}: an empty file, not an .xlsx spreadsheet")
    fh.seek(0)
    try:
        with zipfile.ZipFile(fh) as archive:
            check_xlsx(path, archive, limits)
    except UnreadableFile:
        raise
    except Exception as exc:  # zipfile's errors on a broken archive have several types
        raise broken_xlsx(path, exc) from None
    fh.seek(0)


def bounded_lines(fh: TextIO, path: Path) -> Iterator[str]:
    """`fh`'s lines, each at most `MAX_ELEMENT` characters (one without an end is not read whole).

    Raises:
        DataError: A longer line, naming `path` and the line.

    """
    n = 0
    while line := fh.readline(MAX_ELEMENT + 1):
        n += 1
        if len(line) > MAX_ELEMENT:
            raise DataError(f"{path}:{n}: a line longer than {MAX_ELEMENT >> 20} MiB")
        yield line


def check_csv(path: Path, fh: IO[bytes], delimiter: str = ",", cells: int = TABLE_CELLS) -> None:
    """Refuse the CSV open in `fh` unless it is UTF-8 text within the table readers' bounds.

    For a table a reader then holds whole (pandas' ``read_csv``): the file is scanned once
    with `csv` (a row at a time, in bounded memory), at most `MAX_COLUMNS` columns a row,
    `MAX_ELEMENT` characters a field and a line, and `cells` cells in all. pandas spends
    memory on every column and every cell it holds, so these bound what it is handed.
    `fh` is left at its start (when it can seek: a decompressed stream cannot).

    Raises:
        DataError: Not UTF-8, a row of too many columns, a field or line too long, too many
            cells, or a row `csv` cannot read; one line naming `path` and the row.

    """
    # The csv module's field limit is process-wide; the prediction readers set the same.
    csv.field_size_limit(MAX_ELEMENT)
    text = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
    n, total = 0, 0
    try:
        for n, row in enumerate(csv.reader(bounded_lines(text, path), delimiter=delimiter), 1):
            if len(row) > MAX_COLUMNS:
                raise DataError(
                    f"{path}:row {n}: {len(row):,} columns; a table has at most "
                    f"{MAX_COLUMNS:,} (a spreadsheet's limit): is it the right file?"
                )
            total += len(row)
            if total > cells:
                raise DataError(
                    f"{path}:row {n}: more than {cells:,} cells, the most lmmprobe reads from "
                    "a table it holds whole: is it the right file?"
                )
    except csv.Error as exc:
        raise DataError(f"{path}:row {n + 1}: not a readable table row: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:row {n + 1}: not UTF-8 text ({exc})") from None
    finally:
        text.detach()  # `fh` stays open, for the reader that comes next
    if fh.seekable():
        fh.seek(0)


@dataclass(frozen=True)
class ParquetLimits:
    """What a parquet file (or the parquet files of one source) may decode to.

    Dictionary encoding stores a repeated value once, delta (prefix) encoding a value sharing
    its predecessor's bytes in a few bytes, and compression a run of one byte in almost none:
    a 1 MB file may hold one 1 MB value in a million rows, a terabyte once decoded. A file's
    footer states each column chunk's uncompressed size (its dictionary page included), but
    that is the file's own claim and counts a dictionary once. So the stated sizes are checked
    first, before anything is read, and then every column is counted as pyarrow decodes it, a
    few rows at a time (dictionary-encoded text still encoded: each dictionary once and one
    index a row), stopping as soon as the count passes the limit.
    """

    ratio: int = 32
    """The most a file's values may decode to, as a multiple of its size: parquet's
    compression and encodings shrink a real dataset (text, labels, images already compressed
    as JPEG or PNG) a few times, rarely ten; a repeated value, hundreds to millions of
    times."""
    floor: int = 64 << 20
    """What any file may decode to whatever its size (64 MiB), so a small file of short text
    is never refused. For the files of one source together (GQA's configs, an ``hf:``
    folder) the floor applies once and the ratio to their total size."""
    chunks: int = 32_768
    """Column chunks (row groups times columns) a file may have: each costs pyarrow a reader
    and buffers, and 50,000 row groups of one row, or 50,000 columns, took the check minutes
    and aborted the process out of memory; a real dataset file has tens to hundreds."""
    pages: int = 1_000_000
    """Pages a file may have: each page's header is read before pyarrow decodes it (a page
    a tool writes holds up to 1 MiB or 20,000 values: a million pages is a large dataset)."""


PARQUET_LIMITS = ParquetLimits()
"""The limits every parquet file a benchmark or the hf source reads is checked against."""

_PARQUET_WIDTHS = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
"""Bytes a decoded value of each fixed-width physical type takes."""

_OFFSET = 4
"""Bytes each decoded text or binary value takes beside its own (its offset)."""

_SCAN_BATCH = 256
"""Rows decoded at a time by the scan: a row's values are never more than their pages hold,
so a batch of 1 MB values is 256 MB at most before it is counted (benchmarks/parquet_check.py
times the scan)."""


_DELTA_BATCH = 16
"""Rows decoded at a time from a column with prefix-encoded (DELTA_BYTE_ARRAY) text: a value
there may share its predecessor's bytes, so its pages bound no row; 16 rows of one 1 MB value
stated in a few bytes are 16 MB before they are counted (256 of them took the check 400 MB)."""


def check_parquet(path: Path, *, what: str, limits: ParquetLimits = PARQUET_LIMITS) -> None:
    """Refuse a parquet file whose values decode to more than `limits` allow.

    Args:
        path: The parquet file.
        what: What the file should hold, for the error (``"GQA's images"``, ``"a dataset"``).
        limits: The limits.

    Raises:
        UnreadableFile: Not a regular file, not a readable parquet file, or decoding to more
            than the limits allow; one line naming `path`.
        OSError: It cannot be opened.

    """
    check_parquets([path], what=what, limits=limits)


def _shared_budget(
    paths: Sequence[Path], limits: ParquetLimits, what: str, one: str, many: str
) -> tuple[int, str]:
    """The decoded bytes `paths` may give together, and how a refusal names them.

    One budget for a source's files (``max(floor, ratio x their total size)``), so that many
    files each under the limit cannot add up past it. `one` and `many` name the files
    ("a parquet file", "parquet files").

    Raises:
        DataError: A path is not a regular file.
        OSError: A file cannot be opened.

    """
    total = 0
    for path in paths:
        with open_regular(path, what=what) as fh:
            total += os.fstat(fh.fileno()).st_size
    where = (
        f"{one} of {total:,} bytes ({limits.ratio} times its size"
        if len(paths) == 1
        else f"{len(paths)} {many} of {total:,} bytes in all ({limits.ratio} times their size"
    )
    return max(limits.floor, limits.ratio * total), where


def check_parquets(
    paths: Sequence[Path], *, what: str, limits: ParquetLimits = PARQUET_LIMITS
) -> None:
    """Refuse parquet files whose values together decode to more than `limits` allow.

    The files of one source are read together (GQA keeps the images it needs from every
    images file; ``hf:`` converts every file of a folder into one copy), so one budget covers
    them: the floor once, the ratio over their total size. Each file's footer is checked
    first (its column chunks, then their stated sizes, which include dictionary pages, so no
    dictionary is read past the limit); then every column of every file is counted as it
    decodes (`ParquetLimits`), so an encoding or a footer that understates is caught too.

    Args:
        paths: The parquet files of one source.
        what: What the files should hold, for the error.
        limits: The limits.

    Raises:
        UnreadableFile: A file that is not a regular file, not a readable parquet file, has
            too many column chunks, or the files decoding to more than the limits allow; one
            line naming the file.
        OSError: A file cannot be opened.

    """
    limit, where = _shared_budget(paths, limits, what, "a parquet file", "parquet files")
    used = 0
    for path in paths:
        used = _check_one(path, what=what, limits=limits, limit=limit, used=used, where=where)


def _check_one(
    path: Path, *, what: str, limits: ParquetLimits, limit: int, used: int, where: str
) -> int:
    """Check one file against what is left of `limit` after `used`; the new count."""
    import pyarrow as pa  # type: ignore[import-untyped]

    with open_regular(path, what=what) as fh:
        try:
            # Read by pyarrow's own file (through a Python file it is twice as slow), once
            # open_regular has found a regular file there (a FIFO would block the open).
            with pa.OSFile(str(path)) as source:
                return _check_parquet(source, fh, limit, used, limits)
        except _ParquetRefused as exc:
            raise UnreadableFile(f"{path}: {exc}") from None
        except _ParquetTooMany as exc:
            raise UnreadableFile(
                f"{path}: {exc}, more than the {limits.chunks:,} column chunks (row groups "
                f"times columns) lmmprobe reads from a parquet file: not {what}"
            ) from None
        except _ParquetOverLimit as exc:
            raise UnreadableFile(
                f"{path}: {exc} decodes to more than {limit:,} bytes, the most lmmprobe reads "
                f"from {where}, at least "
                f"{limits.floor >> 20} MiB): values repeated, not {what}"
            ) from None
        except (MemoryError, pa.ArrowException, OSError) as exc:
            raise _pyarrow_failure(path, exc, what, "a readable parquet file") from None
        except UnicodeDecodeError:
            # pyarrow decodes the schema's names (its column paths) as it opens the file.
            raise UnreadableFile(
                f"{path}: not a readable parquet file (a column name that is not UTF-8)"
            ) from None


def _pyarrow_failure(path: Path, exc: BaseException, what: str, kind: str) -> UnreadableFile:
    """One line for pyarrow failing on `path` (of `kind`, ``"a readable parquet file"``).

    Running out of memory, or pyarrow's own allocation failures (which name no file), say the
    file is too large to check; any other failure says it is not `kind`, in pyarrow's words.
    """
    if isinstance(exc, MemoryError):
        return UnreadableFile(
            f"{path}: too large to check (out of memory while decoding it): not {what}"
        )
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "alloc" in first:  # pyarrow's own allocation failures: not a broken file
        return UnreadableFile(f"{path}: too large to check ({first}): not {what}")
    return UnreadableFile(f"{path}: not {kind} ({first})")


class _ParquetOverLimit(Exception):
    """The decoded size passed the limit; its text names the column (``column NAME``)."""


class _ParquetTooMany(Exception):
    """The footer states more column chunks than a file may have; its text says how many."""


class _ParquetRefused(Exception):
    """A file refused for what its pages state; its text is the reason, after the file's name."""


def _check_parquet(source: Any, fh: IO[bytes], limit: int, used: int, limits: ParquetLimits) -> int:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    parquet = pq.ParquetFile(source)
    meta, schema = parquet.metadata, parquet.schema
    if meta.num_row_groups * meta.num_columns > limits.chunks:
        groups, columns = meta.num_row_groups, meta.num_columns
        raise _ParquetTooMany(
            f"{groups:,} row group{'s' * (groups != 1)} of {columns:,} column{'s' * (columns != 1)}"
        )
    # The table bound the readers and the hf source hold a dataset to, checked from the footer
    # before anything converts the file (datasets took tens of seconds on 16,386 columns).
    named = len(parquet.schema_arrow.names)
    if named > MAX_COLUMNS:
        raise _ParquetRefused(
            f"{named:,} columns, more than {MAX_COLUMNS:,} (a spreadsheet's limit): is it the "
            "right file?"
        )
    leaves = [schema.column(i) for i in range(len(schema))]
    # The stated sizes first: they include each dictionary page, so a chunk whose dictionary
    # alone passes the limit is refused before the scan would decode it.
    stated = used
    dictionary: set[str] = set()  # text leaves the scan reads still encoded
    delta: set[str] = set()  # columns of a prefix-encoded leaf, scanned a few rows at a time
    pages = _PageCount(limits.pages)
    for r in range(meta.num_row_groups):
        group = meta.row_group(r)
        for c in range(group.num_columns):
            chunk, leaf = group.column(c), leaves[c]
            count = chunk.num_values
            if leaf.physical_type == "FIXED_LEN_BYTE_ARRAY":
                width = leaf.length  # exact, whatever the encoding
            else:
                width = _PARQUET_WIDTHS.get(leaf.physical_type, _OFFSET)
            # What its pages state, each page held to the budget before pyarrow allocates it.
            in_pages = _page_sizes(fh, chunk, f"column {leaf.path}", limit - stated, pages)
            stated += max(chunk.total_uncompressed_size, in_pages, count * width)
            if stated > limit:
                raise _ParquetOverLimit(f"column {leaf.path}")
            if leaf.physical_type == "BYTE_ARRAY" and (
                chunk.has_dictionary_page or any("DICTIONARY" in e for e in chunk.encodings)
            ):
                dictionary.add(leaf.path)
            if "DELTA_BYTE_ARRAY" in chunk.encodings:
                delta.add(leaf.path.split(".")[0])
    # Then every column, as decoded: an encoding that expands (dictionary, delta, a
    # compressed run) or a footer that understates shows in the count, a batch at a time. A
    # flat column is decoded (a batch is its rows' values); a nested one is read with its
    # dictionary-encoded text still encoded, since one row may repeat a value without end.
    top = {leaf.path.split(".")[0] for leaf in leaves if "." in leaf.path}
    names = parquet.schema_arrow.names
    total = used
    measured: dict[str, tuple[Any, Any]] = {}  # each column's last dictionary and its lengths
    nested = sorted(p for p in dictionary if "." in p)
    for columns, encoded, rows in (
        ([n for n in names if n not in top and n not in delta], [], _SCAN_BATCH),
        ([n for n in names if n not in top and n in delta], [], _DELTA_BATCH),
        ([n for n in names if n in top and n not in delta], nested, _SCAN_BATCH),
        ([n for n in names if n in top and n in delta], nested, _DELTA_BATCH),
    ):
        if not columns:
            continue
        reader = pq.ParquetFile(source, read_dictionary=encoded)
        # A row group at a time: each has a dictionary of its own, and pyarrow cannot read
        # nested text still encoded across two ("Nested data conversions not implemented
        # for chunked array outputs" refused a dataset of repeated images in row groups).
        for group in range(meta.num_row_groups) if encoded else [None]:
            for batch in reader.iter_batches(
                batch_size=rows,
                row_groups=None if group is None else [group],
                columns=columns,
                use_threads=False,
            ):
                for name, column in zip(batch.schema.names, batch.columns, strict=True):
                    total += _decoded_size(column, name, measured)
                    if total > limit:
                        raise _ParquetOverLimit(f"column {name}")
    return total


@dataclass
class _PageCount:
    """The pages a file's check has read, against `ParquetLimits.pages`."""

    most: int
    seen: int = 0


def _page_sizes(fh: IO[bytes], chunk: Any, name: str, room: int, count: _PageCount) -> int:
    """The uncompressed bytes the pages of column chunk `chunk` state, read from their headers.

    pyarrow allocates a page's stated uncompressed size and decompresses the page whole before
    its values can be counted, and its footer's sizes are the file's own claim: so each
    page's header is read first (`parquet_pages.column_pages`), and a page is refused once the
    pages so far pass `room` (what is left of the budget), or when the pages together state
    more than the footer does (pyarrow would trust the pages).

    Raises:
        _ParquetOverLimit: The pages state more than `room`.
        _ParquetRefused: A header that cannot be read, too many pages, or pages disagreeing
            with the footer.

    """
    start = chunk.data_page_offset
    dictionary = chunk.dictionary_page_offset if chunk.has_dictionary_page else None
    if dictionary is not None and 0 < dictionary < start:
        start = dictionary
    total = 0
    try:
        for page in column_pages(fh, start, chunk.total_compressed_size, chunk.num_values):
            count.seen += 1
            if count.seen > count.most:
                raise _ParquetRefused(
                    f"more than {count.most:,} pages, the most lmmprobe reads from a parquet "
                    "file: not a file a tool wrote"
                )
            total += page.uncompressed_size
            if total > room:
                raise _ParquetOverLimit(name)
    except PageHeaderError as exc:
        raise _ParquetRefused(f"{name}: {exc}: a damaged or edited parquet file") from None
    if total > chunk.total_uncompressed_size:
        raise _ParquetRefused(
            f"{name}: its pages state {total:,} bytes uncompressed, its footer "
            f"{chunk.total_uncompressed_size:,}: a damaged or edited parquet file"
        )
    return total


def _decoded_size(array: Any, key: str, measured: dict[str, tuple[Any, Any]]) -> int:
    """Bytes `array` takes once decoded, its dictionaries expanded (counted, not built).

    `measured` keeps the value lengths of each dictionary met at `key` (a column's path),
    reused while the next batches share it (a row group's dictionary serves all its batches).

    Raises:
        _ParquetOverLimit: A type the count does not know (parquet stores none).

    """
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        if len(values) == 0:
            return len(array) * _OFFSET
        last = measured.get(key)
        if last is not None and _same(last[0], values):
            sizes = last[1]
        elif _binary_like(kind.value_type) and len(values) > _SCAN_BATCH + len(array):
            # A dictionary larger than the batch (one pyarrow grows from plain pages): the
            # values taken, at most a batch of them, rather than every entry again.
            taken = pc.sum(pc.binary_length(pc.take(values, array.indices))).as_py()
            return int(taken or 0) + len(array) * _OFFSET
        else:
            if _binary_like(kind.value_type):
                sizes = pc.fill_null(pc.binary_length(values), 0).cast(pa.int64())
            else:  # a dictionary of other values: each row as large as the mean value
                each = -(-_decoded_size(values, key + ".dictionary", measured) // len(values))
                sizes = pa.array([each] * len(values), pa.int64())
            measured[key] = (values, sizes)
        taken = pc.sum(pc.take(sizes, array.indices)).as_py()
        return int(taken or 0) + len(array) * _OFFSET
    if pa.types.is_struct(kind):
        return sum(
            _decoded_size(child, f"{key}.{kind.field(i).name}", measured)
            for i, child in enumerate(array.flatten())
        )
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _decoded_size(array.flatten(), f"{key}.item", measured) + len(array) * _OFFSET
    if pa.types.is_map(kind):  # its keys and items hold every map's: this array's, offsets
        start = array.offsets[0].as_py()
        length = array.offsets[-1].as_py() - start
        keys = _decoded_size(array.keys.slice(start, length), f"{key}.key", measured)
        items = _decoded_size(array.items.slice(start, length), f"{key}.value", measured)
        return keys + items + len(array) * _OFFSET
    if pa.types.is_nested(kind):
        raise _ParquetOverLimit(f"column {key} (of type {kind}, which lmmprobe does not read)")
    return int(array.nbytes)


def _same(a: Any, b: Any) -> bool:
    """Whether two arrays are one array's buffers (the dictionary a batch shares)."""
    return bool(
        len(a) == len(b)
        and [x.address if x is not None else 0 for x in a.buffers()]
        == [x.address if x is not None else 0 for x in b.buffers()]
    )


def _binary_like(kind: Any) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
    )


COMPRESSIONS = {
    ".gz": "gzip",
    ".gzip": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".lz4": "lz4",
}
"""The compressions a data file may have (by its last suffix), as `datasets` reads them."""


class _DecompressedOverLimit(Exception):
    """The decompressed bytes passed the limit."""


def decompressed(fh: IO[bytes], codec: str) -> Any:
    """`fh`'s bytes decompressed with `codec` (a value of `COMPRESSIONS`) as a binary stream.

    Nothing is decompressed until it is read; a reader bounds what it reads.
    """
    if codec == "gzip":
        return gzip.GzipFile(fileobj=fh)
    if codec == "bz2":
        return bz2.BZ2File(fh)
    if codec == "xz":
        return lzma.LZMAFile(fh)
    import pyarrow as pa

    # zstd and lz4 frames: pyarrow's own codecs (the standard library has neither). Arrow
    # then holds `fh`: the exit waits for its threads to drop it (issue 34).
    watch_arrow_files()
    return pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), codec)


def check_compressed(
    paths: Sequence[Path],
    *,
    what: str,
    limits: ParquetLimits = PARQUET_LIMITS,
    codecs: Mapping[Path, str] | None = None,
) -> None:
    """Refuse compressed files whose bytes together decompress past `limits` allow.

    A run of one byte compresses to almost nothing: a 320 KB ``.jsonl.gz`` of 300 copies of
    one 1 MB question is 300 MB once `datasets` has converted it. Each file (a suffix of
    `COMPRESSIONS`) is decompressed as a stream, a chunk at a time, and its bytes counted,
    stopping as soon as the count passes the limit: the rule of `ParquetLimits` (the floor
    once, the ratio over the files' total size), one budget for the files of one source.

    Args:
        paths: The files of one source (others than compressed ones are skipped).
        what: What the files should hold, for the error.
        limits: The limits.
        codecs: The compression of files whose bytes say so (a value of `COMPRESSIONS`),
            whatever their suffix: `datasets` unpacks a file by its first bytes. A file not
            in it is compressed when its suffix says so.

    Raises:
        UnreadableFile: A file that is not a regular file, not readable with its compression,
            or the files decompressing to more than the limits allow; one line naming the file.
        OSError: A file cannot be opened.

    """
    import pyarrow as pa

    known = codecs or {}
    found = {p: known.get(p) or COMPRESSIONS.get(p.suffix.lower()) for p in paths}
    files = {p: codec for p, codec in found.items() if codec is not None}
    limit, where = _shared_budget(
        list(files), limits, what, "a compressed file", "compressed files"
    )
    used = 0
    for path, codec in files.items():
        with open_regular(path, what=what) as fh:
            try:
                with decompressed(fh, codec) as stream:
                    while block := stream.read(CHUNK):
                        used += len(block)
                        if used > limit:
                            raise _DecompressedOverLimit
            except _DecompressedOverLimit:
                raise UnreadableFile(
                    f"{path}: decompresses to more than {limit:,} bytes, the most lmmprobe "
                    f"reads from {where}, at least {limits.floor >> 20} MiB): not {what}"
                ) from None
            except (OSError, EOFError, zlib.error, lzma.LZMAError, pa.ArrowException) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UnreadableFile(
                    f"{path}: not a readable {codec}-compressed file ({first})"
                ) from None


def check_arrow(
    paths: Sequence[Path], *, what: str, limits: ParquetLimits = PARQUET_LIMITS
) -> None:
    """Refuse Arrow IPC files (``.arrow``) whose record batches together decode past `limits`.

    An IPC stream or file may compress its buffers (zstd, lz4): 300 rows of one 1 MB
    question are 21 KB on disk and 301 MB in the copy `datasets` makes. Each file is read as
    `datasets` reads it (a stream, else a file), a record batch at a time, and the batches'
    decoded buffers counted, stopping as soon as the count passes the limit: the rule of
    `ParquetLimits`, one budget for the files of one source.

    Args:
        paths: The files of one source (others than ``.arrow`` files are skipped).
        what: What the files should hold, for the error.
        limits: The limits.

    Raises:
        UnreadableFile: A file that is not a regular file, not a readable Arrow IPC file, or
            the files decoding to more than the limits allow; one line naming the file.
        OSError: A file cannot be opened.

    """
    import pyarrow as pa

    files = [p for p in paths if p.suffix.lower() == ".arrow"]
    limit, where = _shared_budget(files, limits, what, "an Arrow file", "Arrow files")
    used = 0
    for path in files:
        with open_regular(path, what=what):
            try:
                # Mapped, not read: an uncompressed file's buffers are the file's own pages.
                with pa.memory_map(str(path)) as source:
                    # Each batch's decoded size, from its metadata, before any is decoded: a
                    # batch is decoded whole (one of 1.5 GB was allocated, then refused).
                    if used + _stated_arrow_size(pa, source) > limit:
                        raise _DecompressedOverLimit
                    source.seek(0)
                    for batch in _arrow_batches(pa, source):
                        used += batch.get_total_buffer_size()
                        if used > limit:
                            raise _DecompressedOverLimit
            except _DecompressedOverLimit:
                raise UnreadableFile(
                    f"{path}: decodes to more than {limit:,} bytes, the most lmmprobe reads "
                    f"from {where}, at least {limits.floor >> 20} MiB): values repeated or "
                    f"compressed away, not {what}"
                ) from None
            except (MemoryError, pa.ArrowException, OSError) as exc:
                raise _pyarrow_failure(path, exc, what, "a readable Arrow IPC file") from None


_ARROW_FILE_MAGIC = b"ARROW1\0\0"
"""How an Arrow IPC file (not a stream) starts: its messages follow."""


def _stated_arrow_size(pa: Any, source: Any) -> int:
    """Bytes the record and dictionary batches of the IPC stream or file in `source` decode to.

    Read from each message's metadata (its buffers' lengths) and, for a compressed body, the
    uncompressed length each buffer states in its first 8 bytes, which Arrow allocates and
    holds the buffer to: nothing is decoded. The bodies are not read (`source` is mapped).

    Raises:
        pa.ArrowInvalid: A message's metadata is not what the format says.

    """
    if source.read(len(_ARROW_FILE_MAGIC)) != _ARROW_FILE_MAGIC:
        source.seek(0)
    reader = pa.ipc.MessageReader.open_stream(source)
    total = 0
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            return total
        if message is None:
            return total
        if message.type in ("record batch", "dictionary batch"):
            try:
                total += _message_size(memoryview(message.metadata), message)
            except (struct.error, IndexError, ValueError):
                raise pa.ArrowInvalid("a batch's metadata is broken") from None


def _message_size(meta: memoryview, message: Any) -> int:
    """`_stated_arrow_size` for one batch message (its flatbuffer metadata `meta`).

    The flatbuffers, as the Arrow format defines them: Message (field 2 its header), a
    DictionaryBatch (field 1 its RecordBatch) or a RecordBatch (field 2 its buffers, each an
    offset and a length; field 3 its compression, present when the body is compressed).
    """
    header = _fb_table(meta, _fb_field(meta, _fb_table(meta, 0), 2))
    if message.type == "dictionary batch":
        header = _fb_table(meta, _fb_field(meta, header, 1))
    vector = _fb_field(meta, header, 2)
    if vector is None:
        return 0
    start = vector + _fb_u32(meta, vector)
    count = _fb_u32(meta, start)
    compressed = _fb_field(meta, header, 3) is not None
    body = memoryview(message.body) if compressed and message.body is not None else None
    total = 0
    for i in range(count):
        offset, length = struct.unpack_from("<qq", meta, start + 4 + 16 * i)
        if offset < 0 or length < 0:
            raise ValueError("negative buffer")
        if body is not None and length >= 8:
            (stated,) = struct.unpack_from("<q", body[offset : offset + 8])
            total += length - 8 if stated == -1 else stated  # -1: stored uncompressed
        else:
            total += length
    return total


def _fb_u32(meta: memoryview, at: int | None) -> int:
    if at is None or at < 0:
        raise ValueError("no such field")
    return int(struct.unpack_from("<I", meta, at)[0])


def _fb_table(meta: memoryview, at: int | None) -> int:
    """The position of the table an offset at `at` points to (the root table for 0)."""
    return at + _fb_u32(meta, at) if at is not None else _fb_u32(meta, None)


def _fb_field(meta: memoryview, table: int, index: int) -> int | None:
    """The position of field `index` of the table at `table`, or None when it is absent."""
    (back,) = struct.unpack_from("<i", meta, table)
    vtable = table - back
    if vtable < 0:
        raise ValueError("vtable outside the metadata")
    (size,) = struct.unpack_from("<H", meta, vtable)
    if 4 + 2 * index + 2 > size:
        return None
    (offset,) = struct.unpack_from("<H", meta, vtable + 4 + 2 * index)
    return table + offset if offset else None


def _arrow_batches(pa: Any, source: Any) -> Iterator[Any]:
    """The record batches of the IPC stream, or else IPC file, open in `source`, one at a time."""
    try:
        reader = pa.ipc.open_stream(source)
    except pa.ArrowInvalid:
        source.seek(0)
        file_reader = pa.ipc.open_file(source)
        for i in range(file_reader.num_record_batches):
            yield file_reader.get_batch(i)
        return
    yield from reader


JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
"""The suffixes of the JSON and JSON Lines files `datasets`' json builder reads."""

# A whole string (skipped in one match: what it holds is no structure), or one byte of
# structure. A string not closed before the end is one match to the end: matched as a lone
# quote, the scan went on inside it, and each escaped quote there started another string
# read to the end (a line of 40 KB of ``\\"`` took 15 s). Possessive: read once, never
# backtracked.
_JSON_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.?)*+(?:"|\Z)|[\[\]{},\n]', re.DOTALL)
_JSON_RUNS = re.compile(rb'(?:"(?:[^"\\]++|\\.)*+"|[^"\[\]{}]++)++|["\[\]{}]', re.DOTALL)
_JSON_SPACE = b" \t\r\n"


class _Rejoined(io.RawIOBase):
    """The bytes `head` then the rest of `fh`: a stream whose first bytes were read already."""

    def __init__(self, head: bytes, fh: IO[bytes]) -> None:
        self.head = head
        self.fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.head:
            n = min(len(b), len(self.head))
            b[:n], self.head = self.head[:n], self.head[n:]
            return n
        data = self.fh.read(len(b))
        b[: len(data)] = data
        return len(data)


def check_json(path: Path, fh: IO[bytes]) -> None:
    """Refuse the JSON or JSON Lines file open in `fh` past the bounds lmmprobe's readers keep.

    `datasets` reads a JSON Lines file a line at a time, each line whole, and a JSON array
    whole; its decoders recurse into nested values. So, as the prediction readers do, no
    record (a line, or an element of a top-level array) may be longer than `MAX_ELEMENT`
    bytes, and no value nested more than `MAX_NESTING` levels. These are checked before a
    record is decoded (a file that is not JSON is left to its reader) and at most a record
    is held: lines are read with a bound, and only a line of more than `MAX_NESTING`
    brackets is scanned for its nesting; an array is scanned a `CHUNK` at a time, outside
    its strings.

    Every field of every record is a column (a nested one a struct's field) of the table
    `datasets` makes of the file, so the distinct key paths of all its records together
    (`_KeyPaths`: ``meta`` and ``meta.a``; a list's objects' keys under the list's) are
    held to `MAX_COLUMNS` too, each record then decoded (or scanned) to count them. The
    count is the file's: `datasets` makes a table of each file (a batch of lines at a time)
    and refuses one holding a column the first has not, so no table is wider than a file.

    Raises:
        DataError: A record too long or nested too deep, or more than `MAX_COLUMNS` key
            paths; one line naming `path` and the line.

    """
    head = b""
    while len(head) < 4 and (block := fh.read(CHUNK)):
        head += block
    first = head.removeprefix(codecs.BOM_UTF8).lstrip(_JSON_SPACE)[:1]
    keys = _KeyPaths(path)
    if first == b"[":
        _check_json_array(path, head, fh, keys)
        return
    lines = io.BufferedReader(_Rejoined(head, fh), CHUNK)
    n = 0
    while line := lines.readline(MAX_ELEMENT + 1):
        n += 1
        if len(line) > MAX_ELEMENT:
            raise DataError(
                f"{path}:{n}: a line longer than {MAX_ELEMENT >> 20} MiB (at most "
                f"{MAX_ELEMENT >> 20} MiB per record)"
            )
        # Too few brackets cannot nest past the limit, too few commas cannot part more than
        # `MAX_COLUMNS` fields: most lines are not scanned.
        deep = line.count(b"[") + line.count(b"{") > MAX_NESTING + 1
        if deep or line.count(b",") >= MAX_COLUMNS:
            _check_json_line(path, n, line)
        keys.record(line, n)


_DECODED = 1 << 20
"""The longest record (bytes) `_KeyPaths` decodes whole; a longer one is scanned, since its
decoded values could take many times its size (``[{},{},...]``: 70 bytes an object)."""

_KEY_KEPT = 256
"""The longest key (characters) `_KeyPaths` keeps as it is; a longer one is kept as its hash,
so the paths held stay a few megabytes however long the keys are."""

# A string, and whether a colon follows it (a key), or one bracket. An unclosed string is
# one match to the end (see `_JSON_TOKENS`).
_JSON_KEYS = re.compile(rb'"((?:[^"\\]++|\\.?)*+)(?:("[ \t\r\n]*+:)|"|\Z)|[\[\]{}]', re.DOTALL)


_JSON_DECODER = json.JSONDecoder()


class _KeyPaths:
    """The distinct key paths of one file's JSON records, counted as they are read.

    A path is a key under its parent's path (the record itself is the root): a list's
    objects' keys lie under the list's own path, as pyarrow makes them fields of a list's
    struct. At most `MAX_COLUMNS` paths are held, each a key of at most `_KEY_KEPT`
    characters, so the count is bounded in memory whatever the file holds.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self.children: dict[int, dict[str, int]] = {}  # each path's keys, and their paths
        self.raw: dict[tuple[int, bytes], int] = {}  # the same by a key's bytes, for `_scan`

    def record(self, data: bytes, n: int) -> None:
        """Count the key paths of the record (or records side by side) in `data`.

        `n` is the line the record begins on, for the refusal.

        Raises:
            DataError: The file's key paths pass `MAX_COLUMNS` here.

        """
        if len(data) <= _DECODED:
            try:
                # UTF-8, the only text pyarrow reads (bytes given to `json.loads` are first
                # tested for other encodings, a third of the time a short record takes).
                value = _JSON_DECODER.decode(data.decode())
            except (ValueError, RecursionError):
                pass  # not one JSON value: pyarrow may still read values on one line
            else:
                if type(value) is dict:
                    self._walk(value, 0, n)
                elif type(value) is list:
                    self._walk_list(value, 0, n)
                return
        self._scan(data, n)

    def _walk(self, node: dict[str, Any], at: int, n: int) -> None:
        """Count the key paths of one decoded object, whose own path is `at`."""
        known = self.children.get(at)
        if known is None:
            known = self.children[at] = {}
        if not node.keys() <= known.keys():  # most records hold no new key
            for key in node:
                self._path(known, key, n)
        for key, value in node.items():
            kind = type(value)
            if kind is dict:
                self._walk(value, known[_kept(key)], n)
            elif kind is list and value:
                self._walk_list(value, known[_kept(key)], n)

    def _walk_list(self, items: list[Any], at: int, n: int) -> None:
        """Count the key paths of the objects in `items` (at any depth), all under `at`."""
        for item in items:
            kind = type(item)
            if kind is dict:
                self._walk(item, at, n)
            elif kind is list and item:
                self._walk_list(item, at, n)

    def _scan(self, data: bytes, n: int) -> None:
        """Count the key paths in `data` without decoding it.

        It is a record too long to decode, or text that is not one JSON value (values side
        by side, as pyarrow reads them, or a line of a JSON document printed over many
        lines, as pandas reads it). Brackets and keys are followed as they open and close,
        whatever lies between them.
        """
        opened: list[int] = []  # the path of each container open here
        values: list[int] = []  # in each, the path its next container value takes
        top = 0  # the same, outside any container
        for match in _JSON_KEYS.finditer(data):
            last = match.lastindex
            if last == 2:  # a key
                parent, raw = opened[-1] if opened else 0, match.group(1)
                path = self.raw.get((parent, raw))
                if path is None:
                    known = self.children.setdefault(parent, {})
                    path = self._path(known, _key_text(raw), n)
                    if b"\\" not in raw and len(raw) <= _KEY_KEPT:  # one text, one key
                        self.raw[parent, raw] = path
                if values:
                    values[-1] = path
                else:
                    top = path
            elif last is None and data[match.start()] in b"[{":
                path = values[-1] if values else top
                opened.append(path)
                values.append(path)
            elif last is None and opened:
                opened.pop()
                values.pop()

    def _path(self, known: dict[str, int], key: str, n: int) -> int:
        """The path of `key` among `known` (one path's keys), counted if it is new."""
        name = _kept(key)
        found = known.get(name)
        if found is not None:
            return found
        self.count += 1
        if self.count > MAX_COLUMNS:
            raise DataError(
                f"{self.path}:{n}: more than {MAX_COLUMNS:,} distinct fields, nested ones "
                "included, in its records up to here (a spreadsheet's limit of columns): is "
                "it the right file?"
            )
        known[name] = self.count
        return self.count


def _key_text(raw: bytes) -> str:
    """The key whose JSON text (between its quotes) is `raw`, as a decoder reads it.

    Bytes that are not UTF-8, or an escape that is not JSON, are kept as they are.
    """
    try:
        return str(json.loads(b'"' + raw + b'"')) if b"\\" in raw else raw.decode()
    except ValueError:
        return raw.decode("utf-8", "surrogateescape")


def _kept(key: str) -> str:
    """`key` as `_KeyPaths` keeps it: itself, or a long one as a NUL then its hash.

    Two long keys are taken for one by a chance of one in 2^64 (one path counted short).
    """
    return key if len(key) <= _KEY_KEPT else f"\0{hash(key)}"


def _check_json_line(path: Path, n: int, line: bytes) -> None:
    """Refuse line `n` of a JSON Lines file nested too deep or of too many fields.

    Each field of a record is a column of the table `datasets` builds, and its json builder
    takes time in the square of their number (100,000 fields: minutes and a gigabyte), so a
    record's own fields (the commas at its top level) are held to `MAX_COLUMNS`, a CSV row's
    limit.
    """
    depth, fields = 0, 1
    for match in _JSON_TOKENS.finditer(line):
        token = line[match.start()]
        if token in b"[{":
            depth += 1
            if depth > MAX_NESTING + 1:  # the top level is level 0
                raise DataError(f"{path}:{n}: a value {nesting_reason()}")
        elif token in b"]}":
            depth -= 1
        elif token == 0x2C and depth == 1:
            fields += 1
            if fields > MAX_COLUMNS:
                raise DataError(
                    f"{path}:{n}: a record of more than {MAX_COLUMNS:,} fields (a "
                    "spreadsheet's limit of columns): is it the right file?"
                )


def _check_json_array(path: Path, head: bytes, fh: IO[bytes], keys: _KeyPaths) -> None:
    """`check_json` for a file holding one JSON array, read from `head` then `fh`.

    The scan stops at brackets only: what lies between two (whole strings, numbers, commas)
    is one match, whose newlines and last comma are found by the bytes' own methods. Only
    at the array's own level, between its elements, is a run holding strings scanned string
    by string, for the commas outside them. Each element that is an object or a list is
    kept (no longer than `MAX_ELEMENT`) until it closes, and its key paths counted (`keys`):
    `datasets` makes a record of each element.
    """
    buf, base = head, 0  # `buf` starts at byte `base` of the file
    start, depth, line = 0, 0, 1  # where the element began; the nesting; the line reached
    opened: int | None = None  # where the element open now began (a bracket), if one is
    kept: list[bytes] = []  # its bytes before `buf`
    first_line = 1  # the line it began on
    while True:
        stop = len(buf)
        for match in _JSON_RUNS.finditer(buf):
            at, end = match.span()
            token = buf[at]
            if token in b"[{":
                depth += 1
                if depth > MAX_NESTING + 1:  # the top level is level 0
                    raise DataError(f"{path}:{line}: a value {nesting_reason()}")
                if depth == 2:
                    opened, kept, first_line = base + at, [], line
            elif token in b"]}":
                depth = max(depth - 1, 0)  # a stray closer breaks the file for its reader
                if depth == 1 and opened is not None:
                    element = b"".join([*kept, buf[max(opened - base, 0) : end]])
                    opened, kept = None, []
                    keys.record(element, first_line)
            elif token == 0x22 and end - at == 1:  # a string still open: read on
                stop = at
                break
            else:  # a run of strings, numbers, literals, commas and spaces
                line += buf.count(b"\n", at, end)
                if depth == 1 and (first := _first_comma(buf, at, end)) is not None:
                    # The element before the run's first comma, then each one after it: in
                    # a run no longer than the limit, those between two commas are shorter.
                    if base + first - 1 - start > MAX_ELEMENT:
                        break
                    if end - at <= MAX_ELEMENT:
                        start = base + (_last_comma(buf, at, end) or first)
                    else:
                        for comma in _JSON_TOKENS.finditer(buf, at, end):
                            if buf[comma.start()] == 0x2C:
                                if base + comma.start() - start > MAX_ELEMENT:
                                    break
                                start = base + comma.end()
            if base + end - start > MAX_ELEMENT:
                break
        if base + len(buf) - start > MAX_ELEMENT:  # the element is at least that long
            raise DataError(
                f"{path}:{line}: an element of its top-level array longer than "
                f"{MAX_ELEMENT >> 20} MiB (at most {MAX_ELEMENT >> 20} MiB per record)"
            )
        if opened is not None:  # an element still open: its bytes scanned so far
            kept.append(buf[max(opened - base, 0) : stop])
        # Keep what the scan stopped in (an open string), then read on: at least as much
        # again, so an open string is scanned O(log size) times, not once a chunk.
        rest = buf[stop:]
        block = fh.read(max(CHUNK, len(rest)))
        if not block:
            return
        base += stop
        buf = rest + block


def _last_comma(buf: bytes, at: int, end: int) -> int | None:
    """Just past the last comma outside a string in ``buf[at:end]`` (a run), else None.

    The run holds whole strings only, so the last quote in it closes one: a comma after it
    is outside every string. Else the string's opening quote is found (the first quote
    before it not escaped) and the search goes on before it, a few strings back at most;
    past that the run is scanned from its start, string by string.
    """
    hi, steps = end, 0
    while steps < _BACK_STEPS:
        quote = buf.rfind(b'"', at, hi)
        comma = buf.rfind(b",", quote + 1 if quote >= 0 else at, hi)
        if comma >= 0:
            return comma + 1
        if quote < 0:
            return None
        opening = quote
        while steps < _BACK_STEPS:  # an odd run of backslashes before a quote escapes it
            steps += 1
            opening = buf.rfind(b'"', at, opening)
            if opening < 0:
                return None  # not JSON: left to the reader
            slashes = opening
            while slashes > at and buf[slashes - 1] == 0x5C and opening - slashes < _BACK_STEPS:
                slashes -= 1
            if (opening - slashes) % 2 == 0:
                break
        hi = opening
    last = None
    for match in _JSON_TOKENS.finditer(buf, at, end):
        if buf[match.start()] == 0x2C:
            last = match.end()
    return last


def _first_comma(buf: bytes, at: int, end: int) -> int | None:
    """Just past the first comma outside a string in ``buf[at:end]`` (a run), else None."""
    pos = at
    while True:
        quote = buf.find(b'"', pos, end)
        comma = buf.find(b",", pos, end if quote < 0 else quote)
        if comma >= 0:
            return comma + 1
        string = _JSON_STRING.match(buf, quote, end) if quote >= 0 else None
        if string is None:
            return None
        pos = string.end()


_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)

_BACK_STEPS = 16
"""Strings `_last_comma` steps back over before it scans a run from its start."""


ARCHIVE_MEMBERS = 100_000
"""Files a zip archive of a dataset may hold (a shard of images and their table: thousands)."""


def unpack_zips(
    paths: Sequence[Path], dest: Path, *, what: str, limits: ParquetLimits = PARQUET_LIMITS
) -> list[tuple[Path, Path]]:
    """Unpack zip archives into folders under `dest`, refusing what unpacks past `limits`.

    `datasets` unpacks a zip it finds among a dataset's files and converts what it holds: a
    zip of a few kilobytes may state gigabytes. Each archive's directory is read first: its
    members' stated sizes together (all the archives of one source: the rule of
    `ParquetLimits`, one budget) and their number are checked before anything is unpacked;
    then the members are unpacked (Python's `zipfile` stops a member at its stated size, as
    `datasets`, which unpacks with it, does; one that holds more fails its checksum). The
    caller checks what was unpacked as it checks the dataset's other files.

    Args:
        paths: The zip archives of one source.
        dest: An empty folder; each archive is unpacked into a folder of its own in it.
        what: What the archives should hold, for the error.
        limits: The limits.

    Returns:
        Each archive with the folder it was unpacked into.

    Raises:
        UnreadableFile: An archive that is not a regular file or not a readable zip, of too
            many members, or the archives unpacking to more than the limits allow; one line
            naming the archive.
        OSError: An archive cannot be opened, or `dest` written.

    """
    limit, where = _shared_budget(paths, limits, what, "a zip archive", "zip archives")
    used, unpacked = 0, []
    for n, path in enumerate(paths):
        folder = dest / str(n)
        with open_regular(path, what=what) as fh:
            try:
                with zipfile.ZipFile(fh) as archive:
                    members = [info for info in archive.infolist() if not info.is_dir()]
                    if len(members) > ARCHIVE_MEMBERS:
                        raise UnreadableFile(
                            f"{path}: a zip archive of {len(members):,} files (at most "
                            f"{ARCHIVE_MEMBERS:,}): not {what}"
                        )
                    used += sum(info.file_size for info in members)
                    if used > limit:
                        raise _DecompressedOverLimit
                    for info in members:
                        # extract's own name rules: no absolute path, no "..", inside `folder`.
                        archive.extract(info, folder)
            except _DecompressedOverLimit:
                raise UnreadableFile(
                    f"{path}: unpacks to more than {limit:,} bytes, the most lmmprobe reads "
                    f"from {where}, at least {limits.floor >> 20} MiB): not {what}"
                ) from None
            except (
                zipfile.BadZipFile,
                zipfile.LargeZipFile,
                NotImplementedError,
                EOFError,
                zlib.error,
                lzma.LZMAError,
            ) as exc:  # broken, or a method zipfile lacks
                raise UnreadableFile(f"{path}: not a readable zip archive ({exc})") from None
        unpacked.append((path, folder))
    return unpacked
