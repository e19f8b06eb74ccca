"""Field checks shared by the prediction readers: one clear ``FILE:ROW: FIELD: why`` each."""

from __future__ import annotations

import ast
import contextlib
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from lmmprobe.data.base import DataError
from lmmprobe.schema import MAX_REPLY_CHARS
from lmmprobe.schema.text import shown_value

__all__ = [
    "MAX_PREDICTION",
    "PANDAS_NA_TEXTS",
    "as_text",
    "as_verdict",
    "cut_length",
    "dig",
    "json_safe",
    "literal_answers",
    "need",
    "pandas_missing",
    "prediction_text",
    "row_error",
    "sample_refusal",
]

MAX_PREDICTION = MAX_REPLY_CHARS
"""The longest prediction read (characters): 1 MiB, far above a model's longest answer with its
thinking, the most a backend keeps of a live reply (`lmmprobe.schema.MAX_REPLY_CHARS`). A longer one is not read: its row is kept as an error (`prediction_text`), and a text
that long among a row's shown fields is cut there with a note saying so (`json_safe`)."""


PANDAS_NA_TEXTS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
})  # fmt: skip
"""The texts pandas reads as a missing value by default (``read_csv`` / ``read_excel``'s
``na_values``, pandas 2.x ``STR_NA_VALUES``; "None" since 2.0). VLMEvalKit's ``load`` reads its
dataset TSVs and its own tables with those defaults, so an option whose text is one of these
(MMStar's "None") is, to VLMEvalKit, no option: never shown, never matched (`pandas_missing`)."""


def pandas_missing(value: Any) -> bool:
    """Whether pandas' default reading makes `value` a missing value (NaN).

    An empty cell (None, NaN), or a text cell that is exactly one of `PANDAS_NA_TEXTS`: what
    VLMEvalKit's ``pd.isna`` tests see after its ``load``.
    """
    if value is None or (isinstance(value, float) and value != value):
        return True
    return isinstance(value, str) and value in PANDAS_NA_TEXTS


def literal_answers(where: str, value: Any) -> list[str]:
    """A cell holding a Python list literal of answer texts (VLMEvalKit's OCRBench ``answer``).

    VLMEvalKit runs ``eval()`` on the cell; only a literal is read here, never code.

    Raises:
        DataError: The cell is no list (or tuple) literal of texts (named by `where`).

    """
    try:
        answers = ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise row_error(where, "answer", "expected a list of answers (a Python literal)") from None
    if not isinstance(answers, list | tuple) or not all(isinstance(a, str) for a in answers):
        raise row_error(where, "answer", f"expected a list of texts, got {type(answers).__name__}")
    return list(answers)


def row_error(where: str, field: str, why: str) -> DataError:
    """The error for one row's field: ``FILE:ROW: FIELD: why`` (a long field name cut)."""
    return DataError(f"{where}: {shown_value(field)}: {why}")


def _index(step: str) -> int:
    """`step` as a list index, or -1 (none) when it is not one.

    ASCII digits only: ``int`` reads ``"٣"`` as 3 and raises on ``"²"``, which `str.isdigit`
    accepts, and on 4,300 digits or more.
    """
    return int(step) if step.isascii() and step.isdigit() and len(step) <= 18 else -1


def dig(row: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted `path` (``doc.question_id``); KeyError when a step is missing."""
    value: Any = row
    for step in path.split("."):
        if isinstance(value, Mapping) and step in value:
            value = value[step]
        elif isinstance(value, list) and 0 <= _index(step) < len(value):
            value = value[_index(step)]
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


def prediction_text(
    where: str, field: str, value: Any, *, allow_number: bool = True
) -> tuple[str, str | None]:
    """A prediction cell as text, and why it was refused (None when it is read).

    A prediction longer than `MAX_PREDICTION` is refused, not cut: the reader keeps the row
    with an empty text and the reason (``FILE:ROW: FIELD: ...``), which the import stores as
    the row's error (counted in the error rate, never scored), and the other rows go on.

    Raises:
        DataError: Not text (`as_text`).

    """
    text = as_text(where, field, value, allow_number=allow_number)
    if len(text) <= MAX_PREDICTION:
        return text, None
    return "", (
        f"{where}: {field}: an answer of {len(text):,} characters, longer than "
        f"{MAX_PREDICTION:,}: not read"
    )


def as_verdict(where: str, field: str, value: Any) -> float | None:
    """A tool's per-item verdict as 1.0 / 0.0 (or its number); None for an empty cell.

    A finite number is read as it is: one outside 0..1 is no verdict, which
    `lmmprobe.predictions.imported.ImportedPrediction` keeps apart as the tool's number.
    NaN is an empty cell (how a spreadsheet writes one).

    Raises:
        DataError: A value that is neither a number, a boolean nor "True"/"False"/"1"/"0", or
            a number that is not finite (``inf``, ``1e999``, ``-Infinity``): no verdict, and no
            number JSON can hold.

    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return float(value)
    number: float | None = None
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past 1e308
            number = math.inf
    elif isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return float(low == "true")
        with contextlib.suppress(ValueError):
            number = float(low)
    if number is None:
        raise row_error(where, field, f"expected a verdict (number or true/false), got {value!r}")
    if math.isnan(number):
        return None
    if math.isinf(number):
        # The number is cut, not the reason (a 400-digit integer left no room for it).
        raise row_error(where, field, f"the verdict {value!r:.60} is not a finite number")
    return number


def json_safe(value: Any) -> Any:
    """`value` with anything JSON cannot hold (a datetime cell, NaN, infinity) as text or None.

    A text longer than `MAX_PREDICTION` is cut to that length and says so at its end.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, float) and math.isinf(value):
        return str(value)  # "inf" / "-inf": shown as the file has it, never as JSON Infinity
    if isinstance(value, str) and len(value) > MAX_PREDICTION:
        return value[:MAX_PREDICTION] + f" [cut here: {len(value):,} characters in the file]"
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# The marker `json_safe` writes: a length in ASCII digits and commas, never longer than this
# (a text naming 5,000 digits is the file's own, and int() refuses past 4,300 digits).
_CUT = re.compile(r" \[cut here: ([0-9,]{1,30}) characters in the file\]")


def cut_length(text: str) -> int | None:
    """The length in the file of a text `json_safe` cut (its marker names it), else None.

    A record's field past `MAX_PREDICTION` is kept cut, for the record's sake; an item made
    from it would be made from a text the file does not hold (`lmmprobe.predictions.file_items`
    refuses such an item).
    """
    found = _CUT.search(text)
    return None if found is None else int(found.group(1).replace(",", ""))


def sample_refusal(exc: ValidationError) -> str:
    """Why pydantic refused a sample, in its checks' own words (each names its field), one line."""
    return "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
