"""walk2 items through the console script: what ``show``, the truncation note and ``synth
generate`` told a new user that did not add up.

#12: ``show`` of an imported run gave no mark that it was imported (``runs`` says ``[imported
from mapped ...]``) and ``results:`` named the run's folder, not results.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.console import lmmprobe


def _answers(tmp_path: Path) -> Path:
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"qid": "a", "answer": "cat", "ref": "cat"},
        {"qid": "b", "answer": "dog", "ref": "cow"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return answers


def test_show_of_an_imported_run_says_so_and_names_results_json(tmp_path: Path) -> None:
    answers, db = _answers(tmp_path), tmp_path / "store.db"
    done = lmmprobe(
        "import", answers, "--field", "id=qid,prediction=answer,gold=ref", "--db", db,
        "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    run_dir = tmp_path / imported["run_id"]
    shown = lmmprobe("show", imported["run_id"], "--db", db)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    sha = imported["origin"]["sha256"][:8]
    # The same words `runs` marks it with, and the file its predictions came from.
    assert f"imported from mapped (sha256 {sha}): {answers}" in lines, lines
    assert f"results: {run_dir / 'results.json'}" in lines, lines
    assert f"         {run_dir / 'results.md'}" in lines, lines
    listed = lmmprobe("runs", "--db", db, "--format", "json")
    (row,) = json.loads(listed.stdout)
    assert row["setting"][0] == f"imported from mapped (sha256 {sha})"


def test_show_of_a_run_whose_folder_is_gone_says_so(tmp_path: Path) -> None:
    db, out = tmp_path / "db", tmp_path / "o"
    made = lmmprobe("run", "-m", "random", "-d", "demo,n=4", "-q", "--db", db, "--out", out)
    assert made.returncode == 0, made.stderr
    shown = lmmprobe("show", "latest", "--db", db)
    assert f"results: {out / 'results.json'}" in shown.stdout.splitlines()
    assert "imported from" not in shown.stdout  # a run lmmprobe's models answered
    (out / "results.json").unlink()
    again = lmmprobe("show", "latest", "--db", db)
    assert again.returncode == 0, again.stderr
    assert (
        f"results: {out / 'results.json'} (not there now: moved or removed; this store still "
        "holds the results shown)"
    ) in again.stdout.splitlines()
