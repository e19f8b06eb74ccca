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


def test_a_misspelt_registry_name_is_named_with_the_one_meant(tmp_path: Path) -> None:
    # `-m randm` listed the backends without the one meant, while `--data mmbnech` said
    # "did you mean mmbench?": every registry's typo now gets the close names.
    cases = [
        (["run", "-m", "randm"], "unknown model backend 'randm'; did you mean random? known:"),
        (["run", "--matcher", "refrom"], "unknown matcher 'refrom'; did you mean reform? known:"),
        (["run", "--prompt-style", "Dysca"], "'Dysca'; did you mean dysca? known:"),
        (["list", "matcher"], "unknown registry 'matcher'; did you mean matchers? known:"),
    ]
    for args, expected in cases:
        shown = (
            lmmprobe(*args, "--db", tmp_path / "s.db", timeout=120)
            if args[0] == "run"
            else lmmprobe(*args, timeout=120)
        )
        assert shown.returncode == 2, args
        assert expected in shown.stderr, (args, shown.stderr)
    # A name close to nothing gets no guess.
    shown = lmmprobe("run", "-m", "zzqx", "--db", tmp_path / "s.db", timeout=120)
    assert "unknown model backend 'zzqx'; known:" in shown.stderr
