"""Arguments that are not UTF-8 are refused before anything is written (issue 34 re-test, 7).

Python reads such bytes as lone surrogates (``surrogateescape``). ``import --model $'m\\xff'``
ended in a traceback at the store; ``import --by $'\\xff'`` in one at the results, its run left
``complete`` with an empty folder; ``run --by $'\\xff'`` exited 2 with its run ``complete`` and no
results.json. A run whose results could not be written is not ``complete``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.api import evaluate
from lmmprobe.cli._common import undecodable_argument

XFF = "\udcff"  # what Python makes of the byte 0xff on a command line (passed on as that byte)


def _rows(path: Path) -> Path:
    rows = [{"id": f"r{i}", "images": [], "question": f"Q{i}?", "choices": ["a", "b"],
             "answer": 0, "metadata": {"grp": "g"}} for i in range(3)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _answers(path: Path) -> Path:
    path.write_text('{"id": "q0", "answer": "cat", "gt": "cat"}\n')
    return path


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "-m", "random", "--by", XFF], "option --by"),
        (["run", "-m", "random", f"--by={XFF}"], "option --by"),
        (
            [
                "import",
                "{answers}",
                "--field",
                "id=id,prediction=answer,gold=gt",
                "--model",
                "m" + XFF,
            ],
            "option --model",
        ),
        (
            ["import", "{answers}", "--field", "id=id,prediction=answer,gold=gt", "--by", XFF],
            "option --by",
        ),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_and_nothing_written(
    tmp_path: Path, args: list[str], option: str
) -> None:
    data, answers = _rows(tmp_path / "rows.jsonl"), _answers(tmp_path / "a.jsonl")
    given = [a.replace("{answers}", str(answers)) for a in args]
    if given[0] == "run":
        given += ["--data", str(data)]
    proc = lmmprobe(*given, "--db", tmp_path / "db", "--out", tmp_path / "o")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {option}: ")
    assert "is not valid UTF-8 (byte 0xff)" in lines[0]
    assert not (tmp_path / "db").exists()
    assert not (tmp_path / "o").exists()


def test_an_existing_file_with_such_a_name_is_read(tmp_path: Path) -> None:
    data = _rows(Path(str(tmp_path / "rows") + XFF + ".jsonl"))
    proc = lmmprobe("data", "check", data)
    assert "not valid UTF-8" not in proc.stderr
    assert undecodable_argument(["--data", str(data)]) is None
    assert undecodable_argument(["x", "y" + XFF]) == (
        "argument 2: 'y\\xff' is not valid UTF-8 (byte 0xff); give it as UTF-8 text"
    )


def test_a_run_whose_results_cannot_be_written_is_not_complete(tmp_path: Path) -> None:
    out = tmp_path / "o"
    (out / "results.json").mkdir(parents=True)  # where the results file goes: a folder
    db = tmp_path / "db"
    with pytest.raises(OSError):
        evaluate(models=["random"], data=str(_rows(tmp_path / "rows.jsonl")), db=str(db),
                 out=str(out))  # fmt: skip
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs").fetchall() == [("failed",)]
