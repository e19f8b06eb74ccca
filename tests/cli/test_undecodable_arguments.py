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
from lmmprobe.store.errors import StoreAccessError
from lmmprobe.testing import FakeOpenAIServer

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
    # Where the results file goes is a folder: refused before anything runs (re-test 15 #9),
    # so no run is left recorded as complete.
    out = tmp_path / "o"
    (out / "results.json").mkdir(parents=True)
    db = tmp_path / "db"
    with pytest.raises(StoreAccessError, match="is a folder, not a regular file"):
        evaluate(models=["random"], data=str(_rows(tmp_path / "rows.jsonl")), db=str(db),
                 out=str(out))  # fmt: skip
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert ("complete",) not in conn.execute("SELECT status FROM runs").fetchall()


def test_an_lmmprobe_variable_that_is_not_utf8_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    # The issue 34 re-test: LMMPROBE_DB=$'r/\xff.db' passed the argument check; 20 answers were
    # paid for and stored, then every run ended `failed`, exit 2, naming no variable.
    data = _rows(tmp_path / "rows.jsonl")
    db = str(tmp_path / "r") + "/" + XFF + ".db"
    with FakeOpenAIServer() as server:
        model = f"openai:vlm@{server.base_url}"
        proc = lmmprobe("run", "-m", model, "--data", data, "--out", tmp_path / "o",
                        LMMPROBE_DB=db)  # fmt: skip
        assert server.completed == 0
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: environment variable LMMPROBE_DB: '{tmp_path}/r/\\xff.db' is not valid UTF-8 "
        "(byte 0xff); give it as UTF-8 text"
    ]
    assert not (tmp_path / "r").exists() and not (tmp_path / "o").exists()
    proc = lmmprobe("run", "-m", "vllm:m", "--data", data, "--db", tmp_path / "db",
                    LMMPROBE_VLLM_COMMAND="vllm serve " + XFF)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: environment variable LMMPROBE_VLLM_COMMAND: 'vllm serve")
    assert "Traceback" not in proc.stderr and not (tmp_path / "db").exists()


def test_an_existing_store_whose_name_is_not_utf8_works_end_to_end(tmp_path: Path) -> None:
    # A store that exists is let through (a Linux name may be any bytes): then a run on it
    # stores its answers, writes its results and ends `complete`; the results name the store.
    data = _rows(tmp_path / "rows.jsonl")
    first = lmmprobe("run", "-m", "random", "--data", data, "--db", tmp_path / "plain.db")
    assert first.returncode == 0, first.stderr
    db = tmp_path / ("store" + XFF + ".db")
    (tmp_path / "plain.db").rename(db)
    proc = lmmprobe("run", "-m", "random", "--data", data, "--out", tmp_path / "o",
                    LMMPROBE_DB=str(db))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 from the store, 0 sent" in proc.stdout
    text = (tmp_path / "o" / "results.json").read_text(encoding="utf-8")
    assert json.loads(text)["store"] == str(db)  # written as JSON's escape, read back the same
    with sqlite3.connect(db) as conn:
        assert [s for (s,) in conn.execute("SELECT status FROM runs")] == ["complete"] * 2
    report = lmmprobe("report", tmp_path / "o", "-o", tmp_path / "r.html")
    assert report.returncode == 0, report.stderr


def test_existing_data_whose_name_is_not_utf8_runs_and_reports(tmp_path: Path) -> None:
    # It was let through the check, then the run ended `failed`: results.json and results.md
    # could not hold its name. Now: results.json escapes it as JSON does (read back the same),
    # results.md and the reports show its byte escaped.
    data = _rows(Path(str(tmp_path / "rows") + XFF + ".jsonl"))
    proc = lmmprobe("run", "-m", "random", "--data", data, "--db", tmp_path / "db",
                    "--out", tmp_path / "o")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["spec"]["data"] == str(data)
    assert "rows\\xff.jsonl" in (tmp_path / "o" / "results.md").read_text(encoding="utf-8")
    for fmt in ["html", "json", "md", "csv"]:
        report = lmmprobe("report", tmp_path / "o", "--format", fmt, "-o", tmp_path / f"r.{fmt}")
        assert report.returncode == 0, (fmt, report.stderr)
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert doc["runs"][0]["data"] == str(data)


@pytest.mark.parametrize("where", ["--out", "store"])
def test_an_existing_results_folder_whose_name_is_not_utf8_is_named_in_one_line(
    tmp_path: Path, where: str
) -> None:
    # Issue 34: an existing folder passed the argument check, then the run failed with a bare
    # "'utf-8' codec can't encode character '\udcff'" naming nothing.
    data = _rows(tmp_path / "rows.jsonl")
    folder = tmp_path / ("runs" + XFF)
    folder.mkdir()
    db = folder / "db" if where == "store" else tmp_path / "db"
    if where == "store":  # the store exists there; results go beside it by default
        assert (
            lmmprobe("run", "-m", "random", "--data", data, "--db", tmp_path / "p.db").returncode
            == 0
        )
        (tmp_path / "p.db").rename(db)
        out: tuple[str | Path, ...] = ()
    else:
        out = ("--out", folder)
    proc = lmmprobe("run", "-m", "random", "--data", data, "--db", db, *out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    shown = f"{tmp_path}/runs\\xff"
    assert proc.stderr.strip().splitlines() == [
        f"error: the results folder '{shown}' has a name that is not UTF-8, which the store "
        "cannot record; give --out (or the store's folder) a UTF-8 name"
    ]
    with sqlite3.connect(db) as conn:  # no run recorded
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == (
            1 if where == "store" else 0
        )
