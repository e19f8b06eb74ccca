"""``lmmprobe data list`` and ``lmmprobe data show NAME``: the benchmarks lmmprobe knows by name.

``list`` shows every registered benchmark under its groups (`lmmprobe.data.benchmarks.base.GROUPS`:
standard, leaderboard sets, multi-image, Chinese, HEMM, ReForm-Eval, Dysca; a benchmark may be
in several), one line each at any width from 80 columns: name, rows, split, official metric,
whether a copy is at ``$LMMPROBE_DATA_DIR/NAME`` (wider terminals add the formulation and
title); ``show`` prints one in full: its prompt, notes, the command that fetches it and where
the copy is looked for. ``--json`` (or ``--format json``) prints every field as JSON;
``--format table --json`` is refused, not settled silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import console, fail, options_given
from lmmprobe.cli.registries import one_of
from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks._describe import DATA_DIR_ENV, describe, find_benchmark, groups_of
from lmmprobe.data.benchmarks.base import GROUPS
from lmmprobe.data.benchmarks.load import DATA_DIR_EXPORT

ListFormat = Literal["table", "json"]
ShowFormat = Literal["text", "json"]

app = typer.Typer(
    help="Benchmarks known by name (--data NAME): list them, show one.", no_args_is_help=True
)


def _dash(value: Any) -> str:
    return "-" if value in (None, "", []) else str(value)


_WITH_FORMULATION = 100
"""From this terminal width on, the list shows each benchmark's formulation."""
_WITH_TITLE = 140
"""From this width on, its title too (`data show` and --json always have it)."""


def _copy(r: dict[str, Any]) -> str:
    if r["needs"]:
        return "n/a"  # cannot run: there is nothing to copy for (the group's footnote says why)
    return "yes" if r["present"] else "no"


def _left_out(rows: list[dict[str, Any]], width: int) -> list[str]:
    """The columns `data list` leaves out at terminal `width` (`_group_table`'s rules)."""
    left = []
    if any(_group_table("", [r for r in rows if key in r["groups"]], width).columns[1].header
           != "rows" for key in GROUPS if any(key in r["groups"] for r in rows)):  # fmt: skip
        left.append("rows (in the widest groups)")
    if width < _WITH_FORMULATION:
        left.append("formulation")
    if width < _WITH_TITLE:
        left.append("title")
    return left


def _group_table(title: str, rows: list[dict[str, Any]], width: int) -> Table:
    # One line per benchmark: the identifiers (name, rows, split, metric, copy) whole and never
    # cut, so the widest group (ReForm-Eval's names) still fits 80 columns; a wider terminal
    # gains the formulation, then the title. Everything else is in `data show` and --json.
    table = Table(
        title=f"[bold]{escape(title)}[/] ({len(rows)})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    columns: list[tuple[str, list[str]]] = [
        ("benchmark", [r["name"] for r in rows]),
        ("rows", [f"{len(r['members'])} sets" if r["members"] else _dash(r["size"]) for r in rows]),
        ("split", ["-" if r["members"] else _dash(r["split"]) for r in rows]),
    ]
    if width >= _WITH_FORMULATION:
        columns.append(("formulation", [r["formulation"] for r in rows]))
    columns += [("metric", [_dash(r["metric"]) for r in rows]), ("copy", [_copy(r) for r in rows])]
    widths = [max(len(header), *(len(v) for v in values)) for header, values in columns]
    if sum(widths) + 2 * (len(widths) - 1) > width:
        # A group whose longest name and metric leave no room for every identifier whole
        # loses its row counts first (`data show` and --json have them); rich would drop
        # the last column, the copy, instead.
        del columns[1], widths[1]
    for (header, _), widest in zip(columns, widths, strict=True):
        table.add_column(header, no_wrap=True, min_width=widest, max_width=widest)
    if width >= _WITH_TITLE:
        table.add_column("title", ratio=1, overflow="fold")
    for i, r in enumerate(rows):
        cells = [escape(values[i]) for _, values in columns]
        cells[0] = f"[bold]{cells[0]}[/]"
        if width >= _WITH_TITLE:
            cells.append(f"[dim]{escape(r['title'])}[/]")
        table.add_row(*cells)
    return table


def _listing() -> list[dict[str, Any]]:
    """`describe` of each registered benchmark, its groups worked out once for all."""
    definitions = [BENCHMARKS.get(name) for name in BENCHMARKS.names()]
    groups = groups_of(definitions)
    return [describe(b, groups[b.name]) for b in definitions]


