"""Option marks and option rendering for choice questions."""

from __future__ import annotations

import string

from lmmprobe.schema import MarkStyle


def option_marks(style: MarkStyle, n: int) -> list[str]:
    """The first `n` marks of a style: upper ``A B C``, lower ``a b c`` or number ``1 2 3``.

    Raises:
        ValueError: More options than the style has marks.

    """
    if style == "number":
        return [str(i + 1) for i in range(n)]
    letters = string.ascii_uppercase if style == "upper" else string.ascii_lowercase
    if n > len(letters):
        raise ValueError(f"{n} options exceed the {len(letters)} {style} marks")
    return list(letters[:n])


def render_options(options: list[str], marks: list[str]) -> str:
    """Render options as ReForm-Eval does: ``Options: (A) red; (B) blue.``."""
    body = "; ".join([f"({m}) {o}" for m, o in zip(marks, options, strict=True)])
    return f"Options: {body}."
