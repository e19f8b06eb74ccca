"""Reading the holistic package's YAML/JSON mapping files with errors that name file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe import _mapping_file
from lmmprobe._mapping_file import MappingFileError, where

__all__ = ["TaxonomyError", "describe_validation", "read_mapping", "where"]


class TaxonomyError(ValueError):
    """A task catalog or model card file is unreadable or invalid (names file, entry, field)."""


def read_mapping(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """Read a file whose top level maps names to entries (`lmmprobe._mapping_file`).

    ``.json`` files are read as JSON; anything else as YAML (pyyaml is needed then).

    Args:
        path: The file.

    Returns:
        ``(data, lines)``: the mapping, and the 1-based line of each top-level key.

    Raises:
        TaxonomyError: The file is missing, unparsable, not a mapping, or repeats a key.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    try:
        return _mapping_file.read_mapping(path)
    except MappingFileError as exc:
        raise TaxonomyError(str(exc)) from None


def describe_validation(exc: ValidationError) -> str:
    """One line per pydantic error: ``field 'a.b': message``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(entry)"
        parts.append(f"field {loc!r}: {err['msg']}")
    return "; ".join(parts)
