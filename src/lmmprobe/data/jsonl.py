"""lmmprobe's own JSONL format: one sample per line.

Fields: ``id`` (str), ``images`` (list of paths relative to the file: a file listed again is
checked once and is one reference; at most `lmmprobe.schema.image.MAX_IMAGES_PER_SAMPLE` of
them holding at most `lmmprobe.schema.image.max_sample_pixels` together), ``question`` (str),
``choices`` (list of str, or null for open-ended), ``answer`` (choice index, or reference
text(s)), ``formulation`` (single_choice | true_false | open_ended; default single_choice when
choices are given, else open_ended), ``context``, ``history`` (list of {role, content}),
``metadata`` (object), ``video`` (a path relative to the file, or an object with ``path`` or
``url``, ``start``, ``end`` and the row's own frame policy: `lmmprobe.data.video`; ``images``
may then be left out). Blank lines and lines starting with ``#`` are ignored.

The file is read a line at a time (`stream_jsonl`: a million-line file holds one sample at a
time); a line is at most `MAX_LINE` characters and nested at most ``MAX_NESTING`` levels (`lmmprobe.data.rows`), else
that line is a problem ``FILE:LINE: ...`` and the rest of the file still loads. A file that
changes while it is read (truncated, rewritten, replaced) is refused (`_Identity`).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe._file_kind import not_regular_file
from lmmprobe.data.base import SOURCES, DataError, SampleStream, streaming
from lmmprobe.data.files import read_regular
from lmmprobe.data.rows import (
    RowError,
    check_images,
    find_value,
    nesting_reason,
    require_object,
    stream_rows,
    to_sample,
    too_deep,
    too_deep_text,
    too_long_int,
)
from lmmprobe.data.video import check_video
from lmmprobe.schema import Sample

REQUIRED = ("id", "images", "question", "answer")
KNOWN = frozenset(
    {
        "id",
        "images",
        "question",
        "choices",
        "answer",
        "formulation",
        "context",
        "history",
        "metadata",
        "video",
    }
)


def parse_row(row: Any, base: Path) -> Sample:
    """Validate one decoded JSON row into a Sample, resolving image paths against `base`.

    Raises:
        RowError: The row is invalid; carries the field and reason.

    """
    if isinstance(row, dict) and "video" in row:
        row = {"images": [], **row}  # a video's question may show no image besides
    if isinstance(row, dict):
        # Named before a missing field: `"image": "x.png"` was "images: missing required
        # field", the misspelt field itself unnamed.
        unknown = sorted(k for k in row if k not in KNOWN)
        if unknown:
            name = str(unknown[0])
            close = (
                difflib.get_close_matches(name, sorted(KNOWN), n=1, cutoff=0.75)
                if len(name) <= 40
                else []
            )
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise RowError(unknown[0], f"unknown field ({hint}known: {', '.join(sorted(KNOWN))})")
    row = require_object(row, REQUIRED)
    if not isinstance(row["images"], list):
        raise RowError("images", "expected a list of file paths")
    data = dict(row)
    data["id"] = str(row["id"]) if isinstance(row["id"], int | str) else row["id"]
    data["images"] = check_images(base, row["images"])
    if "video" in row:
        data["video"] = check_video(base, row["video"])
    if "formulation" not in data:
        # Given choices, even an empty list, mean a choice question (and `choices: []` is
        # then refused as such, not read as an open-ended sample).
        data["formulation"] = "open_ended" if row.get("choices") is None else "single_choice"
    return to_sample(data)


MAX_LINE = 64 << 20
"""The longest line read (characters): 64 MiB, far above any sample. A longer line is that
line's problem, skipped without being held: a file with no newline in sight (a binary file, a
JSON array given as JSONL) is read in bounded memory."""

_SKIP = 1 << 20
"""Characters read at a time while skipping the rest of a line longer than `MAX_LINE`."""


_CHECK_EVERY = 4096
"""Lines read between two checks that the file is still the one opened (`_Identity`)."""


class _Identity:
    """What tells a file changed while it is read: device, inode, size, mtime and ctime.

    The status-change time (``st_ctime_ns``) is one no program can set back: a same-size
    rewrite in place with its mtime restored, as ``cp -p`` or ``rsync --inplace -t`` do,
    still moves it.

    A file truncated, rewritten or replaced under the reader would otherwise be read as a
    shorter (or other) file, and a run recorded complete on part of its data. Checked every
    `_CHECK_EVERY` lines and at the end, on the open file and on its path.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.first = self._of(os.fstat(fd))

    @staticmethod
    def _of(st: os.stat_result) -> tuple[int, int, int, int, int]:
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def check(self, *, end: bool = False) -> None:
        """Raise `DataError` when the file (or, at the end, its path) is not the one opened."""
        now = self._of(os.fstat(self.fd))
        if end and now == self.first:
            try:
                now = self._of(os.stat(self.path))  # replaced by another file under its name
            except OSError:
                now = (-1, -1, -1, -1, -1)  # removed
        if now != self.first:
            raise DataError(f"{self.path} changed while it was read; run again")


