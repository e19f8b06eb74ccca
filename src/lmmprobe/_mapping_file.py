"""Reading a JSON or YAML file whose top level maps names to entries, with file:line errors.

Task catalogs and model cards (`lmmprobe.holistic`) and price tables (`lmmprobe.run.prices`)
are such files. Every error names the file and, where it can, the line: unparsable text, a top
level that is not a mapping, a name or a field given twice at any level (YAML would silently
keep the last, JSON too).

They are configuration written by hand, read in time and memory bounded by their size: a file
over `MAX_BYTES`, one that is not UTF-8 text, nesting deeper than the parsers can follow, and
YAML aliases (``*name``, which let a few lines expand to gigabytes, the "billion laughs") are
refused in one line naming the file.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["MappingFileError", "read_mapping", "where"]

YAML_HINT = "pip install 'lmmprobe[holistic]'"
"""The extra that installs pyyaml."""

MAX_BYTES = 16 * 1024 * 1024
"""The largest file read: a price table or a catalog is a few kilobytes."""

MAX_DEPTH = 100
"""The deepest nesting of YAML collections read (the data loader's limit for JSON rows)."""


class MappingFileError(ValueError):
    """The file is missing or unparsable, is not a mapping, or repeats a name (file:line)."""


def read_mapping(path: Path, *, what: str = "entries") -> tuple[dict[str, Any], dict[str, int]]:
    """Read a file whose top level maps names to entries: ``.json`` as JSON, anything else YAML.

    Args:
        path: The file.
        what: What the entries are, for the message when the top level is not a mapping.

    Returns:
        ``(data, lines)``: the mapping (names as text), and the 1-based line of each name.

    Raises:
        MappingFileError: The file is missing, unparsable, not a mapping, or repeats a name.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    if not path.is_file():
        raise MappingFileError(f"{path}: file does not exist")
    text = _text(path)
    try:
        data, lines = _json(path, text) if path.suffix.lower() == ".json" else _yaml(path, text)
    except RecursionError:
        raise MappingFileError(f"{path}: nested too deeply to read") from None
    if data is None:
        return {}, lines
    if not isinstance(data, dict):
        raise MappingFileError(
            f"{path}: the top level must be a mapping of names to {what}, got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, lines


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


def where(path: Path, lines: dict[str, int], key: str) -> str:
    """``file:line`` of a top-level name when known, else the file."""
    line = lines.get(key)
    return f"{path}:{line}" if line is not None else str(path)


class _Twice(ValueError):
    """A key given twice in one JSON object: the key, and where its second one starts."""

    def __init__(self, key: str, at: int | None, first: int | None) -> None:
        super().__init__(key)
        self.key, self.at, self.first = key, at, first


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(key, None, None)
        out[key] = value
    return out


class _PlacingDecoder(json.JSONDecoder):
    """A JSON decoder that says where a repeated key is (the fast C decoder cannot).

    Built on the standard library's pure-Python decoder parts (public in `json` though not
    in its type stubs). Used only to name the line once the C decoder has found a key given
    twice: each object's
    pairs are read by the standard `json.decoder.JSONObject`, and, when one repeats, its keys
    are walked again from the object's start to place the second.
    """

    def __init__(self) -> None:
        super().__init__(object_pairs_hook=list)
        self.parse_object = self._object
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]  # reads parse_object when built

    def _object(self, s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
        pairs, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        seen: dict[str, int] = {}
        for i, (key, _) in enumerate(pairs):
            if key in seen:
                places = self._key_places(*s_and_end)
                raise _Twice(key, places[i], places[seen[key]])
            seen[key] = i
        return dict(pairs), end

    def _key_places(self, text: str, pos: int) -> list[int]:
        """Where each key of the (valid) object whose text starts at `pos` begins."""
        ws = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]
        places: list[int] = []
        while True:
            pos = ws(text, pos).end()
            if text[pos] == "}":
                return places
            places.append(pos)
            _, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = ws(text, ws(text, pos).end() + 1).end()  # past the colon
            _, pos = self.scan_once(text, pos)
            pos = ws(text, pos).end()
            if text[pos] == "}":
                return places
            pos += 1  # past the comma


def _twice(path: Path, text: str) -> MappingFileError:
    """The one-line error for a key given twice in a JSON file, placed by `_PlacingDecoder`."""
    try:
        _PlacingDecoder().decode(text)
    except _Twice as twice:
        if twice.at is not None and twice.first is not None:
            line = text.count("\n", 0, twice.at) + 1
            first = text.count("\n", 0, twice.first) + 1
            return MappingFileError(
                f"{path}:{line}: {twice.key!r} is defined twice (first on line {first})"
            )
        return MappingFileError(f"{path}: {twice.key!r} is defined twice")  # pragma: no cover
    except (ValueError, RecursionError):  # pragma: no cover - the C decoder read it
        pass
    return MappingFileError(f"{path}: a key is defined twice")  # pragma: no cover


def _json(path: Path, text: str) -> tuple[Any, dict[str, int]]:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise MappingFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except _Twice:  # a key given twice, at any level: JSON would silently keep the last
        raise _twice(path, text) from None
    except RecursionError:  # nested past what the decoder follows (about 1,000 levels)
        raise MappingFileError(f"{path}: not valid JSON (nested too deeply to read)") from None
    # json gives no positions: a top-level name's line is where its quoted text first appears.
    lines: dict[str, int] = {}
    if isinstance(data, dict):
        for key in data:
            at = text.find(json.dumps(key) + ":")
            at = at if at >= 0 else text.find(json.dumps(key))
            if at >= 0:
                lines[key] = text.count("\n", 0, at) + 1
    return data, lines


def _yaml(path: Path, text: str) -> tuple[Any, dict[str, int]]:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"reading {path} needs pyyaml ({exc}); run: {YAML_HINT}") from exc
    try:
        # libyaml when pyyaml has it: the pure-Python scanner takes time quadratic in the
        # nesting depth (which the check below bounds in either case).
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        _check_events(path, yaml.parse(text, Loader=loader))
        # Compose first: the node tree carries line numbers and shows repeated names, which
        # safe_load would silently merge.
        node = yaml.compose(text, Loader=loader)
        data = yaml.load(text, Loader=loader)  # a safe loader, C or Python
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        said = " ".join(str(exc).split())
        said = said if len(said) <= 300 else said[:300] + "..."
        raise MappingFileError(f"{at}: not valid YAML ({said})") from None
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        lines = _yaml_keys(path, node)
        # Every mapping below too (``m: {input: 1, output: 10, output: 0}``): YAML would keep
        # the last one given, silently. Iterative; `_check_events` bounded the depth.
        stack = [value for _, value in node.value]
        while stack:
            item = stack.pop()
            if isinstance(item, yaml.MappingNode):
                _yaml_keys(path, item)
                stack.extend(value for _, value in item.value)
            elif isinstance(item, yaml.SequenceNode):
                stack.extend(item.value)
    return data, lines


def _yaml_keys(path: Path, node: Any) -> dict[str, int]:
    """The 1-based line of each key of a YAML mapping node; a key given twice is refused."""
    lines: dict[str, int] = {}
    for key_node, _ in node.value:
        key = str(key_node.value)
        if key in lines:
            raise MappingFileError(
                f"{path}:{key_node.start_mark.line + 1}: {key!r} is defined twice "
                f"(first on line {lines[key]})"
            )
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
            raise MappingFileError(
                f"{_at(path, event)}: YAML aliases "
                f"(*{str(event.anchor)[:40]}) are not allowed here; write the entry out in full"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise MappingFileError(
                    f"{_at(path, event)}: nested too deeply (more than {MAX_DEPTH} levels)"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _at(path: Path, event: Any) -> str:
    """``file:line`` of a parser event (the file alone when it has no position)."""
    mark = event.start_mark
    return f"{path}:{mark.line + 1}" if mark is not None else str(path)
