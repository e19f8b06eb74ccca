r"""Text from outside made storable: no lone surrogates.

JSON may spell a UTF-16 surrogate on its own (``"\ud800"`` is valid JSON), and Python's JSON
reader turns it into a string that cannot be encoded as UTF-8: SQLite, files and terminals
refuse it (``'utf-8' codec can't encode``). A model's answer, a judge's reply or an imported
prediction holding one would abort the run at the store and lose the batch it came in.
`safe_text` is the one place such text is repaired, applied where outside text enters the
schemas (`SafeText` fields of `Response` and `ErrorInfo`) and by the readers that build their
own rows.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from typing import Annotated, Any, Final

from pydantic import AfterValidator

__all__ = [
    "MAX_NESTING",
    "REPLACEMENT_CHARACTER",
    "SafeText",
    "ascii_integer",
    "deeper_than",
    "json_escaped",
    "lone_surrogate",
    "repeated_column",
    "safe_data",
    "safe_text",
    "shown_message",
    "shown_path",
    "shown_value",
    "stored_json",
]

MAX_NESTING: Final = 100
"""How deep a row's values (metadata, mostly) may nest: JSON objects and lists inside each
other. Deeper values are refused per row: they describe no sample, and every step that walks
them (fingerprints, the store, reports) would risk Python's recursion limit. The store's JSON
columns are held to it when read (`stored_json`)."""


def repeated_column(names: Iterable[str]) -> str | None:
    """Why a table's header cannot be read by name: its first column named twice, or None.

    A row read as a dict (`csv.DictReader`) keeps the last of two columns of one name and
    drops the other without a word; the table readers (predictions, votes) refuse such a
    header instead, with this reason after ``FILE:1:``. Unnamed columns (a sheet's trailing
    empty ones) are never read, so they may repeat.

    Returns:
        ``column 'X' is given twice (columns 2 and 3); name each column once``, or None.

    """
    first: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        if not name.strip():
            continue
        if name in first:
            return (
                f"column {name!r} is given twice (columns {first[name]} and {number}); "
                "name each column once"
            )
        first[name] = number
    return None


def deeper_than(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether a list, tuple or dict sits more than `limit` levels below `value` (no paths).

    Recursive, yet safe on any nesting: it descends at most `limit` + 1 levels.
    """
    if isinstance(value, dict):
        children: Iterable[Any] = value.values()
    elif isinstance(value, _CONTAINERS):
        children = value
    else:
        return False
    if limit < 0:
        return True
    # A plain loop, not any() over a generator: every row of every file passes here.
    for v in children:  # noqa: SIM110
        if isinstance(v, _NESTED) and deeper_than(v, limit - 1):
            return True
    return False


_CONTAINERS = (list, tuple)
_NESTED = (dict, list, tuple)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 reads as inf: no figure lmmprobe writes
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _no_infinity(name: str) -> float:
    if name != "NaN":  # NaN is how a figure with no value is written; Infinity never is
        raise ValueError(f"the number {name} is out of range")
    return math.nan


def stored_json(text: str | bytes) -> Any:
    """A JSON column of the store decoded, held to what lmmprobe writes there.

    Raises:
        ValueError: Not JSON, a number out of range (``1e999``, ``Infinity``) or nested more
            than `MAX_NESTING` levels (also one past Python's recursion limit): the column was
            damaged or edited by hand.

    """
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_no_infinity)
    except RecursionError:
        raise ValueError(f"nested more than {MAX_NESTING} levels deep") from None
    if deeper_than(value):
        raise ValueError(f"nested more than {MAX_NESTING} levels deep")
    return value


REPLACEMENT_CHARACTER: Final = "\ufffd"
"""What each lone surrogate becomes (U+FFFD, as a UTF-8 decoder marks bytes it cannot read)."""


def safe_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD; the same object when it has none.

    A high surrogate followed by a low one is the character the pair spells (as a JSON reader
    would have read it); a surrogate without its partner becomes one `REPLACEMENT_CHARACTER`.
    Text that encodes as UTF-8 (all of it but the rare broken string) is returned at the cost
    of one encoding.

    Args:
        text: Any string.

    Returns:
        A string that encodes as UTF-8.

    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 joins a surrogate pair into its character; its decoder replaces each lone
        # surrogate with one U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def shown_path(path: str | os.PathLike[str]) -> str:
    r"""`path` as text a message or a file can hold, its bytes that are not UTF-8 escaped.

    A file name on Linux may be any bytes; Python reads those that are not UTF-8 as lone
    surrogates (``surrogateescape``), which a terminal, the store and results.json refuse.
    Shown here as the byte they stand for (``Art\xff``), so a message can name the file.

    Args:
        path: A path or file name.

    Returns:
        The same text when it is UTF-8 already; else the bytes, those not UTF-8 as ``\xNN``.

    """
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:  # the bytes the name has on disk
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte (given from Python)
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


