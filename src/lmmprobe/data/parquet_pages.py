"""Parquet page headers, read from the file before pyarrow decodes a page.

A parquet file's footer states each column chunk's sizes; each page of the chunk then starts
with a header of its own (a Thrift struct in the compact protocol) stating the page's
uncompressed and compressed size and, for a data or dictionary page, its number of values.
pyarrow allocates a page's stated uncompressed size and decompresses it whole before any of
its values can be counted, and it exposes no page header: an edited header (or a footer whose
sizes understate the pages') made the parquet check itself take 656 MB for a 15.7 KB file.
`column_pages` reads the headers of one column chunk at the offsets its footer gives, so that
`lmmprobe.data.files` can hold each page to the budget before pyarrow reads it.

Why a reader here rather than Apache's ``thrift`` package: that package ships as a source
archive only (with an optional C extension to build, and ``six``), and its generic ``skip``
recurses without a bound and reads varints of any length, so it would need wrapping in the
same bounds as these few lines. Only four fields of one struct are wanted; everything else is
skipped. The reader is bounded whatever the bytes: a header of at most `MAX_HEADER` bytes,
structs and containers nested at most `MAX_DEPTH` deep, at most `MAX_FIELDS` fields and
elements in one header, varints of at most 10 bytes; every element takes at least one byte,
so no loop outlives the header's bytes. A failure is `PageHeaderError`, a one-line reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

__all__ = [
    "DATA_PAGE_TYPES",
    "DICTIONARY_PAGE",
    "MAX_DEPTH",
    "MAX_FIELDS",
    "MAX_HEADER",
    "PageHeader",
    "PageHeaderError",
    "column_pages",
    "read_page_header",
]

MAX_HEADER = 16 << 20
"""The longest page header read (16 MiB): Arrow's own reader's limit (its statistics may hold
a long value); a header a tool writes is tens of bytes, or a few KiB with statistics."""

MAX_DEPTH = 16
"""Structs and containers nested in a header (a page header nests three deep)."""

MAX_FIELDS = 100_000
"""Fields and container elements in one header (a header a tool writes has about twenty)."""

DICTIONARY_PAGE = 2
"""The page type of a dictionary page (parquet.thrift's PageType)."""

DATA_PAGE_TYPES = frozenset({0, 3})
"""The page types of data pages, version 1 and 2."""

_FIRST_READ = 1 << 10
"""Bytes read for a header at first; more (x16 each time, up to `MAX_HEADER`) when it is longer."""

# Compact protocol type codes (Thrift's TCompactProtocol).
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT, _UUID = 9, 10, 11, 12, 13
_HEADERS = {5: "data", 7: "dictionary", 8: "data_v2"}  # PageHeader fields holding num_values


class PageHeaderError(ValueError):
    """A page header that cannot be read; its text is the reason, in a few words."""


class _Truncated(PageHeaderError):
    """The header goes on past the bytes given."""


@dataclass(frozen=True)
class PageHeader:
    """What lmmprobe reads of a parquet page header."""

    type: int
    """The page type (0 data, 1 index, 2 dictionary, 3 data v2)."""
    uncompressed_size: int
    """The page's stated size once decompressed, header excluded."""
    compressed_size: int
    """The page's size in the file, header excluded."""
    num_values: int | None
    """The values a data or dictionary page states; None for another page."""
    length: int
    """Bytes of the header itself."""


class _Reader:
    """The compact protocol over `data`, bounded (see the module docstring)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.fields = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise _Truncated("the header goes on past the bytes read")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        value = 0
        for shift in range(0, 70, 7):
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
        raise PageHeaderError("a varint longer than 10 bytes")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def skip_bytes(self, n: int) -> None:
        if self.pos + n > len(self.data):
            raise _Truncated("the header goes on past the bytes read")
        self.pos += n

    def count(self) -> None:
        self.fields += 1
        if self.fields > MAX_FIELDS:
            raise PageHeaderError(f"more than {MAX_FIELDS:,} fields in one page header")

    def value(self, kind: int, depth: int) -> int | None:
        """Read one value of compact type `kind`: an integer's value, else None (skipped)."""
        self.count()
        if kind in (_TRUE, _FALSE):
            return None
        if kind == _BYTE:
            self.skip_bytes(1)
            return None
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind == _DOUBLE:
            self.skip_bytes(8)
            return None
        if kind == _UUID:
            self.skip_bytes(16)
            return None
        if kind == _BINARY:
            self.skip_bytes(self.varint())
            return None
        if depth >= MAX_DEPTH:
            raise PageHeaderError(f"values nested more than {MAX_DEPTH} deep")
        if kind == _STRUCT:
            self.struct(depth + 1)
        elif kind in (_LIST, _SET):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):  # each element takes a byte or more: bounded by the bytes
                self.element(head & 0x0F, depth + 1)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.element(types >> 4, depth + 1)
                    self.element(types & 0x0F, depth + 1)
        else:
            raise PageHeaderError(f"an unknown field type {kind}")
        return None

    def element(self, kind: int, depth: int) -> None:
        """Skip a container's element: a boolean there takes a byte of its own."""
        if kind in (_TRUE, _FALSE):
            self.count()
            self.skip_bytes(1)
        else:
            self.value(kind, depth)

    def struct(self, depth: int) -> dict[int, int | dict[int, int | None] | None]:
        """Read a struct's fields to its end: integers and, at the top, nested structs' integers."""
        found: dict[int, int | dict[int, int | None] | None] = {}
        last = 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == 0:  # STOP
                return found
            delta = head >> 4
            field = last + delta if delta else self.zigzag()
            last = field
            # A field is taken only in the type parquet.thrift declares (every integer read
            # here is an i32; a page kind's header a struct), as Thrift's readers take it: one
            # of another type is skipped, so a repeated field in another type cannot state
            # here a size pyarrow never reads. A field stated twice is no header a writer makes.
            if depth == 0 and kind == _STRUCT and field in _HEADERS:
                self.count()
                if depth + 1 >= MAX_DEPTH:  # pragma: no cover - MAX_DEPTH is above 1
                    raise PageHeaderError(f"values nested more than {MAX_DEPTH} deep")
                inner = self.struct(depth + 1)
                value: int | dict[int, int | None] | None = {
                    k: v for k, v in inner.items() if isinstance(v, int)
                }
            else:
                value = self.value(kind, depth)
                if kind != _I32 or (depth == 0 and field in _HEADERS):
                    continue
            if field in found:
                raise PageHeaderError(f"a page header stating its field {field} twice")
            found[field] = value


