"""``lmmprobe elo VOTES_FILE``: rank models from human pairwise votes, as HEMM does.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models") ranks
models by people's votes between two models' answers: the average win rate, and Elo (every
model starts at 1000, K = 4) as the median over 1,000 shuffled orders of the battles, both as
HEMM's released code computes them. ``--win-rate met`` shows lmmprobe's win rate over
opponents met instead of HEMM's. The computation is `lmmprobe.metrics.elo.elo_table`, the
same function the live leaderboard of ``lmmprobe serve``'s arena calls; this command reads a
vote file, prints one row per model sorted by Elo (the top `TOP_ROWS` in the terminal table,
``--top``; the JSON lists all), and exits with status 2 on a bad file.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import console, fail, write_document

_FORMATS = ("table", "json")
_WIN_RATES = ("hemm", "met")
TOP_ROWS = 100
"""Models the terminal table shows by default. A votes file may name tens of thousands (each
vote between two new models): rich lays a table out at about 1.5 ms a row (40,000 rows held
the terminal for over a minute, re-test 12 #9), to print rows no one reads; the JSON lists all."""
_MAX_K = 1000
"""The largest Elo step ``--k`` takes: HEMM uses 4, chess 10-40; 100,000 overflowed the expected
score (``base ** x``) into a traceback (re-test 11 #12)."""


def elo(
    votes_file: Annotated[
        Path,
        typer.Argument(
            metavar="VOTES_FILE",
            help="Pairwise votes: JSONL (or CSV with a header) with model_a, model_b and winner "
            "(a, b or tie).",
        ),
    ],
    k: Annotated[float, typer.Option("--k", help="Elo update step K (HEMM: 4).")] = 4.0,
    shuffles: Annotated[
        int,
        typer.Option(min=0, help="Random battle orders to take the median over (0: file order)."),
    ] = 1000,
    seed: Annotated[
        int,
        typer.Option(help="Seed of the battle orders (HEMM's orders after random.seed(SEED))."),
    ] = 0,
    win_rate: Annotated[
        str,
        typer.Option(
            "--win-rate",
            help="hemm: HEMM's average win rate (mean over all models, own zero included; "
            "NaN if a pair never met or only tied); met: lmmprobe's, over opponents met.",
        ),
    ] = "hemm",
    top: Annotated[
        int,
        typer.Option(
            min=0,
            help="Models the table shows, best first (0: all; -f json always lists all).",
        ),
    ] = TOP_ROWS,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
) -> None:
    """Rank models from human pairwise votes: median Elo over shuffles and average win rate."""
    from lmmprobe.metrics.elo import (
        WIN_RATE_DEFINITIONS,
        BattleFileError,
        EloTooLargeError,
        elo_table,
        load_battles,
    )

    if fmt not in _FORMATS:
        fail(f"--format must be one of {', '.join(_FORMATS)}, not {fmt!r}")
    if win_rate not in _WIN_RATES:
        fail(f"--win-rate must be one of {', '.join(_WIN_RATES)}, not {win_rate!r}")
    if not (math.isfinite(k) and 0 < k <= _MAX_K):
        fail(f"--k must be a positive number of at most {_MAX_K:,} (HEMM: 4), got {k:g}")
    try:
        battles = load_battles(votes_file)
    except (BattleFileError, FileNotFoundError, UnicodeDecodeError) as exc:
        fail(exc)
    except OSError as exc:
        fail(f"{votes_file}: cannot be read ({exc})")
    if not battles:
        fail(
            f"{votes_file}: no votes in the file: vote in `lmmprobe serve`'s arena first, "
            f"then `lmmprobe arena export -o {shlex.quote(str(votes_file))}`"
        )
    try:
        rows = elo_table(
            battles,
            k=k,
            shuffles=shuffles,
            seed=seed,
            win_rate="hemm" if win_rate == "hemm" else "met",
        )
    except EloTooLargeError as exc:
        fail(
            f"{votes_file}: {exc}; use --shuffles {exc.fit} or fewer"
            if exc.fit
            else f"{votes_file}: {exc}; use --shuffles 0 (the file's order, replayed once)"
        )
    except OverflowError:  # a run of upsets can still push two ratings apart past a float
        fail(f"{votes_file}: the ratings overflow with --k {k:g}; use a smaller --k (HEMM: 4)")
    except MemoryError:
        fail(
            f"{votes_file}: not enough memory to rate {len(battles):,} votes over {shuffles:,} "
            "shuffles; free memory or use fewer --shuffles"
        )
    if fmt == "json":
        doc = {
            "file": str(votes_file),
            "battles": len(battles),
            "k": k,
            "initial": 1000.0,
            "shuffles": shuffles,
            "seed": seed,
            "win_rate_definition": win_rate,
            "columns": {
                "elo": "median Elo over the shuffled orders (HEMM's get_bootstrap_result)",
                "elo_hemm_int": "HEMM's printed Elo rating: int(median + 0.5)",
                "win_rate": WIN_RATE_DEFINITIONS[win_rate],
                "hemm_win_rate": WIN_RATE_DEFINITIONS["hemm"],
                "win_rate_over_opponents_met": WIN_RATE_DEFINITIONS["met"],
            },
            "models": rows,
        }
        write_document(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", json_text=True)
        return
    shown = rows[:top] if top else rows
    undefined = any(r["win_rate"] is None for r in shown)
    order = f"median over {shuffles} shuffles" if shuffles else "file order"
    which = (
        "HEMM's (mean over all models, own zero included)"
        if win_rate == "hemm"
        else "lmmprobe's, mean over opponents met"
    )
    caption = f"K={k:g}, start 1000, {order}; win rate: {which}"
    if undefined:
        caption += (
            "\n- : undefined (NaN), some pair of models never met or only tied"
            if win_rate == "hemm"
            else "\n- : undefined (NaN), the model won or lost no battle"
        )
    table = Table(
        title=f"Elo from {len(battles)} votes in {escape(votes_file.name)}",
        caption=caption,
        box=box.SIMPLE_HEAD,
    )
    table.add_column("#", justify="right")
    table.add_column("model", style="bold", overflow="fold")
    table.add_column("Elo", justify="right")
    table.add_column("win rate" if win_rate == "hemm" else "win rate (met)", justify="right")
    table.add_column("battles", justify="right")
    table.add_column("W / L / T", justify="right")
    for i, r in enumerate(shown, 1):
        rate = "-" if r["win_rate"] is None else f"{r['win_rate']:.3f}"
        table.add_row(
            str(i),
            escape(r["model"]),
            f"{r['elo']:.1f}",
            rate,
            str(r["battles"]),
            f"{r['wins']} / {r['losses']} / {r['ties']}",
        )
    console.print(table)
    if len(shown) < len(rows):
        quoted = shlex.quote(str(votes_file))
        console.print(
            f"{len(rows) - len(shown):,} more models not shown (the table shows the top "
            f"{len(shown):,} of {len(rows):,}): `lmmprobe elo {quoted} -f json` lists all, "
            "--top 0 shows all here",
            markup=False,
            highlight=False,
        )
