"""Reading a JSON or YAML file whose top level maps names to entries, with file:line errors.

Task catalogs and model cards (`lmmprobe.holistic`) and price tables (`lmmprobe.run.prices`)
are such files. Every error names the file and, where it can, the line: unparsable text, a top
level that is not a mapping, a name given twice (YAML would silently keep the last, JSON too).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["MappingFileError", "read_mapping", "where"]

YAML_HINT = "pip install 'lmmprobe[holistic]'"
"""The extra that installs pyyaml."""


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
    text = path.read_text(encoding="utf-8")
    data, lines = _json(path, text) if path.suffix.lower() == ".json" else _yaml(path, text)
    if data is None:
        return {}, lines
    if not isinstance(data, dict):
        raise MappingFileError(
            f"{path}: the top level must be a mapping of names to {what}, got {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}, lines


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
        # Compose first: the node tree carries line numbers and shows repeated names, which
        # safe_load would silently merge.
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise MappingFileError(f"{at}: not valid YAML ({' '.join(str(exc).split())})") from None
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
