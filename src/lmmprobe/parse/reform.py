"""ReForm-Eval's own answer matcher, for scoring prediction files exactly as ReForm-Eval does.

Their rule: the first parenthesized mark ``(X)`` in the output (X a digit 1-9 or a letter)
names the option; otherwise the output must equal an option text exactly; otherwise the answer
is unmatched (wrong, and not a format hit). lmmprobe's own pipeline (`extract_choice`) is more
forgiving; this one exists so numbers computed on ReForm-Eval's files match theirs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, ExtractionStage, unparsed
from lmmprobe.schema import FormulateConfig

_MARK = re.compile(r"\(([1-9A-Za-z])\)")


def mark_index(mark: str) -> int:
    """Option index of a mark: ``A``/``a`` → 0, ``1`` → 0."""
    if mark.isdigit():
        return int(mark) - 1
    return ord(mark.upper()) - ord("A")


def reform_mark(output: str) -> int | None:
    """Index named by the first ``(X)`` mark in `output`, in range or not; None without one."""
    found = _MARK.search(output)
    return mark_index(found.group(1)) if found is not None else None


def reform_match(output: str, options: Sequence[str]) -> int | None:
    """The option `output` chooses under ReForm-Eval's rule, or None when unmatched.

    A mark outside the options counts as unmatched here (lmmprobe never scores a choice that
    was not offered); `reform_mark` gives the raw mark for file scoring, where ReForm-Eval
    counts such a mark as a format hit.
    """
    index = reform_mark(output)
    if index is not None:
        return index if 0 <= index < len(options) else None
    for i, option in enumerate(options):
        if output == option:  # exact equality, no stripping, as theirs
            return i
    return None


@MATCHERS.register("reform", summary="ReForm-Eval's rule: first (X) mark, else exact option text")
def reform_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """ReForm-Eval's rule as a matcher: an exact option text is a ``text`` hit, else ``mark``."""
    index = reform_match(output, options)
    if index is None:
        return unparsed("no_match")
    # Their rule reads a parenthesized mark first, else an exact option text.
    stage: ExtractionStage = "text" if output in options else "mark"
    return Extraction(index, stage, options[index] if stage == "text" else "mark")
