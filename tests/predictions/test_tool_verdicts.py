"""A tool's verdict that is no verdict, and numbers JSON lacks (re-test 9 #3, issue 34).

A ``hit`` of ``inf`` in a VLMEvalKit table, a per-sample metric of ``Infinity`` in lmms-eval's
samples and a MathVista ``true_false`` of ``1e999`` were taken as verdicts and written to the
store's score metadata as ``Infinity``, which is no JSON: the import then failed on its own
store ("does not hold JSON as lmmprobe writes it"), naming neither file nor row, and left a run
that ``report`` and ``export`` could not read. A verdict that is not finite is now that row's
problem (one line naming FILE:ROW and the field); a finite number outside 0..1 is kept as the
tool's number (``tool_number``), not counted as a verdict; and the store writes standard JSON
only (NaN as null, an infinity named and refused).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe

HEADER = "index\tquestion\tA\tB\tanswer\tprediction\thit\n"


def _tsv(tmp_path: Path, hits: list[str]) -> Path:
    """A VLMEvalKit exact-matching result table, one row per `hits` value."""
    path = tmp_path / "m_XDATA_exact_matching_result.tsv"
    rows = "".join(f"{i}\tq{i}\tred\tblue\tA\tA\t{hit}\n" for i, hit in enumerate(hits))
    path.write_text(HEADER + rows)
    return path


def _lmms_eval(tmp_path: Path, metrics: list[str]) -> Path:
    """lmms-eval ``--log_samples`` output; each metric value written as JSON text as it is."""
    path = tmp_path / "2025_samples_mytask.jsonl"
    lines = []
    for i, metric in enumerate(metrics):
        doc = {"id": f"q{i}", "question": "x", "answer": "A"}
        head = json.dumps(
            {
                "doc_id": i, "target": "A", "doc": doc, "filtered_resps": ["A"],
                "resps": [["A"]], "input": "p",
            }
        )  # fmt: skip
        lines.append(head[:-1] + f', "exact_match": {metric}}}\n')
    path.write_text("".join(lines))
    return path


def _mathvista(tmp_path: Path, verdict: str) -> Path:
    """A MathVista ``output_MODEL.json`` whose first record's ``true_false`` is `verdict`."""
    record = {
        "pid": "1", "question": "q", "answer": "3", "response": "3", "extraction": "3",
        "question_type": "free_form", "answer_type": "integer",
    }  # fmt: skip
    first = json.dumps(record)[:-1] + f', "true_false": {verdict}}}'
    second = json.dumps({**record, "pid": "2", "true_false": False})
    path = tmp_path / "output_m.json"
    path.write_text(f'{{"1": {first}, "2": {second}}}')
    return path


def _metadata(db: Path) -> list[str]:
    with sqlite3.connect(db) as c:
        return [m for (m,) in c.execute("SELECT metadata FROM scores ORDER BY sample_id")]


@pytest.mark.parametrize(
    ("shape", "value", "where"),
    [
        ("vlmevalkit", "inf", "m_XDATA_exact_matching_result.tsv:row 3: hit: "),
        ("vlmevalkit", "1e999", "m_XDATA_exact_matching_result.tsv:row 3: hit: "),
        ("vlmevalkit", "-inf", "m_XDATA_exact_matching_result.tsv:row 3: hit: "),
        ("lmms-eval", "Infinity", "2025_samples_mytask.jsonl:2: exact_match: "),
        ("lmms-eval", "-Infinity", "2025_samples_mytask.jsonl:2: exact_match: "),
        ("mathvista", "1e999", "output_m.json:#1 (pid 1): true_false: "),
    ],
)
def test_a_verdict_that_is_not_finite_is_that_rows_problem(
    tmp_path: Path, shape: str, value: str, where: str
) -> None:
    extra: list[str] = []
    if shape == "vlmevalkit":
        path = _tsv(tmp_path, ["1", value, "0"])
    elif shape == "lmms-eval":
        path = _lmms_eval(tmp_path, ["1.0", value])
    else:
        path, extra = _mathvista(tmp_path, value), ["--reader", "mathvista"]
    db = tmp_path / "db.sqlite"
    done = lmmprobe("import", path, "--db", db, *extra)
    assert "Traceback" not in done.stderr
    if shape == "lmms-eval":
        # The lmms-eval reader keeps a row it cannot read as that row's error and scores the
        # others (re-test 12 #2): the note names the file, line and field.
        assert done.returncode == 0, done.stdout + done.stderr
        # Read as one text: the terminal wraps a long note, and where depends on the path's length.
        said = " ".join(done.stdout.split())
        assert f"{where.strip()} the verdict" in said and "is not a finite number" in said, said
    else:
        assert done.returncode == 2, done.stdout + done.stderr
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and where in last, last
        assert "is not a finite number" in last and "store" not in last
    assert not any("Infinity" in m for m in _metadata(db))


def test_a_number_outside_0_1_is_the_tools_number_not_a_verdict(tmp_path: Path) -> None:
    """``hit`` is 0/1; 5 or -3 is no verdict: kept as ``tool_number``, the rows still scored."""
    db = tmp_path / "db.sqlite"
    done = lmmprobe("import", _tsv(tmp_path, ["5", "-3", "1", "0"]), "--db", db)
    assert done.returncode == 0, done.stderr[-3000:]
    got = [json.loads(m) for m in _metadata(db)]
    assert [m.get("tool_verdict") for m in got] == [None, None, 1.0, 0.0]
    assert [m.get("tool_number") for m in got] == [5.0, -3.0, None, None]


def test_a_credit_between_0_and_1_stays_a_verdict(tmp_path: Path) -> None:
    """An lmms-eval per-sample metric such as ANLS is a credit in 0..1: read as the verdict."""
    db = tmp_path / "db.sqlite"
    done = lmmprobe("import", _lmms_eval(tmp_path, ["0.25", "7", "NaN"]), "--db", db)
    assert done.returncode == 0, done.stderr[-3000:]
    got = [json.loads(m) for m in _metadata(db)]
    assert [m.get("tool_verdict") for m in got] == [0.25, None, None]
    assert [m.get("tool_number") for m in got] == [None, 7.0, None]


def _rows(tmp_path: Path, metadata: str) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"id": "q1", "images": [], "question": "Pick?", "choices": ["x", "y"], "answer": 0, '
        f'"metadata": {metadata}}}\n'
    )
    return path


def test_an_infinity_in_a_row_is_that_rows_problem_never_stored(tmp_path: Path) -> None:
    """A number JSON lacks is named where it was read (file, line, field), never written.

    (The store refuses one that reaches it some other way: tests/store/test_sqlite_encoding.py.)
    """
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, '{"w": 1, "v": Infinity}')
    done = lmmprobe("run", "-m", "random", "--data", rows, "--db", db, "--out", tmp_path / "o")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "rows.jsonl:1: metadata.v: inf is infinite" in done.stderr, done.stderr[-2000:]
    with sqlite3.connect(db) as c:
        stored = [t for (t,) in c.execute("SELECT row_metadata FROM samples") if t]
    assert not any("Infinity" in t for t in stored + _metadata(db))


def test_the_store_writes_nan_as_null(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, '{"w": NaN}')
    done = lmmprobe("run", "-m", "random", "--data", rows, "--db", db, "--out", tmp_path / "o")
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(db) as c:
        ((stored,),) = c.execute("SELECT row_metadata FROM samples")
    assert json.loads(stored) == {"w": None}
    assert lmmprobe("export", "latest", "--db", db).returncode == 0  # and read back
