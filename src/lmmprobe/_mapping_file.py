"""Reading a JSON or YAML file whose top level maps names to entries, with file:line errors.

Task catalogs and model cards (`lmmprobe.holistic`) and price tables (`lmmprobe.run.prices`)
are such files. Every error names the file and, where it can, the line: unparsable text, a top
level that is not a mapping, a name given twice (YAML would silently keep the last, JSON too).

They are configuration written by hand, read in time and memory bounded by their size: a file
over `MAX_BYTES`, one that is not UTF-8 text, nesting deeper than the parsers can follow, and
YAML aliases (``*name``, which let a few lines expand to gigabytes, the "billion laughs") are
refused in one line naming the file.
"""

from __future__ import annotations

import json
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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"{key!r} is defined twice")
        out[key] = value
    return out


def _json(path: Path, text: str) -> tuple[Any, dict[str, int]]:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise MappingFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:  # a name given twice
        raise MappingFileError(f"{path}: {exc}") from None
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
        for key_node, _ in node.value:
            key = str(key_node.value)
            if key in lines:
                raise MappingFileError(
                    f"{path}:{key_node.start_mark.line + 1}: {key!r} is defined twice "
                    f"(first on line {lines[key]})"
                )
            lines[key] = key_node.start_mark.line + 1
    return data, lines


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
