"""Entries lmmprobe declares as entry points of its own distribution, and tagged entries.

A module in a higher layer (``synth``) registers itself in a lower layer's registry (data's
`SOURCES`) through an entry point in lmmprobe's own pyproject.toml, so the lower layer never
names it: such an entry is listed as ``built-in`` with its docstring's summary, and imported
only when used. Tags let a registry tell kinds of entry apart (benchmarks among data sources)
without importing the code that registered them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.fresh_python import run_fresh
from tests.models.test_registry import write_plugin

from lmmprobe.registry import Registry, RegistryError

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))


def test_an_entry_point_of_lmmprobe_itself_is_built_in_with_its_docstring_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "lmmprobe_own_gizmo_xyz"
    write_plugin(
        tmp_path,
        "lmmprobe",  # the same distribution name as lmmprobe's own
        "lmmprobe.test_own_gizmos",
        {"gizmo": f"{module}:make"},
        {module: 'def make():\n    """gizmo[:X]  a gizmo for tests.\n\n    More.\n    """\n'
                 "    return 'gizmo!'\n"},
    )  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[Callable[[], str]] = Registry(
        "gizmo", entry_point_group="lmmprobe.test_own_gizmos"
    )
    assert reg.names() == ["gizmo"]
    assert reg.origin("gizmo") == "built-in"
    assert reg.summary("gizmo") == "gizmo[:X]  a gizmo for tests"
    assert module not in sys.modules  # the summary is read from the source, not imported
    assert reg.get("gizmo")() == "gizmo!"
    [row] = reg.entries()
    assert (row.origin, row.status) == ("built-in", "ready")


def test_an_own_entry_point_whose_module_is_gone_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(
        tmp_path, "lmmprobe", "lmmprobe.test_own_gone", {"gone": "lmmprobe_gone_xyz:make"}, {}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[object] = Registry("gizmo", entry_point_group="lmmprobe.test_own_gone")
    assert reg.summary("gone") == ""
    with pytest.raises(RegistryError, match="not available in this version of lmmprobe"):
        reg.get("gone")


def test_tags_tell_entries_apart() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", tag="odd")(1)
    reg.register("two")(2)
    reg.register("three", tag="odd")(3)
    assert reg.tagged("odd") == ["one", "three"]
    assert (reg.tag("one"), reg.tag("two")) == ("odd", None)
    reg.register("three")(33)  # registered again without the tag: no longer tagged
    reg.unregister("one")
    assert reg.tagged("odd") == []


def test_benchmarks_are_the_sources_tagged_benchmark() -> None:
    from lmmprobe.data import SOURCES
    from lmmprobe.data.base import BENCHMARK_TAG
    from lmmprobe.data.benchmarks import BENCHMARKS

    tagged = set(SOURCES.tagged(BENCHMARK_TAG))
    assert tagged == set(BENCHMARKS.names())
    assert {"demo", "hf", "jsonl", "synth"}.isdisjoint(tagged)


def test_synth_is_found_from_a_fresh_interpreter_through_lmmprobe_entry_point() -> None:
    lines = run_fresh(
        "import sys\n"
        "from lmmprobe.data import SOURCES, load_source\n"
        "print(SOURCES.origin('synth'))\n"
        "print(SOURCES.summary('synth'))\n"
        "print('lmmprobe.synth.source' in sys.modules)\n"
        "result = load_source('synth,n=2,seed=1')\n"
        "print(len(result.samples), result.source)\n"
    )
    assert lines[0] == "built-in"
    assert lines[1].startswith("synth[:DIR][,n=52,") and "Dysca-style" in lines[1]
    assert lines[2] == "False"  # listed without importing synth
    assert lines[3] == "6 synth"  # 2 items, 3 questions each


def test_lmmprobe_run_reads_synth_data_and_lists_it_as_built_in(tmp_path: Path) -> None:
    assert EXE is not None, "pip install -e . installs the lmmprobe console script"
    env = {**os.environ, "COLUMNS": "250"}
    listed = subprocess.run(
        [EXE, "list", "sources"], capture_output=True, text=True, env=env, check=False
    )
    row = next(line for line in listed.stdout.splitlines() if line.split()[:1] == ["synth"])
    assert "built-in" in row and "Dysca-style synthetic questions" in row
    run = subprocess.run(
        [EXE, "run", "-m", "first", "--data", "synth,n=2", "-q",
         "--db", str(tmp_path / "db.sqlite"), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, check=False, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "results.json").is_file()
