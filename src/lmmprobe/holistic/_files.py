"""Reading the holistic package's YAML/JSON mapping files with errors that name file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe import _mapping_file
from lmmprobe._mapping_file import KeyLines, MappingFileError, where
from lmmprobe._secrets import redact_urls

__all__ = [
    "KeyLines",
    "TaxonomyError",
    "describe_validation",
    "first_field",
    "read_mapping",
    "where",
]


class TaxonomyError(ValueError):
    """A task catalog or model card file is unreadable or invalid (names file, entry, field)."""


def read_mapping(path: Path) -> tuple[dict[str, Any], KeyLines]:
    """Read a file whose top level maps names to entries (`lmmprobe._mapping_file`).

    ``.json`` files are read as JSON; anything else as YAML (pyyaml is needed then).

    Args:
        path: The file.

    Returns:
        ``(data, lines)``: the mapping, and where each top-level key and field is.

    Raises:
        TaxonomyError: The file is missing, unparsable, not a mapping, or repeats a key.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    try:
        return _mapping_file.read_mapping(path)
    except MappingFileError as exc:
        # A card keyed by a spec with its server's URL: the password is not shown.
        raise TaxonomyError(redact_urls(str(exc))) from None


def describe_validation(exc: ValidationError) -> str:
    """One line per pydantic error: ``field 'a.b': message``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "(entry)"
        parts.append(f"field {loc!r}: {err['msg']}")
    return "; ".join(parts)


def first_field(exc: ValidationError) -> str | None:
    """The entry field the first pydantic error is about (None: the entry as a whole)."""
    errors = exc.errors()
    loc = errors[0]["loc"] if errors else ()
    return str(loc[0]) if loc else None
