"""Reading a JSON or YAML file whose top level maps names to entries, with file:line errors.

Task catalogs and model cards (`lmmprobe.holistic`) and price tables (`lmmprobe.run.prices`)
are such files. Every error names the file and, where it can, the line: unparsable text, a top
level that is not a mapping, a name or a field given twice at any level (YAML would silently
keep the last, JSON too). The line of each name and of each entry's fields is kept
(`KeyLines`), so an error about a field names the field's own line.

They are configuration written by hand, read in time and memory bounded by their size: a file
over `MAX_BYTES`, one that is not UTF-8 text, nesting deeper than the parsers can follow, and
YAML aliases (``*name``, which let a few lines expand to gigabytes, the "billion laughs") are
refused in one line naming the file.

Both formats are read in one linear pass of a C parser. YAML: libyaml's events (when pyyaml
has it) are checked and built into the value as they come, each scalar read by pyyaml's own
safe resolver and constructors (price tables: a plain ``1e3`` read as the number YAML 1.2
makes it, not YAML 1.1's text); pyyaml's node tree, about 250 bytes of memory per byte of text
and many seconds per megabyte, is built only for what that pass leaves to it (explicit
collection tags such as ``!!set``, merge keys, keys that are lists), in files up to
`MAX_TREE_BYTES`. JSON: the C decoder reads the value, and one regular-expression walk over
the (then known valid) text places the names and finds a key given twice.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lmmprobe._file_kind import not_regular_file

__all__ = [
    "KeyLines",
    "MappingFileError",
    "decimal_number",
    "read_mapping",
    "read_mapping_text",
    "where",
]

YAML_HINT = "pip install 'lmmprobe[holistic]'"
"""The extra that installs pyyaml."""

MAX_BYTES = 16 * 1024 * 1024
"""The largest file read: a price table or a catalog is a few kilobytes."""

MAX_DEPTH = 100
"""The deepest nesting of YAML collections read (the data loader's limit for JSON rows)."""

MAX_TREE_BYTES = 1024 * 1024
"""The largest YAML file read through pyyaml's node tree (the rare features the fast pass
leaves to it): the tree takes about 250 bytes of memory per byte of text."""


class MappingFileError(ValueError):
    """The file is missing or unparsable, is not a mapping, or repeats a name (file:line)."""


class KeyLines:
    """Where each top-level name of a mapping file is, and each field of its entry (1-based).

    Filled as a YAML file is read; a JSON file's are found only when first asked for (errors
    need them, a good file does not), by one walk over its text.
    """

    def __init__(self, find: Callable[[], KeyLines] | None = None) -> None:
        self.names: dict[str, int] = {}
        self.fields: dict[str, dict[str, int]] = {}
        self._find = find

    def line(self, name: str, field: str | None = None) -> int | None:
        """The line of a top-level name, or of its entry's `field` (else the name's line).

        Args:
            name: The top-level name.
            field: A field of its entry (entries that are mappings only).

        Returns:
            The 1-based line, or None when not known.

        """
        if self._find is not None:
            found, self._find = self._find(), None
            self.names, self.fields = found.names, found.fields
        line = self.names.get(name)
        if field is not None:
            line = self.fields.get(name, {}).get(field, line)
        return line


def read_mapping(
    path: Path, *, what: str = "entries", exponents: bool = False
) -> tuple[dict[str, Any], KeyLines]:
    """Read a file whose top level maps names to entries: ``.json`` as JSON, anything else YAML.

    Args:
        path: The file.
        what: What the entries are, for the message when the top level is not a mapping.
        exponents: Read plain YAML numbers as YAML 1.2 does: ``1e3`` is a number (pyyaml
            follows YAML 1.1, which makes it text; quoted, it stays text), and YAML 1.1's other
            forms (``1:30`` base 60, ``0x10``, ``0b11``, ``017`` octal, ``1_000``) stay text.
            Off by default: a file pyyaml wrote holds the text ``1e3`` unquoted.

    Returns:
        ``(data, lines)``: the mapping (names as text), and the 1-based line of each name
        (and, in ``lines.fields``, of each entry's fields).

    Raises:
        MappingFileError: The file is missing, unparsable, not a mapping, or repeats a name.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    # A FIFO, a device (a link to /dev/zero) or a kernel file (/proc/kmsg) is named as what
    # it is, not called missing.
    unreadable = not_regular_file(path, "settings")
    if unreadable or not path.is_file():
        raise MappingFileError(unreadable or f"{path}: file does not exist")
    return read_mapping_text(path, _text(path), what=what, exponents=exponents)


def read_mapping_text(
    path: Path, text: str, *, what: str = "entries", exponents: bool = False
) -> tuple[dict[str, Any], KeyLines]:
    """`read_mapping` of text already read from `path` (a dataset card's YAML front matter).

    Args:
        path: The file the text is from (``.json``: JSON, else YAML), for messages.
        text: Its text; line 1 of `text` is line 1 of the file, so errors name the file's lines.
        what: What the entries are, for the message when the top level is not a mapping.
        exponents: As in `read_mapping`.

    Returns:
        ``(data, lines)`` as `read_mapping` returns them.

    Raises:
        MappingFileError: The text is unparsable, not a mapping, repeats a name, uses a YAML
            alias or nests too deeply.
        ImportError: YAML is given and pyyaml is not installed.

    """
    try:
        data, lines = (
            _json(path, text) if path.suffix.lower() == ".json" else _yaml(path, text, exponents)
        )
    except RecursionError:
        raise MappingFileError(f"{path}: nested too deeply to read") from None
    if data is None:
        return {}, lines
    if not isinstance(data, dict):
        raise MappingFileError(
            f"{path}: the top level must be a mapping of names to {what}, got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, lines


def where(path: Path, lines: KeyLines, key: str, field: str | None = None) -> str:
    """``file:line`` of a top-level name, or of one of its entry's fields, when known.

    Args:
        path: The file.
        lines: The lines `read_mapping` returned.
        key: The top-level name.
        field: A field of that name's entry: its own line is given when known, else the name's.

    Returns:
        ``file:line``, or the file alone when the line is not known.

    """
    line = lines.line(key, field)
    return f"{path}:{line}" if line is not None else str(path)


def _text(path: Path) -> str:
    """The file's text, or a one-line error: too large, unreadable, or not UTF-8 text."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise MappingFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise MappingFileError(
            f"{path}: larger than {MAX_BYTES // (1024 * 1024)} MiB; is it the right file?"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise MappingFileError(
            f"{path}:{line}: not a text file (byte {exc.start} is not UTF-8); give a JSON or "
            "YAML file"
        ) from None


def _twice(path: Path, key: str, line: int, first: int) -> MappingFileError:
    return MappingFileError(f"{path}:{line}: {key!r} is defined twice (first on line {first})")


# ---- JSON

# The tokens of valid JSON that matter here: a string (with the colon that makes it a key) and
# the brackets. Numbers, literals, commas and blanks are skipped by the search. The string
# pattern is an unrolled loop: each character can match one way only, so nothing backtracks.
_JSON_TOKEN = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"(\s*:)?|[{}\[\]]')


class _Twice(ValueError):
    """A key given twice in one JSON object (placed afterwards by `_json_keys`)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Twice
    return out


def _json(path: Path, text: str) -> tuple[Any, KeyLines]:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise MappingFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except _Twice:  # a key given twice, at any level: JSON would silently keep the last
        _json_keys(path, text)  # raises, naming the key and both lines
        raise MappingFileError(f"{path}: a key is defined twice") from None  # pragma: no cover
    except RecursionError:  # nested past what the decoder follows (about 1,000 levels)
        raise MappingFileError(f"{path}: not valid JSON (nested too deeply to read)") from None
    except ValueError as exc:  # an integer past Python's 4,300 digits (json reads it as int)
        raise MappingFileError(f"{path}: not valid JSON ({_first_line(exc)})") from None
    return data, KeyLines(lambda: _json_keys(path, text))


def _first_line(exc: Exception) -> str:
    """An exception's message up to its first sentence's end: no advice meant for programmers."""
    return str(exc).split(";")[0].split("\n")[0]


def _json_keys(path: Path, text: str) -> KeyLines:
    """Place the names and their entries' fields, and refuse a key given twice at any level.

    One walk over `text`, which the C decoder has just read (so is valid JSON): a stack holds,
    for each object still open, the position of each key it has (arrays hold None).
    """
    lines = KeyLines()
    names = lines.names
    stack: list[dict[str, int] | None] = []
    name: str | None = None  # the top-level name whose entry is being read
    line, counted = 1, 0  # the line at position `counted`; positions only grow

    def line_at(pos: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, pos)
        counted = pos
        return line

    for m in _JSON_TOKEN.finditer(text):
        if m.group(2) is None:  # a bracket or a string that is a value
            char = text[m.start()]
            if char == "{":
                stack.append({})
            elif char == "[":
                stack.append(None)
            elif char in "}]":
                stack.pop()
            continue
        raw = m.group(1)
        key = json.decoder.scanstring(text, m.start() + 1)[0] if "\\" in raw else raw  # type: ignore[attr-defined]
        seen = stack[-1]
        assert seen is not None  # a string followed by a colon is a key of an open object
        first = seen.get(key)
        if first is not None:
            first_line = text.count("\n", 0, first) + 1
            raise _twice(path, key, text.count("\n", 0, m.start()) + 1, first_line)
        seen[key] = m.start()
        depth = len(stack)
        if depth == 1:
            names[key] = line_at(m.start())
            name = key
        elif depth == 2 and stack[0] is not None and name is not None:
            lines.fields.setdefault(name, {})[key] = line_at(m.start())
    return lines


# ---- YAML


class _ForTheTree(Exception):
    """A YAML feature the event pass leaves to pyyaml's node tree (its text and line)."""

    def __init__(self, feature: str, line: int) -> None:
        super().__init__(feature)
        self.feature, self.line = feature, line


_SCALAR_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("null", "bool", "int", "float", "binary", "timestamp", "str")
)
"""Tags of the scalars the event pass reads (each by pyyaml's safe constructor for it)."""

_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
"""An integer as YAML 1.2's core schema reads it in base 10 (no leading 0: 1.1 makes it octal)."""

_PLAIN_DECIMAL = r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
"""A number in plain decimal digits: ``5``, ``-0.5``, ``.5``, ``2e-3``."""

_DECIMAL_FLOAT = re.compile(rf"{_PLAIN_DECIMAL}|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
"""A float as YAML 1.2's core schema reads it (no ``_``, no base-60 ``1:30.5``)."""

_PLAIN_DECIMAL_RE = re.compile(_PLAIN_DECIMAL)


def decimal_number(text: str) -> float | None:
    """`text` read as a number in plain ASCII decimal (``5``, ``0.5``, ``2e-3``), else None.

    For numbers a user types in an option. Python's ``float()`` also reads ``1_0`` (as 10),
    other scripts' digits (``"٥"`` is 5), ``nan`` and ``infinity``, none of which anyone means
    as an amount; they are no number here, as in a YAML file (`_DECIMAL_FLOAT`). Spaces around
    the number are allowed; an exponent may still overflow to infinity (``1e400``).
    """
    stripped = text.strip()
    return float(stripped) if _PLAIN_DECIMAL_RE.fullmatch(stripped) else None


def _yaml(path: Path, text: str, exponents: bool = False) -> tuple[Any, KeyLines]:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"reading {path} needs pyyaml ({exc}); run: {YAML_HINT}") from exc
    # libyaml when pyyaml has it: the pure-Python scanner is many times slower and takes time
    # quadratic in the nesting depth (bounded by MAX_DEPTH in either case).
    parser = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
    try:
        try:
            return _yaml_events(path, yaml.parse(text, Loader=parser), exponents)
        except _ForTheTree as rare:
            if len(text.encode("utf-8")) > MAX_TREE_BYTES:
                raise MappingFileError(
                    f"{path}:{rare.line}: {rare.feature} is read only in files up to "
                    f"{MAX_TREE_BYTES // (1024 * 1024)} MiB; write it as a plain mapping or list"
                ) from None
            return _yaml_tree(path, text, parser)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        said = " ".join(str(exc).split())
        said = said if len(said) <= 300 else said[:300] + "..."
        raise MappingFileError(f"{at}: not valid YAML ({said})") from None


def _yaml_events(
    path: Path, events: Iterable[Any], exponents: bool = False
) -> tuple[Any, KeyLines]:
    """Check and build a YAML document from its parser events, in one pass.

    Each event is seen once and nothing of the text is kept but the value built: aliases and
    nesting past `MAX_DEPTH` are refused at the first one, a key given twice (the same text,
    as the node tree would show it) at its second, and each scalar is read by pyyaml's safe
    resolver and constructor, as ``yaml.safe_load`` would read it.

    Raises:
        MappingFileError: An alias, nesting too deep, a key given twice, an unreadable scalar.
        _ForTheTree: A feature this pass does not build (the caller reads the file the slow way).

    """
    import yaml

    helper = yaml.SafeLoader("")  # pyyaml's resolver and constructors, for scalars
    try:
        constructors = helper.yaml_constructors
        tags = {
            yaml.MappingStartEvent: (None, "!", helper.DEFAULT_MAPPING_TAG),
            yaml.SequenceStartEvent: (None, "!", helper.DEFAULT_SEQUENCE_TAG),
        }
        lines = KeyLines()
        # For each open collection: [its value, whether a mapping, the key being read, whether
        # a key comes next, the text of each key given and its line].
        stack: list[list[Any]] = []
        # Plain scalars repeat ("1", "true", a field's name): each read once (all immutable).
        known: dict[tuple[str, Any, Any, bool], Any] = {}
        root: Any = None
        documents = 0
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                is_key = bool(stack and stack[-1][1] and stack[-1][3])
                as_number = exponents and not is_key
                value = _scalar(path, helper, constructors, known, event, exponent=as_number)
                if is_key:
                    _key(path, lines, stack, event, value)
                    continue
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:
                    raise _too_deep(path, event)
                if event.tag not in tags[kind]:
                    raise _ForTheTree(f"the YAML tag {str(event.tag)[:40]}", _line(event))
                if stack and stack[-1][1] and stack[-1][3]:
                    raise _ForTheTree("a YAML key that is a mapping or a list", _line(event))
                is_map = kind is yaml.MappingStartEvent
                stack.append([{} if is_map else [], is_map, None, True, {} if is_map else None])
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = stack.pop()[0]
            elif kind is yaml.AliasEvent:
                raise _alias(path, event)
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _ForTheTree("a second YAML document", _line(event))
                continue
            else:  # the stream's and the document's ends
                continue
            if not stack:
                root = value
            elif stack[-1][1]:
                top = stack[-1]
                top[0][top[2]] = value
                top[3] = True
            else:
                stack[-1][0].append(value)
        return root, lines
    finally:
        helper.dispose()


def _yaml12_number_tag(tag: str, value: str) -> str:
    """The tag of a plain scalar resolved by YAML 1.1, corrected to YAML 1.2's decimal numbers.

    ``1e3`` and ``+.5`` become floats, as YAML 1.2 reads them. YAML 1.1's other number forms become text,
    which a strict reader then refuses by name: ``1:30`` (base 60: 90), ``0x10``, ``0b11``,
    ``0o7``, ``017`` (octal: 15) and ``1_000`` would otherwise be numbers no one meant.
    """
    if tag == "tag:yaml.org,2002:str" and _DECIMAL_FLOAT.fullmatch(value):  # 1e3, +.5
        return "tag:yaml.org,2002:float"
    if tag == "tag:yaml.org,2002:int" and not _DECIMAL_INT.fullmatch(value):
        return "tag:yaml.org,2002:str"
    if tag == "tag:yaml.org,2002:float" and not _DECIMAL_FLOAT.fullmatch(value):
        return "tag:yaml.org,2002:str"
    return tag


def _scalar(
    path: Path,
    helper: Any,
    constructors: dict[Any, Any],
    known: dict[tuple[str, Any, Any, bool], Any],
    event: Any,
    *,
    exponent: bool = False,
) -> Any:
    """A scalar event's value, as pyyaml's composer and safe constructor would read it.

    With `exponent`, a plain (unquoted) value written as a number in exponent form without a
    dot, ``1e3``, is a float, as YAML 1.2 reads it (`read_mapping`'s ``exponents``).
    """
    import yaml

    cache_key = (event.value, event.implicit, event.tag, exponent)
    if cache_key in known:
        return known[cache_key]
    tag = event.tag
    if tag is None or tag == "!":  # what pyyaml's composer does
        tag = helper.resolve(yaml.ScalarNode, event.value, event.implicit)
        if exponent and event.implicit[0]:
            tag = _yaml12_number_tag(tag, event.value)
    if tag not in _SCALAR_TAGS:  # a merge key, "=", a collection tag on a scalar, `!custom`
        raise _ForTheTree(f"the YAML tag {str(tag)[:40]}", _line(event))
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    try:
        value = constructors[tag](helper, node)
    except (ValueError, TypeError) as exc:  # e.g. ``!!int abc``; yaml.YAMLError passes up
        raise MappingFileError(
            f"{path}:{_line(event)}: not valid YAML ({event.value[:40]!r} is not a "
            f"{tag.rsplit(':', 1)[-1]}: {' '.join(str(exc).split())[:100]})"
        ) from None
    if len(event.value) <= 64 and len(known) < 10_000:
        known[cache_key] = value
    return value


def _key(path: Path, lines: KeyLines, stack: list[list[Any]], event: Any, key: Any) -> None:
    """A scalar read where a mapping's key comes next: checked, placed and made the key."""
    top = stack[-1]
    given: dict[str, int] = top[4]
    line = _line(event)
    # The key's text decides (as the node tree showed it): "1" and '1' are the same key.
    first = given.get(event.value)
    if first is not None:
        raise _twice(path, str(event.value), line, first)
    given[event.value] = line
    if len(stack) == 1:
        lines.names[str(key)] = line
    elif len(stack) == 2 and stack[0][1]:
        lines.fields.setdefault(str(stack[0][2]), {})[str(key)] = line
    top[2], top[3] = key, False


def _yaml_tree(path: Path, text: str, parser: Any) -> tuple[Any, KeyLines]:
    """Read a (small) YAML file through pyyaml's node tree: the rare features, exactly."""
    import yaml

    _check_events(path, yaml.parse(text, Loader=parser))
    loader = parser(text)
    try:
        node = loader.get_single_node()
        lines = KeyLines()
        if isinstance(node, yaml.MappingNode):
            lines.names = _yaml_keys(path, node)
            for key_node, value in node.value:
                if isinstance(value, yaml.MappingNode):
                    lines.fields[str(key_node.value)] = _yaml_keys(path, value)
            # Every mapping below too (``m: {input: 1, output: 10, output: 0}``): YAML would
            # keep the last one given, silently. Iterative; `_check_events` bounded the depth.
            stack = [value for _, value in node.value]
            while stack:
                item = stack.pop()
                if isinstance(item, yaml.MappingNode):
                    _yaml_keys(path, item)
                    stack.extend(value for _, value in item.value)
                elif isinstance(item, yaml.SequenceNode):
                    stack.extend(item.value)
        return (loader.construct_document(node) if node is not None else None), lines
    finally:
        loader.dispose()


def _yaml_keys(path: Path, node: Any) -> dict[str, int]:
    """The 1-based line of each key of a YAML mapping node; a key given twice is refused."""
    lines: dict[str, int] = {}
    for key_node, _ in node.value:
        key = str(key_node.value)
        if key in lines:
            raise _twice(path, key, key_node.start_mark.line + 1, lines[key])
        lines[key] = key_node.start_mark.line + 1
    return lines


def _check_events(path: Path, events: Iterable[Any]) -> None:
    """Refuse YAML aliases and deep nesting before anything is built (one line, file:line).

    An alias (``*name``) repeats a whole tree, so a few lines may expand to gigabytes (the
    "billion laughs"); nesting deeper than `MAX_DEPTH` is no price table or catalog. Both are
    read from the parser's events, which expand nothing and stop at the first such one, so a
    hostile file costs what its text costs.
    """
    import yaml

    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise _alias(path, event)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(path, event)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _alias(path: Path, event: Any) -> MappingFileError:
    return MappingFileError(
        f"{_at(path, event)}: YAML aliases "
        f"(*{str(event.anchor)[:40]}) are not allowed here; write the entry out in full"
    )


def _too_deep(path: Path, event: Any) -> MappingFileError:
    return MappingFileError(f"{_at(path, event)}: nested too deeply (more than {MAX_DEPTH} levels)")


def _line(event: Any) -> int:
    """The 1-based line of a parser event (0 when it has no position)."""
    mark = event.start_mark
    return mark.line + 1 if mark is not None else 0


def _at(path: Path, event: Any) -> str:
    """``file:line`` of a parser event (the file alone when it has no position)."""
    mark = event.start_mark
    return f"{path}:{mark.line + 1}" if mark is not None else str(path)
