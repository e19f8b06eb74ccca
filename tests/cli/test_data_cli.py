"""``lmmprobe data list`` / ``data show NAME`` through the console script (issue 18)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks._describe import describe


def _lmmprobe(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=300, env=env, check=False
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An empty data dir, no Hub, and a wide terminal."""
    data = tmp_path / "data"
    data.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LMMPROBE_"))}
    out.update(
        LMMPROBE_DATA_DIR=str(data),
        HF_HUB_OFFLINE="1",
        HF_HUB_CACHE=str(tmp_path / "hub"),
        COLUMNS="200",
    )
    return out


@pytest.fixture(scope="module")
def names() -> list[str]:
    found = BENCHMARKS.names()
    assert "mmbench" in found, "the built-in benchmarks are not registered"
    return found


def test_list_json_has_every_benchmark_and_sees_local_copies(
    env: dict[str, str], names: list[str]
) -> None:
    (Path(env["LMMPROBE_DATA_DIR"]) / "mmbench").mkdir()
    proc = _lmmprobe("data", "list", "--format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert sorted(rows) == names
    assert rows["mmbench"]["present"] is True
    assert rows["mmbench"]["local_copy"] == str(Path(env["LMMPROBE_DATA_DIR"]) / "mmbench")
    assert all(not r["present"] for n, r in rows.items() if n != "mmbench")
    for key in ("title", "size", "split", "formulation", "metric", "hemm", "reform", "needs"):
        assert key in rows["mmbench"]


def test_list_table_names_every_benchmark(env: dict[str, str], names: list[str]) -> None:
    proc = _lmmprobe("data", "list", env=env)
    assert proc.returncode == 0, proc.stderr
    first_cells = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    for name in names:
        assert name in first_cells, name
    assert "formulation" in proc.stdout and "copy" in proc.stdout
    unset = {k: v for k, v in env.items() if k != "LMMPROBE_DATA_DIR"}
    bare = _lmmprobe("data", "list", env=unset)
    assert "LMMPROBE_DATA_DIR is not set" in bare.stdout


@pytest.mark.parametrize("columns", ["80", "200"])
def test_list_table_reads_whole_at_80_columns(env: dict[str, str], columns: str) -> None:
    # Issue 34, item 16: at 80 columns the metric, copy and dimension columns were cut off.
    # Issue 37, item 4: one line per benchmark, under its groups, still whole at 80 columns.
    (Path(env["LMMPROBE_DATA_DIR"]) / "mmbench").mkdir()
    proc = _lmmprobe("data", "list", env={**env, "COLUMNS": columns})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line) <= int(columns) for line in lines), max(lines, key=len)
    assert "…" not in proc.stdout
    cells = [cell for line in lines for cell in re.split(r"\s{2,}", line.strip())]
    table = json.loads(_lmmprobe("data", "list", "--json", env=env).stdout)
    shown = ["name", "metric", "split"] + (["formulation", "title"] if columns == "200" else [])
    for r in table:
        # Each identifier is a cell of its own, whole: name, split, metric (and, wide enough,
        # the formulation and title).
        for key in shown:
            value = r[key]
            if value and not (key == "split" and r["members"]):
                assert value in cells, f"{r['name']}: {value!r} is not shown whole"
    heading = next(line for line in lines if "benchmark" in line and "copy" in line)
    assert "metric" in heading and "split" in heading

    # The copy column says where a copy is: yes for mmbench, no for the others.
    def copy_cells(name: str) -> set[str]:
        # The copy cell is the last before the title (which wide terminals add).
        rows = [re.split(r"\s{2,}", line.strip()) for line in lines]
        return {r[-2 if columns == "200" else -1] for r in rows if r[0] == name}

    assert copy_cells("mmbench") == {"yes"}
    assert copy_cells("ai2d") == {"no"}


