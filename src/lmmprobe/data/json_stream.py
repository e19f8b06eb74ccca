"""Streamed reads of outside JSON and JSON Lines files: text decoding, records one at a time.

Nothing here loads a file whole. JSON Lines are read line by line; a top-level JSON array or
object is read element by element with `json.JSONDecoder.raw_decode` over a bounded buffer
(the standard library's decoder, fed 1 MiB chunks: memory is bounded by the largest single
element, not the file). ``ijson`` is not in the lock, and this covers the layouts met (an
array of records, an object of records keyed by id). The prediction readers
(`lmmprobe.predictions._stream`) and benchmark copies too large to read whole (Dysca's
released question list) read through it.

Text is UTF-8; a byte-order mark selects UTF-8, UTF-16 or UTF-32 instead (PowerShell's ``>``
writes UTF-16LE with one). Bytes that do not decode are one `DataError` naming the file, the
line and the byte offset, with the command that converts the file.

Every file is opened by `open_regular` (`lmmprobe.data.files`): a regular file only (a FIFO or
a device such as ``/dev/zero`` would hang the read or never end), and a file found inside a
folder only where its links stay inside that folder. One rule bounds what is held at once: a
JSON element of an array or object and a JSON Lines line are each at most `MAX_ELEMENT`, and
nested at most `MAX_NESTING` levels (the data loader's limit).
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from lmmprobe.data.base import DataError
from lmmprobe.data.files import CHUNK, MAX_ELEMENT, UnreadableFile, open_regular
from lmmprobe.data.rows import nesting_reason, too_deep, too_deep_text, too_long_int

__all__ = ["first_json_char", "iter_json", "iter_jsonl", "open_text"]

_NEAR_END = 16
"""Characters from the buffer's end within which a decode error may only mean "read more".

An element cut by the buffer's end fails at the end, or at the start of the token the end cut
(a literal such as ``-Infinit``, a ``\\uXXXX`` escape: under 16 characters); an unterminated
string fails at its opening quote and is told apart by its message.
"""


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32", "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8-sig", "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "utf-16-be", "UTF-16"),
)
"""(mark, codec that reads the file, codec of the bytes after the mark, name); UTF-32 first:
its little-endian mark begins with UTF-16's."""


_WS = " \t\r\n"


_NUMBER_TAIL = "0123456789.eE+-"
"""Characters a JSON number cut by the buffer's end may still continue with."""


def _encoding(head: bytes) -> tuple[str, int, str, str]:
    """(codec to read a file with, length of its byte-order mark, codec after it, name).

    `head` is the file's first 4 bytes.
    """
    for bom, codec, plain, name in _BOMS:
        if head.startswith(bom):
            return codec, len(bom), plain, name
    return "utf-8-sig", 0, "utf-8", "UTF-8"


def _undecodable(path: Path, skip: int, plain: str, name: str) -> DataError:
    """The error for `path`'s first bytes that do not decode: line, byte offset, the fix.

    Only called once decoding has failed: it scans the file again from the start, as bytes,
    to say where (a text stream does not know the byte offset of what it failed on).
    """
    decoder = codecs.getincrementaldecoder(plain)()
    fed = skip  # bytes handed to the decoder so far, from the file's start
    lines = 1
    where = ""
    with open_regular(path) as fh:
        fh.seek(skip)
        while True:
            block = fh.read(CHUNK)
            held = len(decoder.getstate()[0])  # bytes of a character cut by the last block
            try:
                lines += decoder.decode(block, final=not block).count("\n")
            except UnicodeDecodeError as exc:
                # exc.object is the held bytes then this block; it starts `held` bytes back.
                start = fed - held
                before = exc.object[: exc.start].decode(plain, errors="replace")
                line = lines + before.count("\n")
                bad = exc.object[exc.start : exc.start + 1].hex()
                where = f":{line}: byte 0x{bad} at offset {start + exc.start}"
                break
            if not block:
                break
            fed += len(block)
    return DataError(
        f"{path}{where}: not {name} text; lmmprobe reads UTF-8 (or UTF-16/UTF-8 with a "
        f"byte-order mark): convert it first, e.g. iconv -f latin1 -t utf-8 {path.name} > "
        f"{path.stem}.utf8{path.suffix}"
    )


@contextmanager
def open_text(
    path: Path, newline: str | None = None, within: Path | None = None
) -> Iterator[TextIO]:
    """`path` (a regular file: `open_regular`) as text in the encoding its byte-order mark names.

    UTF-8 without one.

    Raises:
        DataError: Bytes that do not decode, named by file, line and byte offset, in place of
            the bare `UnicodeDecodeError`.
        UnreadableFile: Not a regular file, or a link leaving `within`.

    """
    raw = open_regular(path, within)
    try:
        codec, skip, plain, name = _encoding(raw.read(4))
        raw.seek(0)
        text = io.TextIOWrapper(raw, encoding=codec, newline=newline)
    except BaseException:
        raw.close()
        raise
    with text as fh:
        try:
            yield fh
        except UnicodeDecodeError as exc:
            raise _undecodable(path, skip, plain, name) from exc


def first_json_char(path: Path, within: Path | None = None) -> str:
    """The first non-space character of a text file ("" when empty or undecodable).

    Raises:
        UnreadableFile: Not a regular file, or a link leaving `within`.

    """
    try:
        with open_text(path, within=within) as fh:
            while chunk := fh.read(4096):
                stripped = chunk.lstrip(_WS)
                if stripped:
                    return stripped[0]
    except UnreadableFile:
        raise
    except (OSError, DataError):
        return ""
    return ""


