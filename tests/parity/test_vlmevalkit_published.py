"""``score TABLE --as-published`` against VLMEvalKit's own ratings of the same tables.

``data/vlmevalkit_published/expected.json`` holds what VLMEvalKit's ``Hallusion_rating``,
``POPE_rating``, ``MME_rating``, ``report_acc``, ``OCRBench.evaluate`` and ``MMVet_acc``
(open-compass/VLMEvalKit @ e8e78f0) returned
when run on the tables beside it and on the judged result tables of
``tests/predictions/fixtures/vlmevalkit/`` (made by VLMEvalKit's own evaluation);
``generate/vlmevalkit_published.py`` is the command. Each figure must be the same float, bit
for bit, read from ``score --format json`` through the console script, and printed to its last
digit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.data import DataError
from lmmprobe.predictions.as_published import PublishedSource, find_published

HERE = Path(__file__).parent / "data" / "vlmevalkit_published"
EXPECTED: dict[str, Any] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
TABLES: dict[str, Any] = EXPECTED["tables"]


def _want(result: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """VLMEvalKit's DataFrame as (row, column) → figure, turned as run.py prints it."""
    columns, rows = result["columns"], result["rows"]
    if not isinstance(rows[0][0], str):  # d2df: one row of named figures (MME_rating)
        columns, rows = ["", *columns], [["score", *rows[0]]]
    cells = {(str(r[0]), c): v for r in rows for c, v in zip(columns[1:], r[1:], strict=True)}
    if len(rows) < len(columns):
        return {(c, r): v for (r, c), v in cells.items()}
    return cells


def _got(table: dict[str, Any]) -> dict[tuple[str, str], Any]:
    out = {}
    for row in table["rows"]:
        name, *rest = row.items()
        out.update({(str(name[1]), c): v for c, v in rest})
    return out


def _published(path: Path, *extra: str) -> dict[str, Any]:
    done = lmmprobe("score", path, "--as-published", "--format", "json", *extra)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc["as_published"]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_as_published_equals_vlmevalkits_own_rating(name: str) -> None:
    case = TABLES[name]
    published = _published((HERE / name).resolve())
    assert case["function"] in published["definition"]
    assert "e8e78f0" in published["source"]
    results = [case["result"], *([case["fine"]] if "fine" in case else [])]
    assert len(published["tables"]) == len(results)
    for table, result in zip(published["tables"], results, strict=True):
        got = _got(table)
        want = _want(result)
        assert got == want
        # The same numbers and types: 100.0 stays a float, a count an int, as VLMEvalKit
        # writes them.
        assert all(type(got[k]) is type(v) for k, v in want.items())


def test_the_printed_table_gives_every_digit_vlmevalkit_writes() -> None:
    name = "Model_HallusionBench_auxmatch.xlsx"
    done = lmmprobe("score", HERE / name, "--as-published")
    assert done.returncode == 0, done.stderr
    vd = next(r for r in TABLES[name]["result"]["rows"] if r[0] == "VD")
    assert repr(vd[1]) == "41.66666666666667" and "41.66666666666667" in done.stdout
    assert "Hallusion_rating" in done.stdout


def test_a_named_benchmark_picks_its_rating_whatever_the_file_is_called(tmp_path: Path) -> None:
    # VLMEvalKit picks the rating by the dataset's name: the benchmark names it for a table
    # renamed out of VLMEvalKit's MODEL_DATASET scheme (whose stem names none).
    renamed = tmp_path / "readings_auxmatch.tsv"
    renamed.write_bytes((HERE / "Model_POPE_auxmatch.tsv").read_bytes())
    with pytest.raises(DataError, match="no published figure"):
        find_published("vlmevalkit", None, renamed)
    hook = find_published("vlmevalkit", "pope", renamed)
    table = hook.figure(PublishedSource(renamed, "pope")).document()["tables"][0]
    assert _got(table) == _want(TABLES["Model_POPE_auxmatch.tsv"]["result"])


def test_a_table_without_recorded_verdicts_is_refused_in_one_line(tmp_path: Path) -> None:
    table = tmp_path / "Model_POPE.tsv"
    table.write_text("index\tquestion\tanswer\tprediction\tcategory\n1\tq\tYes\tyes\trandom\n")
    done = lmmprobe("score", table, "--as-published")
    assert done.returncode != 0
    err = done.stderr.strip()
    assert err.count("\n") == 0
    assert "Model_POPE.tsv: no published figure" in err
    assert "pope (VLMEvalKit's MODEL_POPE..._auxmatch tables)" in err


def test_a_yes_no_index_vlmevalkit_cannot_split_names_its_row(tmp_path: Path) -> None:
    # The file's name tells HallusionBench, whose items it holds: the row is named as its
    # item is made (its index holds no set, figure and question numbers).
    table = tmp_path / "Model_HallusionBench_auxmatch.tsv"
    table.write_text(
        "index\tcategory\tl2-category\tquestion\tanswer\tprediction\textracted\tscore\n"
        "VD_chart_0_0_0_0\tVD\tchart\tIs it?\tYes\tyes\tYes\tTrue\n"
        "7\tVD\tchart\tIs it?\tNo\tyes\tYes\tFalse\n"
    )
    done = lmmprobe("score", table, "--as-published")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "Model_HallusionBench_auxmatch.tsv: row 3: index: '7' has not the parts" in said
    assert "Hallusion_rating reads" in said


def test_a_tool_version_is_refused_where_the_figure_has_one() -> None:
    done = lmmprobe(
        "score", HERE / "Model_POPE_auxmatch.tsv", "--as-published", "--tool-version", "2024-06-01"
    )
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0
    assert "--tool-version '2024-06-01'" in done.stderr
    assert "has one version only (it takes no --tool-version)" in done.stderr


@pytest.mark.parametrize("as_published", [True, False])
def test_a_long_tool_version_is_echoed_cut(as_published: bool) -> None:
    # Before: a 100,000-character value was echoed whole in the one-line error.
    long = "2024-" + "x" * 100_000
    done = lmmprobe(
        "score", HERE / "Model_POPE_auxmatch.tsv", "--benchmark", "pope",
        *(["--as-published"] if as_published else []), "--tool-version", long,
    )  # fmt: skip
    assert done.returncode != 0
    assert len(done.stderr) < 600, len(done.stderr)
    assert "(100,005 characters)" in done.stderr