def _lines(path: Path) -> Iterator[tuple[int, str | None]]:
    """``(line number, text)`` of each line that is not blank or a comment; None: too long.

    Raises:
        DataError: The file changed while it was read (`_Identity`).

    """
    # A byte-order mark is tolerated. Bytes that are not UTF-8 are kept as lone surrogates
    # (surrogateescape), so one bad line is reported as that line's problem instead of
    # aborting the whole file.
    with path.open(encoding="utf-8-sig", errors="surrogateescape") as f:
        identity = _Identity(path, f.fileno())
        lineno = 0
        # readline with a limit: a line with no end in sight is not read whole.
        while raw := f.readline(MAX_LINE + 1):
            lineno += 1
            if lineno % _CHECK_EVERY == 0:
                identity.check()
            if len(raw) > MAX_LINE and not raw.endswith("\n"):
                rest = raw
                while rest and not rest.endswith("\n"):
                    rest = f.readline(_SKIP)
                yield lineno, None
                continue
            text = raw.strip()
            if text and not text.startswith("#"):
                yield lineno, text
        identity.check(end=True)


# What surrogateescape makes of a byte that is not UTF-8.
_BAD_BYTE = re.compile("[\udc80-\udcff]")


def _bad_utf8(text: str) -> RowError:
    bad = _BAD_BYTE.search(text)
    assert bad is not None
    byte = ord(bad.group()) - 0xDC00
    what = f"invalid UTF-8 (byte 0x{byte:02x} at column {bad.start() + 1}); save the file as UTF-8"
    try:
        found = find_value(
            json.loads(text), lambda v: isinstance(v, str) and bool(_BAD_BYTE.search(v))
        )
    except (ValueError, RecursionError):
        found = None
    return RowError(found[0] if found else None, what)


# Only a row whose text could hold an infinity is searched for one: `Infinity`, or a number
# with an exponent of three digits or more (no float is finite past 1e308).
_MAY_BE_INFINITE = re.compile(r"Infinity|[eE][+-]?0*[1-9]\d{2}")


def _infinite(text: str, row: Any) -> RowError | None:
    """The field of `row` (decoded from `text`) holding an infinite number, if any.

    JSON has no infinity; Python's reader takes ``Infinity`` and ``1e999`` as one, which no
    figure can use and the store cannot write (it writes standard JSON only): that row's
    problem, named, as a number too long is. (NaN is read as before: a cell with no value,
    which the store writes as null.)
    """
    if not _MAY_BE_INFINITE.search(text):
        return None
    found = find_value(row, lambda v: isinstance(v, float) and math.isinf(v))
    if found is None:
        return None
    return RowError(found[0], f"{found[1]} is infinite, a number JSON has no value for")


MAX_JSON_DOCUMENT = 1 << 30
"""The largest JSON document read whole from outside (1 GiB): a local benchmark copy's largest
(HEMM's GQA and Visual Genome question files) are some hundreds of MB, and Python holds a
document as several times its size in objects. Callers reading smaller documents pass less."""


