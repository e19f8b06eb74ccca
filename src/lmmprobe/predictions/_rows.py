"""Field checks shared by the prediction readers: one clear ``FILE:ROW: FIELD: why`` each."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from lmmprobe.data.base import DataError

__all__ = ["as_text", "as_verdict", "dig", "json_safe", "need", "row_error"]


def row_error(where: str, field: str, why: str) -> DataError:
    """The error for one row's field: ``FILE:ROW: FIELD: why``."""
    return DataError(f"{where}: {field}: {why}")


def dig(row: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted `path` (``doc.question_id``); KeyError when a step is missing."""
    value: Any = row
    for step in path.split("."):
        if isinstance(value, Mapping) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            raise KeyError(step)
    return value


def need(where: str, row: Mapping[str, Any], field: str) -> Any:
    """`row`'s `field` (dotted paths allowed), or a `DataError` naming where it is missing."""
    try:
        return dig(row, field)
    except KeyError:
        raise row_error(where, field, "missing required field") from None


def as_text(where: str, field: str, value: Any, *, allow_number: bool = True) -> str:
    """A text cell: strings as they are, numbers written out (a table reads "3" as 3).

    Raises:
        DataError: A list, object, boolean or missing value.

    """
    if isinstance(value, str):
        return value
    if allow_number and isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and math.isnan(value):
            return ""  # an empty spreadsheet cell
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    raise row_error(where, field, f"expected text, got {type(value).__name__} {value!r}"[:200])


def as_verdict(where: str, field: str, value: Any) -> float | None:
    """A tool's per-item verdict as 1.0 / 0.0 (or its number); None for an empty cell.

    Raises:
        DataError: A value that is neither a number, a boolean nor "True"/"False"/"1"/"0".

    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return float(low == "true")
        try:
            return float(low)
        except ValueError:
            pass
    raise row_error(where, field, f"expected a verdict (number or true/false), got {value!r}")


def json_safe(value: Any) -> Any:
    """`value` with anything JSON cannot hold (a datetime cell, NaN) written as text or None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
