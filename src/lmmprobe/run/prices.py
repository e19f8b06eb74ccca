"""Model prices: the ``price=IN:OUT`` model option and price table files (``--prices``).

A price is dollars per million prompt (input) and completion (output) tokens (`Price`). It
changes no answer, so it is never part of a model's identity or a cache key: the option is taken
off the spec before the backend sees it (`lmmprobe.models.base.RUN_OPTIONS`).

A price table is a JSON or YAML file mapping model names to prices::

    gpt-4o: {input: 2.5, output: 10}
    "openai:qwen3-vl@http://localhost:8000/v1": {input: 0, output: 0}

A model finds its entry by its spec as written, the spec without its options, the backend's
target (``MODEL@URL``), or the model name alone (``MODEL``), in that order; its own ``price=``
option wins over the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lmmprobe._mapping_file import KeyLines, MappingFileError, decimal_number, read_mapping, where
from lmmprobe._secrets import redact_urls, shown_spec
from lmmprobe.models.base import parse_model_spec
from lmmprobe.schema import Price
from lmmprobe.schema.price import MAX_PRICE

__all__ = ["PRICE_OPTION", "load_price_table", "model_price", "parse_price", "resolve_prices"]

PRICE_OPTION = "price"
"""The model option naming a price: ``price=IN:OUT``."""

_FORMAT = "IN:OUT, dollars per million prompt and completion tokens, e.g. price=2.5:10"


def parse_price(text: str, model: str) -> Price:
    """Read the value of a ``price=IN:OUT`` option.

    Args:
        text: The option's value.
        model: The model spec, for the error.

    Raises:
        ValueError: One line naming the spec, the value and the format.

    """
    head, colon, tail = text.partition(":")
    try:
        if not colon:
            raise ValueError("no ':'")
        # Plain decimal: float() reads other scripts' digits too ("١" is 1), and "1_0" as 10.
        numbers = decimal_number(head), decimal_number(tail)
        if numbers[0] is None or numbers[1] is None:
            raise ValueError("not plain decimal numbers")
        return Price(input=numbers[0], output=numbers[1])
    except ValueError:  # a ValidationError among them: negative, inf, nan
        raise ValueError(
            f"model spec {shown_spec(model)!r}: price={text!r} is not a price; expected {_FORMAT} "
            f"(two numbers from 0 to {MAX_PRICE:,.0f})"
        ) from None


def _names(spec: str) -> list[str]:
    """The names a model's table entry may have, most specific first."""
    backend, target, options = parse_model_spec(spec)
    head = backend if target is None else f"{backend}:{target}"
    rest = [f"{k}={v}" for k, v in options.items() if k != PRICE_OPTION]
    names = [spec, ",".join([head, *rest]), head]
    if target:
        names += [target, target.split("@", 1)[0]]
    return list(dict.fromkeys(n for n in names if n))


def model_price(spec: str, table: Mapping[str, Price]) -> Price | None:
    """The price of one model spec: its ``price=`` option, else its table entry, else None.

    Raises:
        ValueError: The spec's ``price=`` option is not ``IN:OUT``.

    """
    _, _, options = parse_model_spec(spec)
    if PRICE_OPTION in options:
        return parse_price(options[PRICE_OPTION], spec)
    return next((table[n] for n in _names(spec) if n in table), None)


def resolve_prices(models: Iterable[str], table: Mapping[str, Price]) -> dict[str, Price]:
    """The price of each model spec that has one (see `model_price`), by spec.

    Raises:
        ValueError: A ``price=`` option is not ``IN:OUT``.

    """
    out = {}
    for spec in models:
        price = model_price(spec, table)
        if price is not None:
            out[spec] = price
    return out


def load_price_table(path: str | Path) -> dict[str, Price]:
    """Read a price table: a JSON (``.json``) or YAML file mapping model names to prices.

    Each entry is ``{input: DOLLARS, output: DOLLARS}`` (per million tokens).

    Raises:
        ValueError: The file is missing or unparsable, is not a mapping, or an entry is not a
            price; the message names the file, the line and the entry.
        ImportError: A YAML file is given and pyyaml is not installed.

    """
    p = Path(path)
    # A price written 1e3 is a number (YAML 1.2); a quoted "1e3" stays text, refused.
    try:
        data, lines = read_mapping(
            p, what="prices ({input: DOLLARS, output: DOLLARS})", exponents=True
        )
    except MappingFileError as exc:
        # A model named twice is quoted: a spec keyed with its server's URL shows no password.
        raise MappingFileError(redact_urls(str(exc))) from None
    return {name: _entry(p, lines, name, entry) for name, entry in data.items()}


def _entry(path: Path, lines: KeyLines, name: str, entry: Any) -> Price:
    """One table entry as a `Price`, or a one-line error naming where it is (the field's line)."""
    at = where(path, lines, name)
    if not isinstance(entry, dict):
        raise ValueError(
            f"{at}: model {shown_spec(name)!r}: expected {{input: DOLLARS, output: DOLLARS}} (per million "
            f"tokens), got {_short(entry)}"
        )
    unknown = sorted(_short(k) for k in entry if k not in ("input", "output"))
    if unknown:
        at = where(path, lines, name, next(str(k) for k in entry if k not in ("input", "output")))
        raise ValueError(
            f"{at}: model {shown_spec(name)!r}: unknown field(s) {', '.join(unknown)}; give input and output"
        )
    try:
        return Price.model_validate(entry)
    except ValidationError as exc:
        # A quoted number or a boolean is refused, not read as a price (Price is strict).
        problem = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg'].removeprefix('Value error, ')} "
            f"(got {_short(e['input'])})"
            for e in exc.errors()
        )
        errors = exc.errors()
        field = str(errors[0]["loc"][0]) if errors and errors[0]["loc"] else None
        at = where(path, lines, name, field)
        raise ValueError(
            f"{at}: model {shown_spec(name)!r}: {problem} (dollars per million tokens, from 0 to {MAX_PRICE:,.0f})"
        ) from None


def _short(value: Any) -> str:
    """A value of the file for a message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."