SHOWN_CHARS: Final = 40
"""How much of a refused value a message repeats (a pasted 5,000-character value is not echoed)."""


def shown_value(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` as an error message repeats it: whole up to `limit` characters, else cut there.

    A cut value ends ``... (N characters)``, so the message stays one readable line and still
    says how long the value was.
    """
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


_ASCII_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}")
_ASCII_DIGITS = re.compile(r"[0-9]{1,4000}")


def ascii_integer(text: str, *, signed: bool = True) -> int | None:
    """`text` as a whole number written in ASCII digits (a sign allowed, at most 4,000 digits).

    None for anything else. `int` alone also reads other scripts' digits (``"٣"`` is 3),
    underscores and surrounding spaces, and raises past 4,300 digits with advice to change an
    interpreter limit: an option a user typed is read as it looks. `signed` False: digits
    alone, where ``str.isdigit`` was the test (an index, a count), which ``"²"`` passes and
    `int` then refuses.
    """
    pattern = _ASCII_INTEGER if signed else _ASCII_DIGITS
    return int(text) if pattern.fullmatch(text) else None


MESSAGE_CHARS: Final = 1_000
"""How long a message about one row may be: past it, the part quoting the file is cut."""


def shown_message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A message about bad input, bounded: whole up to `limit` characters, else cut in the middle.

    The middle is where a quoted value stands (``expected X, got '...': not read``); the start
    (the field, what was expected) and the end (what is done about it) are kept, with the
    length of what was left out said in place.
    """
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 3 // 4], text[-(limit // 5) :]
    return f"{head}... ({len(text) - len(head) - len(tail):,} characters cut) ...{tail}"


def json_escaped(text: str) -> str:
    r"""JSON text `text` with each lone surrogate written as JSON's escape of it (``\udcff``).

    A JSON writer that keeps non-ASCII characters as they are (``ensure_ascii=False``) leaves a
    lone surrogate (a file name's byte that is not UTF-8) raw, which no UTF-8 file can hold.
    Outside strings JSON has no such characters, so each is replaced where it stands: the
    result is UTF-8 JSON that a reader reads back as the same string (the same path).

    Args:
        text: JSON text.

    Returns:
        The same JSON, encodable as UTF-8.

    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def lone_surrogate(text: str) -> str | None:
    r"""Where `text` holds a lone surrogate, in words (``U+D800 at character 2``), else None.

    For an id, which `safe_text` cannot repair: ``"x\ud800"`` and ``"x\udfff"`` would both
    become ``"x\ufffd"``, two items made one. A surrogate pair spells its character (as
    `safe_text` reads it) and is not lone.

    Args:
        text: Any string.

    Returns:
        The first lone surrogate and its 1-based position, or None when `text` has none.

    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        found = _LONE_SURROGATE.search(joined)
        if found is not None:
            return f"U+{ord(found.group()):04X} at character {found.start() + 1}"
    return None


SafeText = Annotated[str, AfterValidator(safe_text)]
"""A string field of outside text, repaired by `safe_text` when it is validated."""


def safe_data(value: Any) -> Any:
    r"""`value` with `safe_text` applied to every string in it, dict keys and nested ones too.

    For a row read from a data file (``metadata: {"grp": "\ud800x"}``): its strings reach
    the store, results and a model's request, and each of those refuses a lone surrogate.
    Lists, tuples and dicts are rebuilt only where something changed (the same object otherwise);
    other values are returned as they are. Nesting is bounded by the loaders (100 levels).

    Args:
        value: A decoded row or any part of one.

    Returns:
        The same shape, every string encodable as UTF-8.

    """
    if isinstance(value, str):
        # ASCII holds no surrogate: returned without encoding (most text of most data).
        return value if value.isascii() else safe_text(value)
    if type(value) is list and all(type(v) is str and v.isascii() for v in value):
        return value  # a list of plain strings (options, image paths): nothing to repair
    if isinstance(value, dict):
        items = [(safe_data(k), safe_data(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        parts = [safe_data(v) for v in value]
        if all(p is v for p, v in zip(parts, value, strict=True)):
            return value
        return type(value)(parts) if isinstance(value, tuple) else parts
    return value
