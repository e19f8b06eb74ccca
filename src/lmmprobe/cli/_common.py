"""What every ``lmmprobe`` command shares: the consoles, the error exit, common options."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from lmmprobe.store import DEFAULT_DB, Store, StoreVersionError

# Piped or captured output gets a fixed width wide enough for every metric column.
console = Console(width=None if sys.stdout.isatty() else 132)
err_console = Console(stderr=True)

DbOption = Annotated[
    Path | None,
    typer.Option("--db", envvar="LMMPROBE_DB", help=f"SQLite store [default: {DEFAULT_DB}]."),
]
"""``--db``: the SQLite store (``$LMMPROBE_DB`` also sets it)."""

ModelsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="Model spec, repeatable: random, first, hf:PATH, openai:MODEL@URL.",
    ),
]
"""``--model/-m``, repeatable: the model specs a command evaluates."""


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: MESSAGE`` on stderr and exit with `code` (2: bad input).

    Soft wrap keeps a long ``file:line`` or path on one line, whole and searchable.
    """
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def open_store(db: Path | None) -> Store:
    """The store at `db` (default path when None), or a clean exit when lmmprobe cannot read it.

    A store written by a newer lmmprobe is refused with its file and both layout versions.
    """
    try:
        return Store(db)
    except StoreVersionError as exc:
        fail(str(exc))