def json_document(where: str, text: str) -> Any:
    """`text` decoded as JSON, nested at most `MAX_NESTING` levels (the data loader's rule).

    Raises:
        DataError: Not JSON, or nested deeper: one line starting with `where` (``FILE`` or
            ``FILE:LINE``), naming the value's place where the nesting is too deep.

    """
    try:
        value = json.loads(text)
    except RecursionError:  # past Python's recursion limit: find the place from the text
        _, key = too_deep_text(text)
        raise DataError(f"{where}: {key + ': ' if key else ''}{nesting_reason()}") from None
    except ValueError as exc:  # bad JSON, an integer past Python's digit limit
        long = too_long_int(text)
        if long is not None:  # named by its place, not with advice meant for a programmer
            field = f"{long.field}: " if long.field else ""
            raise DataError(f"{where}: {field}{long.reason}") from None
        raise DataError(f"{where}: not valid JSON ({exc})") from None
    deep = too_deep(value)
    if deep is not None:
        raise DataError(f"{where}: {deep + ': ' if deep else ''}{nesting_reason()}")
    return value


def read_json_file(
    path: Path, *, what: str, cap: int = MAX_JSON_DOCUMENT, within: Path | None = None
) -> Any:
    """The JSON document in `path`, read whole under the rules every outside file is read by.

    The one reader of a whole JSON file lmmprobe did not write itself (a dataset folder's
    manifest, a local benchmark copy, a results folder given to ``report``): a regular file
    (`lmmprobe.data.files.open_regular`), at most `cap` bytes, UTF-8, nested at most
    `MAX_NESTING` levels.

    Args:
        path: The file.
        what: What it holds, for the error (``"a synthetic-dataset manifest"``).
        cap: The most bytes read.
        within: The folder `path` was found in: a link leading out of it is refused.

    Raises:
        DataError: Missing or unreadable, not a regular file, a link leaving `within`, larger
            than `cap`, not UTF-8, not JSON or nested too deep; one line naming `path`.

    """
    try:
        raw = read_regular(path, cap, what=what, within=within)
    except DataError:
        raise
    except OSError as exc:
        raise DataError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark some editors write is no content
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            f"is it {what}?"
        ) from None
    del raw  # the text is held from here on, not both
    return json_document(str(path), text)


def _too_deep_json(text: str) -> RowError:
    """A row nested beyond what the JSON decoder follows, naming its field from the text."""
    _, field = too_deep_text(text)
    return RowError(field, nesting_reason())


def _parse_line(text: str | None, base: Path) -> Sample:
    if text is None:
        raise RowError(
            None, f"a line longer than {MAX_LINE >> 20} MiB (at most {MAX_LINE >> 20} MiB a row)"
        )
    if _BAD_BYTE.search(text):
        raise _bad_utf8(text)
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowError(None, f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise _too_deep_json(text) from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise (too_long_int(text) or RowError(None, f"invalid JSON: {exc}")) from exc
    deep = too_deep(row)
    if deep is not None:
        raise RowError(deep, nesting_reason())
    infinite = _infinite(text, row)
    if infinite is not None:
        raise infinite
    return parse_row(row, base)


def stream_jsonl(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """Read and validate a JSONL file a line at a time; invalid rows are reported with file:line.

    Raises:
        DataError: No path, options given, or no such file (when called); an invalid row in
            strict mode (when the stream reaches it).

    """
    if not target:
        raise DataError("the jsonl source needs a path: jsonl:PATH or PATH.jsonl")
    if options:
        raise DataError(f"the jsonl source takes no options (got {sorted(options)})")
    path = Path(target)
    unreadable = not_regular_file(path, "data rows")  # a FIFO, a device, a kernel file
    if unreadable or not path.is_file():
        raise DataError(unreadable or f"data file not found: {path}")
    base = path.parent
    return SampleStream(
        str(path),
        lambda report: stream_rows(
            report,
            _lines(path),
            lambda _, text: _parse_line(text, base),
            strict=strict,
            limit=limit,
        ),
    )


load_jsonl = SOURCES.register(
    "jsonl", summary="PATH.jsonl  lmmprobe's JSONL format (one sample per line)"
)(streaming(stream_jsonl))
"""Load and validate a JSONL file (`stream_jsonl`'s samples as a `LoadResult`)."""
