"""The one grammar of string specs: ``name[:target][,key=value...]``.

Models (``--model hf:./ckpt,dtype=float32``), data sources (``--data demo,n=100``), retrieval
collections (``--retrieval hf:PATH,split=train``) and orchestrators (``--orchestrator
openai:MODEL@URL,mode=tools``) are all named this way and resolved through a registry
(`lmmprobe.registry`). `parse_spec` reads them all, with one set of rules and one shape of
error; each caller then adds only its own rules on top (the data ``.jsonl`` path shortcut, a
backend's option names and value types).

The rules:

- Commas separate the head from the options, always: neither a target nor a value holds a
  comma (write one in a URL's query string as ``%2C``).
- The head is ``name`` or ``name:target``, split at its first colon, so a target may hold
  colons and ``@`` (``openai:MODEL@http://host:8000/v1``, ``hf:C:/models/x``). ``name:``
  gives an empty target, which the caller judges.
- An option is ``key=value``, split at its first ``=``: a value may hold ``=`` and ``:``
  (``device=cuda:1``, ``note=a=b``) and may be empty (``key=``). A key is a name (letters,
  digits and ``_``, not starting with a digit) and appears once.
- Spaces around the name, the target, each key and each value are ignored.

An option whose value is itself a mapping (``chat_template_kwargs``) writes it as
``key=value`` pairs joined by ``;`` (commas belong to the spec), read by `parse_option_map`:
``chat_template_kwargs=enable_thinking=false;thinking_budget=512``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lmmprobe._secrets import redact_spec, redact_values, spec_secret_values, splits_a_password

__all__ = [
    "KEY",
    "THINK_OPTION",
    "Spec",
    "SpecError",
    "format_spec",
    "parse_option_map",
    "parse_spec",
]

KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What an option's key may be."""

THINK_OPTION = "think"
"""The option every model spec may carry and no backend sees: how its output is split into
thinking and answer when it is scored (`lmmprobe.parse.thinking`)."""

_GRAMMAR = "name[:target][,key=value...]"


class SpecError(ValueError):
    """A spec that does not follow the grammar: the message names the spec and what is wrong.

    Attributes:
        spec: The spec as written.
        option: The option at fault (as written), or None when the head is.

    """

    def __init__(self, kind: str, spec: str, problem: str, option: str | None = None) -> None:
        # Shown with any secret it holds hidden (`lmmprobe._secrets`): errors reach terminals
        # and logs.
        where = f"{kind} spec {redact_spec(spec)!r}"
        if option is not None:
            # The option alone may be a secret only the spec names (``.../v1/key,X``).
            shown = redact_values(redact_spec(option.strip()), spec_secret_values(spec))
            where += f": option {shown!r}"
            super().__init__(f"{where} {problem}")
        else:
            super().__init__(f"{where}: {problem}")
        self.spec = spec
        self.option = option


@dataclass(frozen=True)
class Spec:
    """A parsed spec: ``name[:target][,key=value...]``."""

    name: str
    target: str | None = None
    """The text after the first colon of the head; None without a colon, ``""`` after ``name:``."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Option key → value, in the order written."""

    @property
    def head(self) -> str:
        """The spec before its options: ``name`` or ``name:target``."""
        return self.name if self.target is None else f"{self.name}:{self.target}"

    def __str__(self) -> str:
        return format_spec(self.name, self.target, self.options)


def parse_spec(spec: str, kind: str = "the") -> Spec:
    """Parse ``name[:target][,key=value...]`` by the rules of this module.

    Args:
        spec: The spec as written.
        kind: What the spec names, for errors (``model``, ``data``...): ``model spec 'x': ...``.

    Raises:
        SpecError: The spec has no name, or an option is not ``key=value`` (no ``=``, an empty
            key or one that is not a name), or gives a key twice, or a "," falls inside its
            server URL's user or password.

    """
    head, *pieces = spec.split(",")
    if any(splits_a_password(a, b) for a, b in zip([head, *pieces], pieces, strict=False)):
        # Split there, the password's second half would be quoted as an option.
        raise SpecError(
            kind, spec, "holds a ',' in its server URL's user or password, which ends a part of "
            "a spec: write it percent-encoded (%2C)",
        )  # fmt: skip
    name, colon, target = head.partition(":")
    name = name.strip()
    if not name:
        raise SpecError(kind, spec, f"has no name (expected {_GRAMMAR})")
    options: dict[str, str] = {}
    for piece in pieces:
        if not piece.strip():
            raise SpecError(
                kind, spec, "has an empty option (a stray comma?); options are key=value"
            )
        key, eq, value = piece.partition("=")
        key = key.strip()
        if not eq:
            raise SpecError(kind, spec, "has no '='; options are key=value", piece)
        if not key:
            raise SpecError(kind, spec, "has no key before '='; options are key=value", piece)
        if not KEY.fullmatch(key):
            problem = f"has key {key!r}, not a name (letters, digits, _); options are key=value"
            raise SpecError(kind, spec, problem, piece)
        if key in options:
            raise SpecError(kind, spec, f"repeats key {key!r}; each option is given once", piece)
        options[key] = value.strip()
    return Spec(name, target.strip() if colon else None, options)


