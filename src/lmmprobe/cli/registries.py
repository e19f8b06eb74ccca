"""``lmmprobe list KIND``: what each registry holds; and checks for options that name an entry.

Every extension point (matchers, prompt styles, data sources, metrics, model backends, image
tools, APEx orchestrators) is a `Registry`, so one command lists them all, with plugins from
installed packages marked as such. Options such as ``--matcher`` are checked against the same registries (or, for
fixed choices, the schema's literal types), so a wrong value names the allowed ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Annotated, Any, get_args

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import console, fail
from lmmprobe.registry import Registry, RegistryError, did_you_mean


def _attribute(module: str, name: str) -> Callable[[], Registry[Any]]:
    def load() -> Registry[Any]:
        registry: Registry[Any] = getattr(importlib.import_module(module), name)
        return registry

    return load


LISTINGS: dict[str, Callable[[], Registry[Any]]] = {
    "matchers": _attribute("lmmprobe.parse", "MATCHERS"),
    "prompt-styles": _attribute("lmmprobe.formulate", "PROMPT_STYLES"),
    "sources": _attribute("lmmprobe.data", "SOURCES"),
    "metrics": _attribute("lmmprobe.metrics.run_metric", "RUN_METRICS"),
    "models": _attribute("lmmprobe.models", "MODELS"),
    "tools": _attribute("lmmprobe.tools.registry", "TOOLS"),
    "orchestrators": _attribute("lmmprobe.apex.protocol", "ORCHESTRATORS"),
    "judge-protocols": _attribute("lmmprobe.judge.protocol", "JUDGE_PROTOCOLS"),
    "readers": _attribute("lmmprobe.predictions.imported", "READERS"),
}
"""Listable registries by the name ``lmmprobe list`` takes; each is imported only when listed."""


def registry_table(kind: str) -> Table:
    """A rich table of one registry: name, status, origin and summary of each entry.

    Raises:
        KeyError: `kind` is not one of `LISTINGS`.

    """
    registry = LISTINGS[kind]()
    table = Table(title=f"{kind} ({registry.kind})", box=box.SIMPLE_HEAD)
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("status")
    table.add_column("origin")
    table.add_column("summary")
    for entry in registry.entries():
        table.add_row(
            escape(entry.name), escape(entry.status), escape(entry.origin), escape(entry.summary)
        )
    return table


def _listable(kind: str | None) -> str | None:
    if kind is None:
        return None  # `list_entries` names the registries: click's "Missing argument" did not
    if kind not in LISTINGS:
        hint = did_you_mean(kind, list(LISTINGS))
        raise typer.BadParameter(f"unknown registry {kind!r}; {hint}known: {', '.join(LISTINGS)}")
    return kind


def list_entries(
    kind: Annotated[
        str | None,
        typer.Argument(
            help=f"Which registry to list: {', '.join(LISTINGS)}.",
            callback=_listable,
            show_default=False,
        ),
    ] = None,
) -> None:
    """List the entries of a registry (built-in and from installed plugins)."""
    if kind is None:
        # A bare `lmmprobe list` said "Missing argument 'KIND'" without naming one.
        fail(f"name the registry to list: `lmmprobe list KIND`, KIND one of {', '.join(LISTINGS)}")
    console.print(registry_table(kind))


# --- option checks -----------------------------------------------------------------------------


def names(registry: Registry[Any]) -> str:
    """The registry's names, comma-separated, for help texts."""
    return ", ".join(registry.names())


def choices(literal: Any) -> str:
    """The values of a ``Literal`` type, comma-separated, for help texts."""
    return ", ".join(str(v) for v in get_args(literal))


def registered(registry: Registry[Any], *, optional: bool = False) -> Callable[[Any], Any]:
    """An option callback accepting only names `registry` resolves (and None if `optional`).

    The error names the known entries (``unknown matcher 'foo'; known: dysca, ...``); typer
    reports it as a bad option value (exit status 2).
    """

    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        try:
            registry.get(value)
        except RegistryError as exc:
            raise typer.BadParameter(str(exc)) from exc
        return value

    return check


def one_of(what: str, literal: Any) -> Callable[[str], str]:
    """An option callback accepting only the values of a ``Literal`` type."""
    allowed: Sequence[str] = [str(v) for v in get_args(literal)]

    def check(value: str) -> str:
        if value not in allowed:
            raise typer.BadParameter(f"unknown {what} {value!r}; known: {', '.join(allowed)}")
        return value

    return check
