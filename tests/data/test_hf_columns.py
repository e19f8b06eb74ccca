"""An `hf:` dataset of very many columns: refused in bounded time, and named in one short line.

Re-test 9 #1 and #2: a JSON Lines row of 20,000 fields took minutes (each column's feature was
read through `ds.features`, a fresh deep copy of all of them), and a missing column's error
listed every column, a line of 149 KB.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import break_column_name

from lmmprobe.data.files import MAX_COLUMNS

pytest.importorskip("datasets")


def _dry_run(tmp_path: Path, folder: Path, *extra: str) -> list[str]:
    res = lmmprobe("run", "-m", "first", "--data", f"hf:{folder}{''.join(extra)}", "--dry-run",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(tmp_path / "cache"))  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 2 and "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    return lines


def test_a_json_lines_record_of_more_fields_than_a_spreadsheet_has_columns_is_refused(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "wide"
    folder.mkdir()
    row = {"question": "q", "answer": "a", **{f"k{i}": 0 for i in range(MAX_COLUMNS)}}
    (folder / "test.jsonl").write_text(json.dumps({"question": "ok", "answer": "a"}) + "\n"
                                       + json.dumps(row) + "\n")  # fmt: skip
    (line,) = _dry_run(tmp_path, folder)
    assert line == (
        f"error: {folder / 'test.jsonl'}:2: a record of more than 16,384 fields (a "
        "spreadsheet's limit of columns): is it the right file?"
    )


def _refused_at(file: Path, line: int) -> str:
    return (
        f"error: {file}:{line}: more than 16,384 distinct fields, nested ones included, in its "
        "records up to here (a spreadsheet's limit of columns): is it the right file?"
    )


def test_fields_spread_over_json_lines_records_count_together(tmp_path: Path) -> None:
    # Re-test 10 #3: 8 records of 16,000 distinct keys each passed the one-record rule, then
    # datasets made 128,002 columns (117 s and 1.6 GB, or an abort under a 2 GB limit). Each
    # record here is far below the rule; the file's 8 records together pass it at line 8.
    folder = tmp_path / "spread"
    folder.mkdir()
    with (folder / "test.jsonl").open("w") as fh:
        for r in range(8):
            fh.write(json.dumps({"question": "q", "answer": "a",
                                 **{f"k{r}_{i}": 0 for i in range(2_100)}}) + "\n")  # fmt: skip
    (line,) = _dry_run(tmp_path, folder)
    assert line == _refused_at(folder / "test.jsonl", 8)


def test_fields_nested_in_the_objects_of_a_json_array_count_as_columns(tmp_path: Path) -> None:
    # Re-test 10 #3: one field holding an object of 100,000 keys (a struct of as many fields)
    # was not counted at all. Here a top-level array (one element a line): the third
    # element's list of objects brings the file's paths past the limit (`meta`, `meta.kI`,
    # `meta.tags`, `meta.tags.tI`: a list's objects' keys lie under the list's path).
    folder = tmp_path / "nested"
    folder.mkdir()
    rows = [
        {"question": "q", "answer": "a", "meta": {f"k{i}": 0 for i in range(9_000)}},
        {"question": "q", "answer": "a", "meta": {f"k{i}": 1 for i in range(9_000)}},
        {"question": "q", "answer": "a", "meta": {"tags": [{f"t{i}": 0} for i in range(8_000)]}},
    ]
    path = folder / "test.json"
    path.write_text("[\n" + ",\n".join(json.dumps(row) for row in rows) + "\n]\n")
    (line,) = _dry_run(tmp_path, folder)
    assert line == _refused_at(path, 4)


def test_a_record_of_many_commas_inside_strings_and_lists_is_not_a_wide_record(
    tmp_path: Path,
) -> None:
    # Only the commas between a record's own fields count: those in its strings and lists
    # are a value's. The row loads, and its missing image is the (one-line) problem.
    folder = tmp_path / "commas"
    folder.mkdir()
    row = {"question": "," * (2 * MAX_COLUMNS), "answer": "a", "tags": list(range(MAX_COLUMNS))}
    (folder / "test.jsonl").write_text(json.dumps(row) + "\n")
    (line,) = _dry_run(tmp_path, folder)
    assert "no column 'image' for image; columns: question, answer, tags " in line, line


def test_a_missing_column_names_the_first_columns_and_counts_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    header = ["question", "answer", *(f"c{i}" for i in range(2_000))]
    (folder / "test.csv").write_text(",".join(header) + "\n" + ",".join("x" * len(header)) + "\n")
    (line,) = _dry_run(tmp_path, folder)
    shown = ", ".join(header[:20])
    assert line == (
        f"error: {folder}: no column 'image' for image; columns: {shown} … and 1,982 more "
        "(name it with image=COLUMN)"
    )


def test_a_table_of_more_columns_than_a_spreadsheet_has_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "wide"
    folder.mkdir()
    names = ["question", "answer", *(f"c{i}" for i in range(MAX_COLUMNS))]
    pq.write_table(pa.table({n: ["x"] for n in names}), folder / "test.parquet")
    (line,) = _dry_run(tmp_path, folder)
    # Refused from the parquet footer, before datasets converts the file.
    assert line == (
        f"error: {folder / 'test.parquet'}: 16,386 columns, more than 16,384 (a spreadsheet's "
        "limit): is it the right file?"
    )


def test_a_parquet_column_name_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    # Re-test 10 #9: pyarrow decodes the names as lmmprobe's own check opens the file; its
    # UnicodeDecodeError was shown as datasets' failure, without saying what was wrong.
    import pyarrow as pa

    folder = tmp_path / "names"
    folder.mkdir()
    path = folder / "test.parquet"
    break_column_name(path, pa.table({"question": ["q"], "answer": ["a"], "QmarkQ": ["x"]}))
    (line,) = _dry_run(tmp_path, folder)
    assert line == f"error: {path}: not a readable parquet file (a column name that is not UTF-8)"


def test_an_infinite_float_in_a_column_is_that_rows_problem_before_any_model_is_asked(
    tmp_path: Path,
) -> None:
    # Re-test 10 #4: an inf in a parquet float column became metadata, which the store cannot
    # write: the run failed after the model had answered, and again on every re-run.
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    folder = tmp_path / "inf"
    folder.mkdir()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(folder / "a.png")
    table = pa.table({"id": ["a", "b"], "image": ["a.png", "a.png"], "question": ["q?", "q?"],
                      "answer": ["red", "red"], "w": [1.5, math.inf]})  # fmt: skip
    pq.write_table(table, folder / "test.parquet")
    res = lmmprobe("run", "-m", "first", "--data", f"hf:{folder}", "--out", tmp_path / "o",
                   "--db", tmp_path / "db", HF_DATASETS_CACHE=str(tmp_path / "cache"))  # fmt: skip
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "Traceback" not in out, out
    assert "w: inf is infinite, a number JSON has no value for" in out, out
    assert "first: 1 requests" in out, out  # the other row is asked
