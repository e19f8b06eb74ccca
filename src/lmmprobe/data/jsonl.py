"""lmmprobe's own JSONL format: one sample per line.

Fields: ``id`` (str), ``images`` (list of paths relative to the file), ``question`` (str),
``choices`` (list of str, or null for open-ended), ``answer`` (choice index, or reference
text(s)), ``formulation`` (single_choice | true_false | open_ended; default single_choice when
choices are given, else open_ended), ``context``, ``history`` (list of {role, content}),
``metadata`` (object). Blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmmprobe.data.base import SOURCES, DataError, LoadResult
from lmmprobe.data.rows import RowError, check_image, collect_rows, require_object, to_sample
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
    }
)


def parse_row(row: Any, base: Path) -> Sample:
    """Validate one decoded JSON row into a Sample, resolving image paths against `base`.

    Raises:
        RowError: The row is invalid; carries the field and reason.

    """
    row = require_object(row, REQUIRED)
    unknown = sorted(set(row) - KNOWN)
    if unknown:
        raise RowError(unknown[0], f"unknown field (known: {', '.join(sorted(KNOWN))})")
    if not isinstance(row["images"], list):
        raise RowError("images", "expected a list of file paths")
    data = dict(row)
    data["id"] = str(row["id"]) if isinstance(row["id"], int | str) else row["id"]
    data["images"] = [check_image(base, v, f"images[{i}]") for i, v in enumerate(row["images"])]
    if "formulation" not in data:
        data["formulation"] = "single_choice" if row.get("choices") else "open_ended"
    return to_sample(data)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8-sig") as f:  # tolerate a byte-order mark
        for lineno, raw in enumerate(f, start=1):
            text = raw.strip()
            if text and not text.startswith("#"):
                yield lineno, text


def _parse_line(text: str, base: Path) -> Sample:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowError(None, f"invalid JSON: {exc}") from exc
    return parse_row(row, base)


@SOURCES.register("jsonl", summary="PATH.jsonl  lmmprobe's JSONL format (one sample per line)")
def load_jsonl(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> LoadResult:
    """Load and validate a JSONL file; invalid rows are reported with file:line and field."""
    if not target:
        raise DataError("the jsonl source needs a path: jsonl:PATH or PATH.jsonl")
    if options:
        raise DataError(f"the jsonl source takes no options (got {sorted(options)})")
    path = Path(target)
    if not path.is_file():
        raise DataError(f"data file not found: {path}")
    result = LoadResult(samples=[], source=str(path))
    base = path.parent
    return collect_rows(
        result,
        _lines(path),
        lambda _, text: _parse_line(text, base),
        strict=strict,
        limit=limit,
    )
