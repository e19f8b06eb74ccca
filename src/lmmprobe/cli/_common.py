"""What every ``lmmprobe`` command shares: the consoles, the error exit, common options."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from lmmprobe.store import DEFAULT_DB, Store, StoreError, as_store_error


def _width() -> int | None:
    """None (the terminal's width, or ``$COLUMNS``) on a terminal or when COLUMNS is set.

    Piped or captured output gets a fixed 132 columns otherwise, so files and logs read the same
    wherever they were made; ``COLUMNS=80 lmmprobe run ... | less`` still lays out for 80.
    """
    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").strip().isdigit():
        return None
    return 132


console = Console(width=_width())
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
        help="Model spec, repeatable: random, first, hf:PATH, openai:MODEL@URL. Options follow "
        "the spec after commas: 'random,seed=3', 'hf:PATH,dtype=float32'.",
    ),
]
"""``--model/-m``, repeatable: the model specs a command evaluates."""


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: MESSAGE`` on stderr and exit with `code` (2: bad input).

    Soft wrap keeps a long ``file:line`` or path on one line, whole and searchable.
    """
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def open_store(db: Path | None) -> Iterator[Store]:
    """The store at `db` (default path when None), opened read-only for the block inside.

    Every command that opens a store this way only reads it, so a store on read-only media
    can be read, and nothing is created or changed. A store fault met opening it or inside
    the block (no store there, damaged, newer, locked, unreadable) ends the command with its
    one-line message and exit status 2: the store layer's `StoreError`, or an SQLite error
    of code that reads `Store.conn` directly, told the same way (`as_store_error`).
    """
    try:
        store = Store(db, read_only=True)
    except StoreError as exc:
        fail(str(exc))
    try:
        with store:
            yield store
    except StoreError as exc:
        fail(str(exc))
    except sqlite3.Error as exc:
        fault = as_store_error(exc, store.path)
        if fault is None:
            raise  # a bug (bad SQL), not a fault of the file
        fail(str(fault))


@contextmanager
def store_faults_exit() -> Iterator[None]:
    """Turn a `StoreError` that escapes a command into its one line and exit status 2.

    For commands that open their store through the Python API (``report``, ``apex``,
    ``synth filter``...) rather than `open_store`; wraps the whole application, outside
    typer, so it exits with `SystemExit` itself.
    """
    try:
        yield
    except StoreError as exc:
        try:
            fail(str(exc))
        except typer.Exit as done:  # printed as every error is; outside typer, exit here
            raise SystemExit(done.exit_code) from None