def read_page_header(data: bytes) -> PageHeader:
    """The page header at the start of `data`.

    Raises:
        PageHeaderError: `data` does not start with a whole page header of the fields a page
            must state (its type and both sizes, not negative); the reason in a few words.

    """
    reader = _Reader(data[:MAX_HEADER])
    fields = reader.struct(0)
    kind, raw, packed = fields.get(1), fields.get(2), fields.get(3)
    if not (isinstance(kind, int) and isinstance(raw, int) and isinstance(packed, int)):
        raise PageHeaderError("a page header without its type and sizes")
    if raw < 0 or packed < 0:
        raise PageHeaderError("a page header stating a negative size")
    num_values = None
    for field in _HEADERS:
        inner = fields.get(field)
        if isinstance(inner, dict) and isinstance(inner.get(1), int):
            num_values = inner[1]
    if num_values is not None and num_values < 0:
        raise PageHeaderError("a page header stating a negative number of values")
    return PageHeader(kind, raw, packed, num_values, reader.pos)


def _header_at(fh: IO[bytes], at: int, end: int) -> PageHeader:
    """The header at offset `at`, which must end before `end`; read a little, more if needed."""
    size = _FIRST_READ
    while True:
        fh.seek(at)
        wanted = min(size, end - at, MAX_HEADER)
        data = fh.read(wanted)
        try:
            return read_page_header(data)
        except _Truncated:
            if len(data) < wanted:
                raise PageHeaderError("a page header running past the end of the file") from None
            if wanted == end - at:
                raise PageHeaderError("a page header running past its column chunk") from None
            if wanted == MAX_HEADER:
                raise PageHeaderError(f"a page header longer than {MAX_HEADER >> 20} MiB") from None
            size *= 16


def column_pages(fh: IO[bytes], start: int, length: int, num_values: int) -> Iterator[PageHeader]:
    """The page headers of one column chunk, up to the page holding its last value.

    Read as a parquet reader reads them: from `start` (the chunk's first page), each page
    after the last one's header and bytes, until the data pages have stated `num_values`
    values. A page must lie inside the chunk's `length` bytes.

    Args:
        fh: The parquet file, open for reading (it is sought).
        start: The chunk's first page's offset (its dictionary page's, when it has one).
        length: The chunk's size in the file, as its footer states it.
        num_values: The values the footer states for the chunk.

    Raises:
        PageHeaderError: A header that cannot be read, or a page running past the chunk.

    """
    at, end, seen = start, start + length, 0
    while seen < num_values:
        if at >= end:
            raise PageHeaderError(
                f"its pages hold {seen:,} of the {num_values:,} values its footer states"
            )
        header = _header_at(fh, at, end)
        at += header.length + header.compressed_size
        if at > end:
            raise PageHeaderError("a page running past its column chunk")
        if header.type in DATA_PAGE_TYPES:
            seen += header.num_values or 0
        yield header