def test_list_groups_benchmarks_and_fits_80_columns_in_few_lines(
    env: dict[str, str], names: list[str]
) -> None:
    # Issue 37, item 4: the list was ~100 columns wide and ~500 lines, one flat table.
    proc = _lmmprobe("data", "list", env={**env, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    first_cells = [line.split()[0] for line in lines if line.strip()]
    assert set(names) <= set(first_cells), set(names) - set(first_cells)
    listed = json.loads(_lmmprobe("data", "list", "--json", env=env).stdout)
    # Each benchmark is a line in each of its groups, and nothing much besides.
    assert len(lines) < sum(len(r["groups"]) for r in listed) + 8 * 6
    # Headings in GROUPS order, each group's members under it.
    headings = {
        "Standard benchmarks": "mmstar",
        "HEMM": "hemm-vqa",
        "ReForm-Eval": "reform-eval-coarse",
        "Dysca": "dysca",
    }
    at = {h: next(i for i, line in enumerate(lines) if line.startswith(h + " (")) for h in headings}
    assert list(at.values()) == sorted(at.values())
    for heading, member in headings.items():
        after = lines[at[heading] :]
        assert any(line.startswith(member + " ") for line in after), (heading, member)


def test_list_json_is_for_scripts(env: dict[str, str], names: list[str]) -> None:
    proc = _lmmprobe("data", "list", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert sorted(rows) == names
    for r in rows.values():
        for key in ("title", "groups", "size", "split", "formulation", "metric", "present"):
            assert key in r, (r["name"], key)
        assert r["fetch"].strip() and r["groups"], r["name"]
    assert rows["mmstar"]["groups"][0] == "standard"
    assert rows["hemm-vqa"]["groups"] == ["hemm"]
    assert rows["reform-eval-coarse"]["groups"] == ["reform-eval"]
    assert rows["dysca"]["groups"] == ["dysca"]
    same = _lmmprobe("data", "list", "--format", "json", env=env)
    assert json.loads(same.stdout) == list(rows.values())


def test_show_prints_prompt_notes_fetch_and_where_the_copy_goes(
    env: dict[str, str], names: list[str]
) -> None:
    b = BENCHMARKS.get("mmbench")
    proc = _lmmprobe("data", "show", "mmbench", env=env)
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())  # long lines wrap at the terminal's width
    assert flat.startswith(f"mmbench: {b.title}")
    assert f"official metric: {b.metric}" in flat
    assert " ".join(b.fetch.split()) in flat
    assert " ".join(b.prompt.source.split()) in flat
    for line in b.prompt.template.split("\n"):
        assert f"| {line}".strip() in proc.stdout
    for note in b.notes:
        assert " ".join(note.split()) in flat
    where = Path(env["LMMPROBE_DATA_DIR"]) / "mmbench"
    assert f"local copy: {where} (absent)" in flat


def test_show_json_is_every_field(env: dict[str, str], names: list[str]) -> None:
    proc = _lmmprobe("data", "show", names[-1], "--format", "json", env=env)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    expected = describe(BENCHMARKS.get(names[-1]))
    expected["local_copy"] = str(Path(env["LMMPROBE_DATA_DIR"]) / names[-1])
    expected["present"] = False
    assert shown == json.loads(json.dumps(expected))


def test_unknown_name_suggests_close_ones(env: dict[str, str], names: list[str]) -> None:
    proc = _lmmprobe("data", "show", "mmbnch", env=env)
    assert proc.returncode == 2
    assert "no benchmark named 'mmbnch'; did you mean mmbench" in proc.stderr
    bad = _lmmprobe("data", "show", "mmbench", "--format", "xml", env=env)
    assert bad.returncode == 2 and "unknown format 'xml'" in bad.stderr


def test_run_without_a_copy_offline_prints_the_fetch_command(
    env: dict[str, str], tmp_path: Path, names: list[str]
) -> None:
    b = BENCHMARKS.get("mmbench")
    proc = _lmmprobe(
        "run", "--data", "mmbench", "-m", "first", "--db", str(tmp_path / "db"), "-q", env=env
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    flat = " ".join(proc.stderr.split())
    assert "the Hugging Face Hub is not reachable (HF_HUB_OFFLINE is set)" in flat
    assert " ".join(b.fetch.split()) in flat
    assert "Traceback" not in proc.stderr


def test_list_refuses_format_table_with_json(env: dict[str, str]) -> None:
    # Re-test 14: `--format table --json` silently printed JSON. Contradicting flags are refused in
    # one line naming both, as `compare --judge --audit` is; flags that agree still work.
    proc = _lmmprobe("data", "list", "--format", "table", "--json", env=env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "--format table" in lines[0] and "--json" in lines[0]
    agreed = _lmmprobe("data", "list", "-f", "json", "--json", env=env)
    assert agreed.returncode == 0, agreed.stderr
    assert json.loads(agreed.stdout)
