"""The commands lmmprobe suggests run as printed (issue 34, item 16).

After ``make``, ``lmmprobe`` is ``.venv/bin/lmmprobe`` and not on ``$PATH`` until the virtual
environment is activated: a hint saying ``lmmprobe run`` then fails with "command not found".
Hints name the program as it was started unless ``lmmprobe`` on ``$PATH`` is the same program.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.console import lmmprobe

from lmmprobe.testing.openai_server import FakeOpenAIServer

BIN = Path(sys.executable).parent
EXE = shutil.which("lmmprobe", path=str(BIN))
WITHOUT_VENV = os.pathsep.join(
    p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != BIN
)


def test_hints_name_the_program_as_started_when_lmmprobe_is_not_on_path(tmp_path: Path) -> None:
    assert EXE is not None
    missing = tmp_path / "none" / "store.db"
    listed = lmmprobe("runs", "--db", missing, PATH=WITHOUT_VENV)
    assert listed.returncode == 0, listed.stderr
    assert f"(`{EXE} run --db {missing}` makes it)" in listed.stdout
    # A hint made below the CLI (the store's error) is written the same way.
    shown = lmmprobe("show", "latest", "--db", missing, PATH=WITHOUT_VENV)
    assert shown.returncode == 2
    assert f"(`{EXE} run --db {missing}`)" in shown.stderr, shown.stderr
    assert "`lmmprobe run" not in shown.stderr


def test_hints_say_lmmprobe_when_it_is_on_path(tmp_path: Path) -> None:
    none = tmp_path / "none.db"
    listed = lmmprobe("runs", "--db", none, PATH=f"{BIN}{os.pathsep}{WITHOUT_VENV}")
    assert listed.returncode == 0, listed.stderr
    assert f"(`lmmprobe run --db {none}` makes it)" in listed.stdout


def test_a_relative_start_gives_a_relative_hint(tmp_path: Path) -> None:
    # `make` then `.venv/bin/lmmprobe ...` from the clone: the hint is what was typed.
    env = {**os.environ, "PATH": WITHOUT_VENV, "COLUMNS": "200"}
    done = subprocess.run(
        ["./lmmprobe", "runs", "--db", str(tmp_path / "none.db")],
        cwd=BIN, capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The sentence is wrapped between words at the width; the hint in it stays whole.
    assert f"(`./lmmprobe run --db {tmp_path / 'none.db'}` makes it)" in " ".join(
        done.stdout.split()
    )
    assert f"`./lmmprobe run --db {tmp_path / 'none.db'}`" in done.stdout


def test_a_hint_is_not_broken_across_lines_at_80_columns(tmp_path: Path) -> None:
    # `synth generate` printed "evaluate with: `…/lmmprobe run --data synth:dysca-try --by` /
    # `subtask`" at 80 columns: the command could not be copied whole.
    out = tmp_path / "a-folder-with-a-long-name-for-the-generated-set"
    done = lmmprobe(
        "synth", "generate", "--n", "2", "--size", "64", "--out", out, columns=80, PATH=WITHOUT_VENV
    )
    assert done.returncode == 0, done.stderr
    # The command is a line of its own, whole, however long.
    hint = f"  {EXE} run --data synth:{out} --by subtask"
    assert f"evaluate with:\n{hint}\n" in done.stdout, done.stdout


def test_the_run_table_legend_wraps_to_the_terminal(tmp_path: Path) -> None:
    # The 150-character "rows: every (sample, repeat) row ..." legend was never wrapped.
    with FakeOpenAIServer() as server:  # a budget leaves rows unjudged (errors): the legend shows
        done = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url},price=2.5:10,max_concurrency=1",
            "--data", "demo,n=40", "--max-cost", "0.005", "--db", tmp_path / "db",
            "--out", tmp_path / "o", columns=80, OPENAI_API_KEY="k",
        )  # fmt: skip
    assert done.returncode == 3, done.stderr  # its budget stopped it (exit 3)
    assert "rows: every (sample, repeat) row" in done.stdout, done.stdout
    legend = done.stdout.split("rows: every", 1)[1].split("\n\n", 1)[0]
    assert all(len(line) <= 80 for line in legend.splitlines()), legend


def test_hints_about_a_named_store_name_it(tmp_path: Path) -> None:
    # `show latest --db x.db` said "run an evaluation first (lmmprobe run)": that run writes
    # to the default store, and `show latest --db x.db` still finds nothing.
    db, on_path = tmp_path / "x.db", f"{BIN}{os.pathsep}{WITHOUT_VENV}"
    shown = lmmprobe("show", "latest", "--db", db, columns=200, PATH=on_path)
    assert shown.returncode == 2
    assert f"run an evaluation first (`lmmprobe run --db {db}`)" in shown.stderr, shown.stderr
    made = lmmprobe("run", "-m", "first", "--data", "demo,n=2", "-q", "--db", db, "--out",
                    tmp_path / "o")  # fmt: skip
    assert made.returncode == 0, made.stderr
    # `export nope` suggested `show latest`; `runs` is what lists the runs.
    exported = lmmprobe("export", "nope", "--db", db, columns=200, PATH=on_path)
    assert exported.returncode != 0
    assert f"no run 'nope' in {db} (`lmmprobe runs --db {db}` lists them)" in exported.stderr