def format_spec(
    name: str, target: str | None = None, options: Mapping[str, str] | None = None
) -> str:
    """The spec text that `parse_spec` reads back as these parts.

    Args:
        name: The registered name.
        target: The target (None: no colon).
        options: Option key → value.

    Raises:
        ValueError: A part cannot be written in the grammar (a comma in the target or a value,
            a colon in the name, a key that is not a name).

    """
    if not name.strip() or ":" in name or "," in name or name != name.strip():
        raise ValueError(f"spec name {name!r}: not empty, no ':' or ',', no surrounding spaces")
    parts = [name if target is None else f"{name}:{target}"]
    if target is not None and ("," in target or target != target.strip()):
        raise ValueError(f"spec target {target!r}: no ',' and no surrounding spaces")
    for key, value in (options or {}).items():
        if not KEY.fullmatch(key) or "," in value or value != value.strip():
            raise ValueError(f"spec option {key}={value!r}: the key a name, the value without ','")
        parts.append(f"{key}={value}")
    return ",".join(parts)


OptionScalar = str | int | float | bool | None
"""A value of an option map: what `parse_option_map` makes of one written value."""


def parse_option_map(value: str, option: str) -> dict[str, OptionScalar]:
    """Read an option's value written as ``key=value`` pairs joined by ``;``.

    Each value is read as a JSON scalar where it is one (``true``/``false`` in any case,
    ``null``, numbers, a ``"quoted string"``), else kept as the text written, so
    ``enable_thinking=false;thinking_budget=512;mode=fast`` gives
    ``{"enable_thinking": False, "thinking_budget": 512, "mode": "fast"}``.

    Args:
        value: The option's value as written.
        option: The option's name, for errors.

    Raises:
        ValueError: A pair without ``=``, a key that is not a name or given twice, or no pair
            at all; the message names the option and the pair.

    """
    out: dict[str, OptionScalar] = {}
    for pair in value.split(";"):
        if not pair.strip():
            continue  # a trailing ';'
        key, eq, raw = pair.partition("=")
        key = key.strip()
        if not eq or not KEY.fullmatch(key):
            raise ValueError(
                f"option {option}: {_shown(pair.strip())!r} is not key=value (pairs joined by "
                f"';', e.g. {option}=enable_thinking=false;thinking_budget=512)"
            )
        if key in out:
            raise ValueError(f"option {option}: key {_shown(key)!r} is given twice")
        scalar = _scalar(raw.strip())
        if isinstance(scalar, float) and not math.isfinite(scalar):
            # NaN, Infinity, 1e999: no JSON a request can carry, so every request would fail
            raise ValueError(
                f"option {option}: {key}: {_shown(raw.strip())!r} is not a finite number"
            )
        if isinstance(scalar, str) and _SURROGATE.search(scalar):
            raise ValueError(
                f"option {option}: {key}: the value holds a lone surrogate (\\ud800-\\udfff), "
                "which no request can encode"
            )
        out[key] = scalar
    if not out:
        raise ValueError(
            f"option {option}: no key=value pair (e.g. {option}=enable_thinking=false)"
        )
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate (``"\\ud800"`` decoded, or a byte the shell could not decode): no text a
request is encoded as can hold one."""

_SHOWN_CHARS = 40
"""How much of a written pair a message shows (as ``--max-cost``'s value is shown)."""


def _shown(text: str) -> str:
    """`text` as a message quotes it: secrets hidden, cut after `_SHOWN_CHARS` characters."""
    text = redact_spec(text)
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[:_SHOWN_CHARS]}... ({len(text):,} characters)"


def _scalar(text: str) -> OptionScalar:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.startswith(("[", "{")):
        # Only scalars: "[1]" or "{}" stay text, as nothing in a spec value can nest; never
        # decoded, so that 100,000 "[" are no deeper a problem than "[1]".
        return text
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, str | int | float | bool) or parsed is None else text
