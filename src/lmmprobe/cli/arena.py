"""``lmmprobe arena export -o battles.jsonl``: the arena's votes as a battle file.

The file is JSONL that ``lmmprobe elo`` reads: one vote per line in the order stored, with
``model_a``/``model_b`` in the order shown and ``winner`` ``a``, ``b`` or ``tie`` (a ``both_bad``
vote is a tie, as HEMM and FastChat count ``tie (bothbad)``), plus ``vote`` (the vote cast),
``rater``, ``created_at``, ``run_id``, ``sample_id``, ``repeat``, ``key_a``, ``key_b`` and ``id``.
``lmmprobe elo battles.jsonl`` then prints the numbers of the live leaderboard of
``lmmprobe serve``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lmmprobe.cli._common import DbOption, console, fail, open_store

app = typer.Typer(
    help="The arena of `lmmprobe serve`: human battles between models' answers.",
    no_args_is_help=True,
)


@app.command("export")
def export(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The JSONL file to write (replaced if it exists)."),
    ],
    db: DbOption = None,
) -> None:
    """Write every arena vote as JSONL that `lmmprobe elo` reads (tie and both_bad -> tie)."""
    from lmmprobe.store import StoreError
    from lmmprobe.store.battles import write_jsonl

    if out.is_dir():
        fail(f"--out {out} is a folder: give a file name such as {out / 'battles.jsonl'}")
    if not out.parent.is_dir():
        fail(f"--out {out}: the folder {out.parent} does not exist")
    store = open_store(db)
    try:
        n = write_jsonl(store, out)
    except StoreError as exc:
        fail(exc)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    finally:
        store.close()
    if n == 0:
        console.print(f"No votes in {store.path} yet: wrote an empty {out}.")
        return
    console.print(f"Wrote {n} vote(s) to {out}; rank them with `lmmprobe elo {out}`.")