def _checked(where: str, value: Any) -> Any:
    """A decoded `value`, unless nested more than `MAX_NESTING` levels (named by its path)."""
    deep = too_deep(value)
    if deep is not None:
        raise DataError(f"{where}: {deep + ': ' if deep else ''}{nesting_reason()}")
    return value


def _too_deep(where: str, text: str, start: int) -> DataError:
    """The error for a value the decoder could not follow (past Python's recursion limit)."""
    _, key = too_deep_text(text, start)
    return DataError(f"{where}: {key + ': ' if key else ''}{nesting_reason()}")


def _long_int(where: str, text: str, start: int | None, exc: ValueError) -> DataError:
    """The error for a value holding an integer too long for Python to read.

    Worded as the data loader words it (`lmmprobe.data.rows.too_long_int`): the field and
    the digit count, not Python's message and its advice to call
    ``sys.set_int_max_str_digits()``, which is no advice to a user.
    """
    long = too_long_int(text, start)
    if long is None:  # not found again: Python's words, without the advice
        return DataError(f"{where}: not valid JSON: {str(exc).split(';')[0]}")
    field = f"{long.field}: " if long.field else ""
    return DataError(f"{where}: {field}{long.reason}")


def iter_jsonl(path: Path, within: Path | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON Lines file.

    Raises:
        DataError: A line is not JSON, longer than `MAX_ELEMENT` or nested more than
            `MAX_NESTING` levels (named ``FILE:LINE``), or the file is not text.
        UnreadableFile: Not a regular file, or a link leaving `within`.

    """
    with open_text(path, within=within) as fh:
        n = 0
        # readline with a limit: a line with no end in sight is not read whole.
        while line := fh.readline(MAX_ELEMENT + 1):
            n += 1
            if len(line) > MAX_ELEMENT:
                raise DataError(
                    f"{path}:{n}: a line longer than {MAX_ELEMENT >> 20} MiB (at most "
                    f"{MAX_ELEMENT >> 20} MiB per record)"
                )
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not a JSON value: {exc.msg}") from exc
            except RecursionError:
                raise _too_deep(where, line, 0) from None
            except ValueError as exc:  # an integer past Python's digit limit
                raise _long_int(where, line, None, exc) from None
            yield n, _checked(where, value)


class _Chunks:
    """A text buffer over a file that grows by `CHUNK` and drops what was consumed."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False

    def more(self, size: int = 0) -> bool:
        """Append at least `size` (and `CHUNK`) more characters; False at the end of the file."""
        if self.eof:
            return False
        block = self.fh.read(max(size, CHUNK))
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

    def grow(self) -> bool:
        """Double what is left of the buffer; False at the end of the file.

        Doubling, not one chunk at a time: an element is re-decoded O(log size) times and
        copied O(size) in all, where a chunk at a time is quadratic.
        """
        return self.more(len(self.buf) - self.pos)

    def value(self, decoder: json.JSONDecoder, where: str) -> Any:
        """Decode one JSON value at the cursor, reading more until it is whole.

        Raises:
            DataError: The value is malformed (as soon as the error lies before the buffer's
                end, not at the end of the file), larger than `MAX_ELEMENT`, or cut off by the
                file's end.

        """
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise _too_deep(where, self.buf, self.pos) from None
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or (
                    len(self.buf) - exc.pos < _NEAR_END
                )
                if cut and len(self.buf) - self.pos > MAX_ELEMENT:
                    raise DataError(
                        f"{where}: not valid JSON: an element larger than "
                        f"{MAX_ELEMENT >> 20} MiB ({exc.msg})"
                    ) from exc
                if cut and self.grow():
                    continue
                raise DataError(f"{where}: not valid JSON: {exc.msg}") from exc
            except ValueError as exc:  # an integer past Python's digit limit
                if too_long_int(self.buf, self.pos) is None and (
                    len(self.buf) - self.pos <= MAX_ELEMENT and self.grow()
                ):
                    continue  # the element is not whole yet: its field is named once it is
                raise _long_int(where, self.buf, self.pos, exc) from None
            if end - self.pos > MAX_ELEMENT:
                # Decoded whole once the buffer doubled past the bound: still over it.
                raise DataError(f"{where}: an element larger than {MAX_ELEMENT >> 20} MiB")
            # A number or literal ending exactly at the buffer's end may continue in the next
            # chunk ("12" of "123"); so may a number followed only by what could still be its
            # own ("0" then "." of "0.5", "1" then "e" of "1e-3"): read on before trusting it.
            rest = self.buf[end:]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            cut = not rest or (number and not rest.strip(_NUMBER_TAIL))
            if cut and not self.eof and self.more():
                continue
            checked = _checked(where, value)
            self.pos = end
            return checked


def iter_json(path: Path, within: Path | None = None) -> Iterator[tuple[int, str | None, Any]]:
    """``(position, key, value)`` for each element of a top-level JSON array or object.

    Positions count from 1; `key` is the object's key, None for an array's element. The file is
    read in chunks: memory holds one element at a time.

    Raises:
        DataError: The file is not a JSON array or object, an element is malformed, breaks
            off, is larger than `MAX_ELEMENT` or nested more than `MAX_NESTING` levels (named
            ``FILE:#N``), or the file is not text.
        UnreadableFile: Not a regular file, or a link leaving `within`.

    """
    decoder = json.JSONDecoder()
    with open_text(path, within=within) as fh:
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
                s.pos += 1
                # What follows the closing bracket is not JSON's: the file is not one document.
                after = s.skip_ws()
                if after:
                    raise DataError(
                        f"{path}: not valid JSON: {after!r} after the closing {closer!r} of the "
                        f"{n:,} elements"
                    )
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
