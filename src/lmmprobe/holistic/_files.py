"""Reading the holistic package's YAML/JSON mapping files with errors that name file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

__all__ = ["TaxonomyError", "describe_validation", "read_mapping", "where"]

_YAML_HINT = "pip install 'lmmprobe[holistic]'"


class TaxonomyError(ValueError):
    """A task catalog or model card file is unreadable or invalid (names file, entry, field)."""


def read_mapping(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """Read a file whose top level maps names to entries.

    ``.json`` files are read as JSON; anything else as YAML (pyyaml is needed then).

    Args:
        path: The file.

    Returns:
        ``(data, lines)``: the mapping, and the 1-based line of each top-level key (YAML only;
        empty for JSON).

    Raises:
        TaxonomyError: The file is missing, unparsable, not a mapping, or repeats a key.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    if not path.is_file():
        raise TaxonomyError(f"{path}: file does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise TaxonomyError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
        except ValueError as exc:
            raise TaxonomyError(f"{path}: {exc}") from exc
        return _check_mapping(data, path), {}
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"reading {path} needs pyyaml ({exc}); run: {_YAML_HINT}") from exc
    try:
        # Compose first: the node tree carries line numbers and shows repeated keys, which
        # safe_load would silently merge.
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise TaxonomyError(f"{where}: not valid YAML ({exc})") from exc
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            key = str(key_node.value)
            if key in lines:
                raise TaxonomyError(
                    f"{path}:{key_node.start_mark.line + 1}: {key!r} is defined twice "
                    f"(first on line {lines[key]})"
                )
            lines[key] = key_node.start_mark.line + 1
    if data is None:
        return {}, lines
    return _check_mapping(data, path), lines


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"{key!r} is defined twice")
        out[key] = value
    return out


def _check_mapping(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TaxonomyError(
            f"{path}: the top level must be a mapping of names to entries, got "
            f"{type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}


def describe_validation(exc: ValidationError) -> str:
    """One line per pydantic error: ``field 'a.b': message``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(entry)"
        parts.append(f"field {loc!r}: {err['msg']}")
    return "; ".join(parts)


def where(path: Path, lines: dict[str, int], key: str) -> str:
    """``file:line`` of a top-level key when known, else the file."""
    line = lines.get(key)
    return f"{path}:{line}" if line is not None else str(path)