@app.command("list")
def list_benchmarks(
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json.", callback=one_of("format", ListFormat)
        ),
    ] = "table",
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the list as JSON for scripts (same as --format json): one object per "
            "benchmark with name, title, groups, size (rows), split, formulation, metric, "
            "present (a local copy is there), local_copy, fetch, and every other field.",
        ),
    ] = False,
) -> None:
    """List every benchmark by group: rows, split, official metric, local copy."""
    if as_json and fmt != "json" and "fmt" in options_given():
        # Contradicting flags are refused, as elsewhere in the CLI, rather than one silently won.
        fail(f"--format {fmt} and --json contradict each other: give one of them")
    rows = _listing()
    if fmt == "json" or as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print("no benchmarks registered")
        return
    width = console.width
    console.print(f"[bold]{len(rows)} benchmarks[/], by group (a benchmark may be in several)")
    for key, group in GROUPS.items():
        members = [r for r in rows if key in r["groups"]]
        if not members:
            continue
        console.print()
        console.print(_group_table(group.title, members, width))
        cannot = [r for r in members if r["needs"]]
        if cannot:
            console.print(
                "  n/a: "
                + "; ".join(f"{escape(r['name'])} needs {escape(r['needs'])}" for r in cannot),
                soft_wrap=False,
            )
    console.print()
    left = _left_out(rows, width)
    if left:
        # Said, so a narrow terminal's list is not taken for all there is (re-test 20b #6).
        console.print(
            f"at {width} columns the list leaves out {', '.join(left)}: widen the terminal "
            f"or run `COLUMNS={_WITH_TITLE} lmmprobe data list` to see every column "
            "(--json and `lmmprobe data show NAME` have every field)",
            highlight=False,
            markup=False,
        )
    if rows[0]["local_copy"] is None:
        console.print(
            f"{DATA_DIR_ENV} is not set: local copies are looked for in $LMMPROBE_DATA_DIR/NAME "
            "(or give path=FOLDER); `lmmprobe data show NAME` prints the fetch command."
        )
    else:
        console.print(
            "copy: whether $LMMPROBE_DATA_DIR/NAME is there; `lmmprobe data show NAME` prints "
            "the fetch command and everything else about a benchmark."
        )


def _out(text: str, *, whole: bool = False) -> None:
    # Prose is wrapped between words; a `whole` line (a fetch command, a line of the official
    # prompt) is one printed line, to copy or read as it is.
    console.print(text, soft_wrap=True, no_wrap=whole or None)


def _show_text(d: dict[str, Any]) -> None:
    out = _out
    suite = bool(d["members"])
    out(f"[bold]{escape(d['name'])}[/]: {escape(d['title'])}")
    facts = [
        ("citation", d["citation"]),
        ("license", d["license"]),
        ("formulation", d["formulation"]),
        ("official metric", d["metric"]),
        (
            "split",
            None
            if suite
            else d["split"] + (f" (known: {', '.join(d['splits'])})" if d["splits"] else ""),
        ),
        ("rows", d["size"]),
        ("layout", None if suite else d["layout"]),
        ("hub", (d["hub_id"] or "") + (f" @ {d['revision']}" if d["revision"] else "")),
        ("hub config", d["config"]),
        ("HEMM task", d["hemm"]),
        ("ReForm-Eval dimension", d["reform"]),
        (
            "official protocol",
            "CircularEval (see the notes for how lmmprobe runs it)" if d["circular"] else None,
        ),
        (
            "official judge",
            f"{d['judge']} (the official number needs --judge SPEC)" if d.get("judge") else None,
        ),
        ("members", ", ".join(d["members"])),
        ("needs", d["needs"]),
        ("reads rows with", d["to_sample"]),
        ("schema confirmed", d["schema_confirmed"] or "NOT confirmed from the card or loader"),
    ]
    for label, value in facts:
        if value not in (None, "", []):
            out(f"  {label}: {escape(str(value))}")
    prompt = d["prompt"]
    out(f"prompt ({escape(prompt['source'])}):")
    for line in prompt["template"].split("\n"):
        out(f"  | {escape(line)}", whole=True)
    out(
        f"  option line: {escape(json.dumps(prompt['option_format']))}, joined by "
        f"{escape(json.dumps(prompt['option_sep']))}; context: "
        f"{escape(json.dumps(prompt['context_format']))}"
    )
    if d["notes"]:
        out("notes:")
        for note in d["notes"]:
            out(f"  - {escape(note)}")
    out("fetch:")
    if d["local_copy"] is None:
        # First: the fetch command pasted with the variable unset would write under /.
        out(f"  {escape(DATA_DIR_EXPORT)}", whole=True)
    out(f"  {escape(d['fetch'])}", whole=True)
    if d["local_copy"] is None:
        out(f"local copy: {DATA_DIR_ENV} is not set: any folder will do (or pass path=FOLDER)")
    elif suite:
        parent = escape(str(Path(d["local_copy"]).parent))
        state = "every one present" if d["present"] else "not every one present"
        out(f"local copies: {parent}/MEMBER for each member ({state})")
    else:
        state = "present" if d["present"] else "absent"
        out(f"local copy: {escape(d['local_copy'])} ({state})")


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The benchmark's name (`lmmprobe data list`).")],
    fmt: Annotated[
        str,
        typer.Option("--format", "-f", help="text or json.", callback=one_of("format", ShowFormat)),
    ] = "text",
) -> None:
    """Show one benchmark: every field, its official prompt, notes and the fetch command."""
    try:
        d = describe(find_benchmark(name))
    except DataError as exc:
        fail(exc)
    if fmt == "json":
        print(json.dumps(d, indent=2))
        return
    _show_text(d)
