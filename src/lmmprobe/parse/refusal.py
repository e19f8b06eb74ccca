"""Recognise outputs in which a model declines to answer rather than picking an option."""

from __future__ import annotations

import re

_IMAGE = r"(?:the\s+|this\s+|that\s+|any\s+|an?\s+)?(?:image|picture|photo|photograph|figure)"
_CANNOT = (
    r"(?:can\s*not|can't|could\s+not|couldn't|unable\s+to|not\s+able\s+to|impossible\s+to"
    r"|not\s+possible\s+to|no\s+way\s+to)\s+"
)

# Each phrase says, on its own, that no option is being chosen. Verbs after "cannot" are limited
# to epistemic ones (determine, tell, answer...) or to seeing an image, so that an ordinary
# description ("the dog cannot swim") is not mistaken for a refusal. Branches start with a
# literal and the text is lowercased beforehand: the regex engine then scans far faster than
# with IGNORECASE and a leading word boundary, which is checked afterwards instead.
_REFUSAL = re.compile(
    "|".join(
        (
            r"none\s+of\s+(?:these|those|them|the\s+(?:above|given|provided|listed|options|"
            r"choices|answers|alternatives))\b",
            r"neither\s+of\s+(?:these|those|them|the)\b",
            _CANNOT + r"(?:be\s+)?(?:determine|tell|answer|help|assist|identify|say|decide|know"
            r"|judge|infer)",
            _CANNOT + r"(?:see|view|access|open|load|process|analy[sz]e|interpret)\s+" + _IMAGE,
            r"i\s+(?:do\s+not|don't)\s+know\b",
            r"(?:not\s+enough|insufficient)\s+(?:information|context|detail)",
            r"no\s+(?:correct|right|valid|suitable)\s+(?:answer|option|choice)",
            r"no\s+" + _IMAGE + r"s?\s+(?:is\s+|was\s+)?(?:provided|attached|shown|given|included)",
        )
    )
)
# Chinese: "cannot", "don't know", "not sure", "none of them is right", "no correct ...".
_REFUSAL_ZH = re.compile(
    "\u65e0\u6cd5|\u4e0d\u77e5\u9053|\u4e0d\u786e\u5b9a|\u4e0d\u80fd(?:\u786e\u5b9a|\u56de\u7b54)"
    "|\u90fd\u4e0d(?:\u662f|\u5bf9|\u6b63\u786e)|\u6ca1\u6709(?:\u6b63\u786e|\u5408\u9002)"
)
_BARE_NONE = frozenset({"none", "neither", "n/a"})
_STRIP = " \t\r\n.,;:!?\"'`*_()[]"


def is_refusal(text: str) -> bool:
    """Tell whether a model output declines to answer.

    Covers "none of these", inability to determine or answer ("I cannot determine",
    "cannot be determined from the image", "unable to answer", "I don't know"), inability to see
    the image, and their common Chinese forms. Ordinary answers ("The answer is B", "blue") are
    not refusals.

    Args:
        text: Raw model output.

    Returns:
        True when the output is a refusal or a "none of the options" answer.

    """
    # Models often write a typographic apostrophe (U+2019); fold it so one pattern covers both.
    low = text.lower().replace("\u2019", "'")
    if low.strip(_STRIP) in _BARE_NONE:
        return True
    for m in _REFUSAL.finditer(low):
        start = m.start()
        if start == 0 or not (low[start - 1].isalnum() or low[start - 1] == "_"):
            return True
    return _REFUSAL_ZH.search(low) is not None
