"""Dysca's answer extraction, for numbers comparable with Dysca's own.

Their rule (REFERENCE.md): the first ``(x)`` letter mark; else the last capital letter in the
output; else the option with the smallest Levenshtein distance to the output. The last step
always names some option, so under this rule nothing is unparsed except an empty output — use
it for parity with Dysca, and lmmprobe's own pipeline otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig

_PAREN = re.compile(r"\(([a-zA-Z])\)")
_CAPITAL = re.compile(r"[A-Z]")


def dysca_match(output: str, options: Sequence[str]) -> tuple[int | None, str]:
    """Option index chosen under Dysca's rule and the step that decided it.

    Returns:
        ``(index, step)`` with step ``"mark"``, ``"capital"`` or ``"levenshtein"``; ``(None,
        "empty")`` for an empty output or no options. A mark or capital outside the options
        falls through to the next step.

    """
    if not output.strip() or not options:
        return None, "empty"
    found = _PAREN.search(output)
    if found is not None:
        index = ord(found.group(1).upper()) - ord("A")
        if 0 <= index < len(options):
            return index, "mark"
    capitals = _CAPITAL.findall(output)
    if capitals:
        index = ord(capitals[-1]) - ord("A")
        if 0 <= index < len(options):
            return index, "capital"
    distances = [Levenshtein.distance(output, option) for option in options]
    return distances.index(min(distances)), "levenshtein"


@MATCHERS.register(
    "dysca", summary="Dysca's rule: (x) mark, else last capital, else closest option by edits"
)
def dysca_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """Dysca's rule as a matcher: a mark or capital is a ``mark`` hit, edit distance ``fuzzy``."""
    index, step = dysca_match(output, options)
    if index is None:
        return unparsed(step)
    return Extraction(index, "fuzzy" if step == "levenshtein" else "mark", step)
