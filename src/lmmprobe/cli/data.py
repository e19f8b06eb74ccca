"""``lmmprobe data list`` and ``lmmprobe data show NAME``: the benchmarks lmmprobe knows by name.

``list`` shows every registered benchmark (title, size, split, formulation, official metric,
HEMM and ReForm-Eval dimensions, whether a copy is at ``$LMMPROBE_DATA_DIR/NAME``, what it
needs); ``show`` prints one in full: its prompt, notes, the command that fetches it and where
the copy is looked for. ``--format json`` prints the same as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from lmmprobe.cli._common import console, fail
from lmmprobe.cli.registries import one_of
from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks._describe import DATA_DIR_ENV, describe, find_benchmark
from lmmprobe.data.benchmarks.load import DATA_DIR_EXPORT

ListFormat = Literal["table", "json"]
ShowFormat = Literal["text", "json"]

app = typer.Typer(
    help="Benchmarks known by name (--data NAME): list them, show one.", no_args_is_help=True
)


def _dash(value: Any) -> str:
    return "-" if value in (None, "", []) else str(value)


def _dimension(r: dict[str, Any]) -> str:
    parts = [
        f"HEMM: {r['hemm']}" if r["hemm"] else "",
        f"ReForm-Eval: {r['reform']}" if r["reform"] else "",
        f"[red]needs {escape(r['needs'])}[/]" if r["needs"] else "",
    ]
    return "; ".join(escape(p) if not p.startswith("[red]") else p for p in parts if p) or "-"


def _list_table(rows: list[dict[str, Any]]) -> Table:
    # Two lines per benchmark so the table reads at 80 columns: its name over its title (then
    # its dimensions and needs, which wrap), its size over its split, its formulation over its
    # official metric. The identifiers (name, size, split, formulation, metric, copy) are never
    # cut; the prose is in full in `data show` and --format json.
    table = Table(title=f"benchmarks ({len(rows)})", box=box.SIMPLE_HEAD, show_lines=True)
    size = [
        (f"{len(r['members'])} sets" if r["members"] else _dash(r["size"]))
        + ("" if r["members"] else f"\n{r['split']}")
        for r in rows
    ]
    task = [f"{r['formulation']}\n{_dash(r['metric'])}" for r in rows]
    copy = ["yes" if r["present"] else "no" for r in rows]
    table.add_column("benchmark", ratio=1, min_width=max(len(r["name"]) for r in rows))
    for column, values in (("rows, split", size), ("formulation, metric", task), ("copy", copy)):
        widest = max(len(column), *(len(line) for v in values for line in v.splitlines()))
        table.add_column(column, no_wrap=True, min_width=widest)
    for i, r in enumerate(rows):
        dimension = _dimension(r)
        table.add_row(
            f"[bold]{escape(r['name'])}[/]\n[dim]{escape(r['title'])}[/]"
            + ("" if dimension == "-" else f"\n{dimension}"),
            escape(size[i]),
            escape(task[i]),
            copy[i],
        )
    return table


@app.command("list")
def list_benchmarks(
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="table or json.", callback=one_of("format", ListFormat)
        ),
    ] = "table",
) -> None:
    """List every benchmark: size, split, formulation, official metric, dimensions, local copy."""
    rows = [describe(BENCHMARKS.get(name)) for name in BENCHMARKS.names()]
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print("no benchmarks registered")
        return
    console.print(_list_table(rows))
    if rows[0]["local_copy"] is None:
        console.print(
            f"{DATA_DIR_ENV} is not set: local copies are looked for in $LMMPROBE_DATA_DIR/NAME "
            "(or give path=FOLDER); `lmmprobe data show NAME` prints the fetch command."
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
