r"""Putting untrusted text into an HTML page safely: JSON inside ``<script>``, plotly labels.

Text from datasets and models is untrusted (see the design guide). Three places take it:

- HTML markup, escaped by jinja2's autoescape;
- JSON embedded in a ``<script type="application/json">`` element, read by the page's script
  and shown with ``textContent``. The HTML parser ends a script element at the first
  ``</script`` whatever the JSON means, so ``<``, ``>`` and ``&`` are written as ``\u003c``
  etc. (still the same JSON string), and U+2028/U+2029 as escapes so the text also stays valid
  if ever read as JavaScript source;
- plotly labels, which plotly parses for a few HTML-like tags (``<b>``, ``<br>``, ``<a>``):
  ``&``, ``<`` and ``>`` become entities, which plotly shows as the literal characters.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from lmmprobe.metrics.value import MetricValue

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_RE = re.compile("[<>&\u2028\u2029]")
_SCRIPT_END = re.compile(r"</(script)", re.IGNORECASE)


def json_ready(value: Any) -> Any:
    """A copy of JSON-like data with NaN and infinities as None (JSON has neither).

    A `MetricValue` (figures computed on the side, e.g. a benchmark's own breakdowns) becomes
    its ``{value, low, high, n}`` dict, as a dumped `Results` writes it.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, MetricValue):
        return json_ready(value.to_dict())
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def script_json(value: Any) -> str:
    r"""JSON text safe to place inside a ``<script>`` element.

    Args:
        value: JSON-ready data (dicts, lists, strings, numbers, None); NaN and infinities
            become null.

    Returns:
        Compact JSON in which ``<``, ``>``, ``&``, U+2028 and U+2029 appear only as ``\uXXXX``
        escapes, so no string in it can close the element or open a comment.

    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or infinity somewhere: walk the data once to replace them
        text = json.dumps(
            json_ready(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    return _JSON_RE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


def inline_script(code: str) -> str:
    r"""JavaScript source made safe to inline: any ``</script`` becomes ``<\/script``.

    In JavaScript source that sequence can only sit inside a string, regular expression or
    comment, where ``<\/`` means the same thing.
    """
    return _SCRIPT_END.sub(r"<\\/\1", code)


def plotly_text(text: object) -> str:
    """A label plotly shows literally: its HTML-like markup neutralized as entities."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
