"""Every command's ``--help`` in one style, through the console script (issue 34, item 13).

The commands are read from the typer app itself, so a command or option added anywhere is
checked too. At 80 and 160 columns: no ``<bool>`` (or other ``<type>``) label, no line ending
in a stray " ." (a "[default: X]" eaten as markup), no cropped text (… or a summary cut with
"..."), nothing wider than the terminal, argument names written one way (UPPER_CASE:
``RUN_A [RUN_B] [RUN]...``) and no boxes (click's plain layout for every command). The tables
commands print share one box style as well.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from tests.console import lmmprobe, subcommands

from lmmprobe.cli.main import app

CLI = Path(__file__).parents[2] / "src" / "lmmprobe" / "cli"


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted(subcommands(command).items()):
        if not getattr(sub, "hidden", False):
            yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))
TYPE_LABEL = re.compile(r"<(bool|str|int|float|path|file|directory|list\[)[^>]*>")
STRAY_DOT = re.compile(r"\s\.\s*│?\s*$")
HEAVY = re.compile("[━┃┏┓┗┛┣┫┳┻╋┡┩]")
BOX = re.compile("[\u2500-\u257f]")
ARG = re.compile(r"^(\[[A-Z][A-Z0-9_]*\]|[A-Z][A-Z0-9_]*)(\.\.\.)?$")


def test_every_command_is_checked() -> None:
    assert len(COMMANDS) > 20 and ("judge",) in COMMANDS and ("runs", "compare") in COMMANDS


# Every command at 80 columns in the fast suite (the narrow terminal is where text is cropped,
# broken or overflows); the same checks at 160 columns, one console call per command again, run
# under -m slow. The fast suite still reads run, apex, compare and report at 160 (below).
@pytest.mark.parametrize("columns", [80, pytest.param(160, marks=pytest.mark.slow)])
@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "lmmprobe")
def test_help_has_one_style(path: tuple[str, ...], columns: int) -> None:
    done = lmmprobe(*path, "--help", columns=columns)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    where = f"`lmmprobe {' '.join(path)} --help` at {columns} columns"
    assert "Usage:" in text, where
    assert not TYPE_LABEL.search(text), f"{where}: {TYPE_LABEL.search(text)}"
    lines = text.splitlines()
    # A docstring's reST ``literal`` shows its doubled backticks in the help (re-test 20b).
    assert "``" not in text, f"{where}: doubled backticks"
    for line in lines:
        assert not STRAY_DOT.search(line), f"{where}: stray ' .': {line!r}"
        assert "…" not in line, f"{where}: cropped: {line!r}"
        assert len(line) <= columns, f"{where}: wider than the terminal: {line!r}"
        assert not BOX.search(line), f"{where}: a box: {line!r}"
        if not line.startswith("Usage:"):
            assert not line.endswith("..."), f"{where}: cut short: {line!r}"
    usage = next(line for line in lines if "Usage: lmmprobe" in line).split("[OPTIONS]", 1)[1]
    # After [OPTIONS]: the arguments, NAME or [NAME], "..." when repeatable.
    args = []
    for word in usage.split():
        if word in ("COMMAND", "[ARGS]..."):
            continue
        assert ARG.match(word), f"{where}: argument {word!r} is not written NAME or [NAME]"
        args.append(word)
    # The Arguments section names each argument as the usage line does, without brackets.
    section = text.split("\nArguments:\n", 1)[1].split("\n\n", 1)[0] if args else ""
    for word in args:
        name = word.strip("[]").removesuffix("...").strip("[]")
        assert re.search(rf"^  {name}(\.\.\.)?  ", section, re.M), f"{where}: {name}:\n{section}"


def test_the_issue_s_help_defects_are_gone() -> None:
    # The issue's examples: <bool> on every flag, "SQLite store ." for --db, apex's defaults
    # gone, arguments written {query}, [[RUN_B]] and [RUN...]...
    run = lmmprobe("run", "--help", columns=160).stdout
    assert "<bool>" not in run and "--strict" in run
    assert "SQLite store.  [env var: LMMPROBE_DB]\n" in run
    assert "[default: lmmprobe-runs/lmmprobe.db]" in run
    apex = lmmprobe("apex", "--help", columns=160).stdout
    assert "Usage: lmmprobe apex [OPTIONS] QUERY" in apex
    assert "Stop after this many experiments.  [1<=x<=50]\n" in apex
    assert "[default: 5]" in apex
    compare = lmmprobe("compare", "--help", columns=160).stdout
    assert "Usage: lmmprobe compare [OPTIONS] RUN_A [RUN_B]" in compare
    report = lmmprobe("report", "--help", columns=160).stdout
    assert "Usage: lmmprobe report [OPTIONS] [RUN]..." in report


def _tables_without_one_box() -> list[str]:
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Table"
            ):
                box = next((k.value for k in node.keywords if k.arg == "box"), None)
                if not (isinstance(box, ast.Attribute) and box.attr == "SIMPLE_HEAD"):
                    found.append(f"{path.name}:{node.lineno}")
    return found


def test_every_table_a_command_prints_has_one_box_style() -> None:
    # rich's default box is HEAVY_HEAD: `models` and `arena judge` drew it, the rest plain rules.
    assert _tables_without_one_box() == []
    shown = lmmprobe("models", columns=80)
    assert shown.returncode == 0, shown.stderr
    assert "model backends" in shown.stdout and not HEAVY.search(shown.stdout)


def _records(command: Any, ctx: click.Context) -> Iterator[tuple[str, str, str]]:
    for param in command.params:
        record = param.get_help_record(ctx)
        if record is not None:
            yield ctx.command_path, *record
    for name, sub in sorted(subcommands(command).items()):
        yield from _records(sub, click.Context(sub, info_name=name, parent=ctx))


ROOT = typer.main.get_command(app)
RECORDS = list(_records(ROOT, click.Context(ROOT, info_name="lmmprobe")))
LAST_DEFAULT = re.compile(r"  \[default: [^\[\]]+\]$")


def test_every_default_is_written_one_way_at_the_end() -> None:
    # Three ways before: "[default: 1000; x>=0]" (click's, with the range), "(default: beside
    # the store)" and "... [default: X]." inside the sentence, before click's own bracket.
    assert len(RECORDS) > 150
    for command, names, text in RECORDS:
        where = f"{command} {names}: {text!r}"
        assert text.lower().count("default") <= 1, where
        if "default" in text.lower():
            assert LAST_DEFAULT.search(text), where


def test_defaults_read_one_way_in_the_help_the_user_sees() -> None:
    imported = " ".join(lmmprobe("import", "--help", columns=80).stdout.split())
    assert "Output folder. [default: beside the store]" in imported
    assert "(default" not in imported
    run = lmmprobe("run", "--help", columns=80).stdout
    assert "Bootstrap resamples for CIs.  [0<=x<=100000]\n" in run and "[default: 1000]" in run
    # A name or a default is never broken at a hyphen or after "default:" (it was
    # "(lmmprobe list judge-" / "protocols)" and "[default: lmmprobe-" / "runs/lmmprobe.db]").
    assert "list judge-protocols)" in run and "[default: lmmprobe-runs/lmmprobe.db]" in run
    # `synth filter --db` showed no default.
    synth = lmmprobe("synth", "filter", "--help", columns=80).stdout
    assert "[default: lmmprobe-runs/lmmprobe.db]" in synth


def test_one_metavar_per_option_name_across_commands() -> None:
    # `--judge TEXT` in run, judge and arena judge, `--judge SPEC` in compare.
    seen: dict[str, dict[str, str]] = {}
    for command, names, _ in RECORDS:
        words = names.replace(",", " ").split()
        value = " ".join(w for w in words if not w.startswith("-") and w != "/")
        for name in (w for w in words if w.startswith("--")):
            seen.setdefault(name, {})[command] = value
    differing = {n: by for n, by in seen.items() if len(set(by.values())) > 1}
    assert differing == {}
    assert set(seen["--judge"].values()) == {"SPEC"}
