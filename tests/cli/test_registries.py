"""``lmmprobe list`` and the registry-named options of ``lmmprobe run``, through the installed
console script: wrong names list the known ones, and plugins from installed packages (a
matcher and a data source declared as entry points) are listed and used by name."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from tests.plugin_dist import install_plugin
from typer.testing import CliRunner

from lmmprobe.cli.main import app
from lmmprobe.schema import InferenceMethod, MarkChoice

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))

PLUGIN = '''
from lmmprobe.data import LoadResult
from lmmprobe.parse import Extraction, unparsed
from lmmprobe.schema import Sample

COLORS = ["red", "green", "blue"]


def colors(target, options, *, strict, limit):
    """Text-only colour questions, one per colour."""
    samples = [
        Sample(id=c, question=f"Which is {c}?", choices=COLORS, answer=i)
        for i, c in enumerate(COLORS)
    ]
    return LoadResult(samples=samples[:limit] if limit else samples, source="colors")


def last(output, options, marks, config):
    """Any answer picks the last option."""
    if not output.strip():
        return unparsed("empty")
    return Extraction(len(options) - 1, "mark", "last")
'''


def lmmprobe(*args: str, plugins: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert EXE is not None, "pip install -e . installs the lmmprobe console script"
    env = {**os.environ, "COLUMNS": "200"}  # keep rich's error panel from wrapping lines
    if plugins is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(plugins), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [EXE, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def said(text: str) -> str:
    """The text without rich's panel borders, whitespace collapsed."""
    return " ".join(re.sub("[\u2500-\u257f]", " ", text).split())


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plugin package installed on a path of its own (what pip writes for a pyproject with
    ``[project.entry-points."lmmprobe.matchers"]`` and ``."lmmprobe.sources"`` tables)."""
    return install_plugin(
        tmp_path_factory.mktemp("plugins"), "lmmprobe-colors-xyz", "0.1", PLUGIN,
        {"lmmprobe.matchers": {"last": "lmmprobe_colors_xyz:last"},
         "lmmprobe.sources": {"colors": "lmmprobe_colors_xyz:colors"}},
    )  # fmt: skip


def test_unknown_matcher_lists_the_known_ones() -> None:
    proc = lmmprobe("run", "--matcher", "foo")
    assert proc.returncode == 2
    assert (
        "unknown matcher 'foo'; known: dysca, hallusionbench, lmmprobe, longvideobench, "
        "mme, mme-realworld, mvbench, pope, reform, tempcompass, tempcompass-caption-matching, "
        "tempcompass-captioning, tempcompass-yes-no, videomme, vlmevalkit" in said(proc.stderr)
    )


def test_a_long_unknown_name_is_quoted_cut() -> None:
    # A pasted 100,000-character --matcher was echoed whole: a 100 KB error line.
    proc = lmmprobe("run", "--matcher", "x" * 100_000)
    assert proc.returncode == 2
    assert f"unknown matcher {'x' * 40!r}... (100,000 characters); known: dysca," in said(
        proc.stderr
    )
    assert len(proc.stderr) < 2_000


def test_unknown_prompt_style_lists_the_known_ones() -> None:
    proc = lmmprobe("run", "--prompt-style", "fancy")
    assert proc.returncode == 2
    assert "unknown prompt style 'fancy'; known: auto, benchmark, dysca, reform" in said(
        proc.stderr
    )


@pytest.mark.parametrize(
    ("option", "what", "literal"),
    [("--method", "inference method", InferenceMethod), ("--marks", "mark style", MarkChoice)],
)
def test_fixed_choices_come_from_the_schema(option: str, what: str, literal: object) -> None:
    known = ", ".join(get_args(literal))
    res = CliRunner().invoke(app, ["run", option, "nope"])
    assert res.exit_code == 2
    assert f"unknown {what} 'nope'; known: {known}" in said(res.output)
    helped = said(CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output)
    assert known in helped


def test_help_lists_registered_names() -> None:
    helped = said(CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output)
    assert (
        "Answer reading: dysca, hallusionbench, lmmprobe, longvideobench, mme, mme-realworld, mvbench, pope, reform, tempcompass, tempcompass-caption-matching, tempcompass-captioning, tempcompass-yes-no, videomme, vlmevalkit"
        in helped
    )
    assert "choice questions: auto, benchmark, dysca, reform" in helped


@pytest.mark.parametrize(
    ("kind", "names"),
    [
        ("matchers", ["dysca", "lmmprobe", "reform"]),
        ("prompt-styles", ["auto", "dysca", "reform"]),
        ("sources", ["demo", "hf", "imagefolder", "jsonl", "reform", "synth"]),
        ("models", ["first", "hf", "openai", "random"]),
        ("orchestrators", ["openai", "replay", "rules"]),
        ("judge-protocols", ["lmmprobe-choice", "lmmprobe-open"]),
    ],
)
def test_list_shows_each_registry(kind: str, names: list[str]) -> None:
    res = CliRunner().invoke(app, ["list", kind], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    listed = [line.split()[0] for line in res.output.splitlines() if "built-in" in line]
    # Other test modules may have registered stand-ins of their own in this process.
    assert set(names) <= set(listed)


def test_list_unknown_registry() -> None:
    res = CliRunner().invoke(app, ["list", "gadgets"])
    assert res.exit_code == 2
    assert "unknown registry 'gadgets'; known: matchers, prompt-styles" in said(res.output)


def test_plugins_are_listed_and_used_by_name(plugins: Path, tmp_path: Path) -> None:
    listed = lmmprobe("list", "matchers", plugins=plugins)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.split()[:1] == ["last"])
    assert "plugin (lmmprobe-colors-xyz)" in row
    sources = lmmprobe("list", "sources", plugins=plugins)
    assert "plugin (lmmprobe-colors-xyz)" in sources.stdout

    db = str(tmp_path / "db.sqlite")
    run = lmmprobe("run", "-m", "first", "--data", "colors", "--matcher", "last", "-q",
                   "--db", db, plugins=plugins)  # fmt: skip
    assert run.returncode == 0, run.stderr
    exported = lmmprobe("export", "latest", "--db", db, plugins=plugins)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    # "first" answers "(A)" to every question; the plugin matcher reads it as the last option.
    assert sorted(r["sample_id"] for r in rows) == ["blue", "green", "red"]
    assert {(r["stage"], r["prediction"]) for r in rows} == {("mark", 2)}
    assert [r["sample_id"] for r in rows if r["correct"]] == ["blue"]
