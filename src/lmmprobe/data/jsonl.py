"""lmmprobe's own JSONL format: one sample per line.

Fields: ``id`` (str), ``images`` (list of paths relative to the file), ``question`` (str),
``choices`` (list of str, or null for open-ended), ``answer`` (choice index, or reference
text(s)), ``formulation`` (single_choice | true_false | open_ended; default single_choice when
choices are given, else open_ended), ``context``, ``history`` (list of {role, content}),
``metadata`` (object). Blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import ValidationError

from lmmprobe.data.base import SOURCES, DataError, LoadResult, SampleProblem
from lmmprobe.schema import ImageRef, Sample

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


class _RowError(Exception):
    def __init__(self, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _check_image(base: Path, index: int, value: Any) -> ImageRef:
    field = f"images[{index}]"
    if not isinstance(value, str) or not value:
        raise _RowError(field, f"expected a file path, got {value!r}")
    path = (base / value).resolve()
    if not path.is_file():
        raise _RowError(field, f"image file not found: {value} (looked for {path})")
    try:
        with Image.open(path) as im:
            im.verify()  # reads the whole file; catches truncated and non-image files
    except Exception as exc:
        raise _RowError(field, f"unreadable image {value}: {exc}") from exc
    return ImageRef.from_path(path)


def _field_of(err: Mapping[str, Any]) -> tuple[str | None, str]:
    loc = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    if not loc and ": " in msg:  # sample-level checks name their field first ("answer: ...")
        head, rest = msg.split(": ", 1)
        if head.isidentifier():
            return head, rest
    return (loc or None), msg


def parse_row(row: Any, base: Path) -> Sample:
    """Validate one decoded JSON row into a Sample, resolving image paths against `base`.

    Raises:
        _RowError: The row is invalid; carries the field and reason.

    """
    if not isinstance(row, dict):
        raise _RowError(None, f"expected a JSON object, got {type(row).__name__}")
    missing = [f for f in REQUIRED if f not in row]
    if missing:
        raise _RowError(missing[0], "missing required field")
    unknown = sorted(set(row) - KNOWN)
    if unknown:
        raise _RowError(unknown[0], f"unknown field (known: {', '.join(sorted(KNOWN))})")
    if not isinstance(row["images"], list):
        raise _RowError("images", "expected a list of file paths")
    data = dict(row)
    data["id"] = str(row["id"]) if isinstance(row["id"], int | str) else row["id"]
    data["images"] = [_check_image(base, i, v) for i, v in enumerate(row["images"])]
    if "formulation" not in data:
        data["formulation"] = "single_choice" if row.get("choices") else "open_ended"
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        field, reason = _field_of(dict(exc.errors()[0]))
        raise _RowError(field, reason) from exc


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
    first_line: dict[str, int] = {}
    with path.open(encoding="utf-8-sig") as f:  # tolerate a byte-order mark
        for lineno, raw in enumerate(f, start=1):
            if limit is not None and len(result.samples) >= limit:
                break
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                result.add_problem(
                    SampleProblem(str(path), lineno, None, f"invalid JSON: {exc}"), strict
                )
                continue
            try:
                sample = parse_row(row, path.parent)
            except _RowError as exc:
                result.add_problem(SampleProblem(str(path), lineno, exc.field, exc.reason), strict)
                continue
            if sample.id in first_line:
                reason = f"duplicate id {sample.id!r} (first on line {first_line[sample.id]})"
                result.add_problem(SampleProblem(str(path), lineno, "id", reason), strict)
                continue
            first_line[sample.id] = lineno
            result.samples.append(sample)
    return result
