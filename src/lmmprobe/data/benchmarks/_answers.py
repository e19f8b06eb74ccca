"""`as_index`: a row's answer as the index of the correct option."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from lmmprobe.data.rows import RowError
from lmmprobe.schema.text import ascii_integer


def as_index(answer: Any, choices: Sequence[str], field: str = "answer") -> int:
    """The index in `choices` that `answer` names.

    Read in this order: an integer index (or a string of digits), a letter ``B`` (also
    ``(B)`` or ``B.``, upper case, as benchmarks write them), then the exact option text.

    Args:
        answer: The row's answer value.
        choices: The options, in their original order.
        field: The row's field name, for the error.

    Raises:
        RowError: The answer names no option (with the options it was checked against).

    """
    n = len(choices)
    if isinstance(answer, bool) or answer is None:
        raise RowError(field, f"expected an option letter, index or text, got {answer!r}")
    if isinstance(answer, int):
        index = answer
    elif isinstance(answer, str):
        text = answer.strip()
        letter = text.strip("().").strip()
        number = ascii_integer(text, signed=False)  # "²" passes isdigit(), not int()
        if number is not None:
            index = number
        elif len(letter) == 1 and letter in string.ascii_uppercase:
            index = string.ascii_uppercase.index(letter)
        elif answer in choices:
            return list(choices).index(answer)
        elif text in choices:
            return list(choices).index(text)
        else:
            raise RowError(
                field, f"{answer!r} is neither an option letter nor one of {list(choices)}"
            )
    else:
        raise RowError(field, f"expected an option letter, index or text, got {answer!r}")
    if not 0 <= index < n:
        raise RowError(field, f"{answer!r} is out of range for {n} options")
    return index
