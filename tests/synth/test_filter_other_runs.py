"""`synth filter` with runs of other data refuses them (re-test 20 of issue 34, #4).

A run id of another data set (``demo``, or a mistyped id naming another run) scored none of
the folder's samples: the filter printed "kept 6 samples, dropped 0", rewrote the folder and
recorded the consensus filter as applied with those runs in its manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe


def _run_id(out: Path) -> str:
    return str(json.loads((out / "results.json").read_text(encoding="utf-8"))["run_id"])


def test_a_run_of_other_data_is_refused_and_the_folder_left_alone(tmp_path: Path) -> None:
    folder, db = tmp_path / "set", tmp_path / "s.db"
    made = lmmprobe("synth", "generate", "--n", "2", "--out", folder)
    assert made.returncode == 0, made.stderr
    other = lmmprobe("run", "-m", "random", "--data", "demo", "--limit", "3", "--db", db,
                     "--out", tmp_path / "o")  # fmt: skip
    assert other.returncode == 0, other.stderr
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    proc = lmmprobe("synth", "filter", folder, "--run", _run_id(tmp_path / "o"), "--db", db)
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    assert "answered none of the 6 samples" in proc.stderr, proc.stderr
    assert f"--data synth:{folder}" in proc.stderr
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before  # nothing rewritten, no filter recorded


def test_a_run_of_the_folder_still_filters(tmp_path: Path) -> None:
    folder, db = tmp_path / "set", tmp_path / "s.db"
    assert lmmprobe("synth", "generate", "--n", "2", "--out", folder).returncode == 0
    own = lmmprobe("run", "-m", "first", "--data", f"synth:{folder}", "--db", db,
                   "--out", tmp_path / "o")  # fmt: skip
    assert own.returncode == 0, own.stderr
    proc = lmmprobe("synth", "filter", folder, "--run", _run_id(tmp_path / "o"), "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert "kept " in proc.stdout and "that every reference model missed" in proc.stdout


def test_an_unknown_run_is_named_in_a_plain_line(tmp_path: Path) -> None:
    folder, db = tmp_path / "set", tmp_path / "s.db"
    assert lmmprobe("synth", "generate", "--n", "2", "--out", folder).returncode == 0
    assert lmmprobe("run", "-m", "random", "--data", "demo", "--limit", "1", "--db", db,
                    "--out", tmp_path / "o").returncode == 0  # fmt: skip
    proc = lmmprobe("synth", "filter", folder, "--run", "nonexistent", "--db", db)
    assert proc.returncode == 2
    # It was the KeyError's repr: error: "no run 'nonexistent' in ..."
    assert proc.stderr.startswith("error: no run 'nonexistent' in "), proc.stderr
