"""What a researcher new to lmmprobe meets on the README's path (re-test 20b, issue 34 part B).

Each test is one reproduction from the re-test, run through the real console script.
"""

from __future__ import annotations

from pathlib import Path

from tests.console import lmmprobe


def test_a_folder_given_as_data_says_how_to_read_it(tmp_path: Path) -> None:
    # `make demo` writes lmmprobe-runs/synth-demo; a new user passes that folder as --data.
    # It was "unknown data source 'lmmprobe-runs/synth-demo'", as if the path were wrong.
    synthetic = tmp_path / "synth-demo"
    synthetic.mkdir()
    (synthetic / "samples.jsonl").write_text("")
    (synthetic / "manifest.json").write_text("{}")
    plain = tmp_path / "photos"
    plain.mkdir()

    shown = lmmprobe("run", "--data", synthetic, "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source" not in shown.stderr
    assert f"read it with --data synth:{synthetic}" in shown.stderr

    shown = lmmprobe("run", "--data", plain, "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source" not in shown.stderr
    assert f"{plain} is a folder" in shown.stderr
    assert f"imagefolder:{plain}" in shown.stderr
    assert len(shown.stderr.strip().splitlines()) == 1

    # A name that is no folder is still an unknown source, with its close matches.
    shown = lmmprobe("run", "--data", "mmbnech", "--dry-run", timeout=120)
    assert shown.returncode == 2
    assert "unknown data source 'mmbnech'; did you mean mmbench" in shown.stderr
