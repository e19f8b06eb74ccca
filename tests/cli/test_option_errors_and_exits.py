"""Option errors are one line; apex fails when nothing ran; where run folders land (issue 23).

Items 13 (option errors), 9 (``apex`` exit status) and 18 (run folders with ``--db``), through
the installed console script as a user runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.apex.scripts import answer, call, conclude_json, experiment_json, init_json

from lmmprobe.apex.loop import MAX_FRESH_DESIGNS, MAX_HEALS
from lmmprobe.testing.openai_server import FakeOpenAIServer

README = Path(__file__).resolve().parents[2] / "README.md"


def _lmmprobe(
    *args: str | Path, cwd: Path | None = None, columns: int = 80
) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, "COLUMNS": str(columns), "OPENAI_API_KEY": "test-key"}
    env.pop("LMMPROBE_DB", None)
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single line a refused command prints (nothing else on stderr or stdout)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert proc.stdout == ""
    for raw in ("validation error", "pydantic", "input_value", "Traceback", "╭"):
        assert raw not in proc.stderr
    return lines[0]


# --- item 13: option errors --------------------------------------------------------------------


def test_repeats_not_a_pool_multiple_names_both_options(tmp_path: Path) -> None:
    line = _one_error_line(
        _lmmprobe("run", "--repeats", "3", "--instruction-pool", "-q", "--db", tmp_path / "db")
    )
    assert line == "error: with --instruction-pool, --repeats must be a multiple of 5 (got 3)"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # A schema's field check, reached through the options a command builds it from.
        (["--replicas", "2"], "--replicas: used by the Ray executor only"),
        # Typer's own checks: a range, a choice, an unknown option.
        (["--limit", "0"], "'--limit': Input should be greater than or equal to 1"),
        (["--marks", "roman"], "'--marks': unknown mark style 'roman'; known: upper, lower"),
        (["--no-such-option"], "No such option: --no-such-option"),
    ],
)
def test_option_errors_are_one_line_naming_the_option(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    line = _one_error_line(_lmmprobe("run", *args, "-q", "--db", tmp_path / "db"))
    assert expected in line


def test_apex_settings_error_is_one_line(tmp_path: Path) -> None:
    query = "Can models identify rotated images?"
    proc = _lmmprobe("apex", query, "-m", "random", "--max-calls", "0", "--out", tmp_path / "o")
    line = _one_error_line(proc)
    assert "--max-calls" in line and "1" in line
    assert not (tmp_path / "o").exists()


def test_a_path_option_the_system_refuses_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert _lmmprobe("run", "--limit", "2", "-q", "--db", db).returncode == 0
    missing = tmp_path / "no-such-folder" / "rows.jsonl"
    line = _one_error_line(_lmmprobe("export", "latest", "--db", db, "-o", missing, columns=300))
    assert line == f"error: cannot write --out {missing}: no folder {missing.parent}"
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    line = _one_error_line(
        _lmmprobe("report", "latest", "--db", db, "--out", blocked / "r.html", columns=300)
    )
    # Its folder cannot be made (a file is there): named as the --out that cannot be written.
    assert line == f"error: cannot write --out {blocked / 'r.html'}: no folder {blocked}"


# --- item 9: apex exits non-zero when no experiment ran ----------------------------------------


def test_apex_with_no_valid_design_exits_1_saying_why(tmp_path: Path) -> None:
    bad = experiment_json(answers=[answer("yes", call("NoSuchTool")), answer("no")])
    designs = MAX_FRESH_DESIGNS * (1 + MAX_HEALS)
    with FakeOpenAIServer(replies=[init_json(), *[bad] * designs, conclude_json()]) as server:
        proc = _lmmprobe(
            "apex", "Can models identify rotated images?", "-m", "random",
            "--orchestrator", f"openai:orch@{server.base_url}", "--out", tmp_path / "out",
            "--cache-dir", tmp_path / "cache", "-q", columns=200,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith(
        f"error: no experiment ran: the orchestrator designed no valid experiment in {designs} "
        "attempts (last: "
    )
    assert "NoSuchTool" in errors[0] and "report.md" in errors[0]
    assert (tmp_path / "out" / "report.md").is_file()  # written all the same


# --- item 18: where a run's folder lands --------------------------------------------------------


def test_run_folder_lands_beside_the_store_as_readme_and_help_say(tmp_path: Path) -> None:
    cwd, stores = tmp_path / "cwd", tmp_path / "stores"
    cwd.mkdir()
    proc = _lmmprobe("run", "--limit", "4", "-q", "--db", stores / "my.db", cwd=cwd, columns=300)
    assert proc.returncode == 0, proc.stderr
    run_id = re.search(r"run id: (\S+)", proc.stdout)
    assert run_id is not None
    assert (stores / run_id[1] / "results.json").is_file()
    assert (stores / run_id[1] / "results.md").is_file()
    assert list(cwd.iterdir()) == []  # nothing lands where the command ran
    # Without --db: ./lmmprobe-runs/RUN_ID beside ./lmmprobe-runs/lmmprobe.db.
    proc = _lmmprobe("run", "--limit", "4", "-q", cwd=cwd, columns=300)
    assert proc.returncode == 0, proc.stderr
    run_id = re.search(r"run id: (\S+)", proc.stdout)
    assert run_id is not None
    assert (cwd / "lmmprobe-runs" / run_id[1] / "results.json").is_file()
    assert (cwd / "lmmprobe-runs" / "lmmprobe.db").is_file()
    # The help and the README say the same.
    help_text = " ".join(_lmmprobe("run", "--help", columns=300).stdout.split())
    assert "RUN_ID beside the store: ./lmmprobe-runs/RUN_ID, or DIR/RUN_ID with --db" in help_text
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "with `--db PATH/NAME.db` (or `$LMMPROBE_DB`) the results land in `PATH/RUN_ID/`" in (
        readme
    )
