"""A VLMEvalKit table's ``index`` of odd digits, scored without a local copy (re-test 20 #19).

The items are read from the table itself; its ``index`` passed `str.isdigit` and went to
``int()``: ``"²"`` or 5,000 digits ended ``score`` in a traceback (OCRBench's position, and
MMBench's circular group), and ``"٣"`` was read as 3.
"""

from __future__ import annotations

from pathlib import Path
from subprocess import CompletedProcess

import pytest
from tests.console import lmmprobe

ODD = {"super": "²", "huge": "9" * 5_000, "arabic": "٣"}


def _score(
    tmp_path: Path, name: str, header: str, rows: list[str], benchmark: str
) -> CompletedProcess[str]:
    table = tmp_path / name
    table.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return lmmprobe("score", table, "--benchmark", benchmark, HF_HUB_OFFLINE="1",
                    HF_DATASETS_CACHE=str(tmp_path / "cache"))  # fmt: skip


@pytest.mark.parametrize("index", list(ODD.values()), ids=list(ODD))
def test_an_ocrbench_index_that_is_no_position_is_named(tmp_path: Path, index: str) -> None:
    row = '\twhat?\t["abc"]\tText Recognition\tabc'
    proc = _score(tmp_path, "OCRBench_m.tsv", "index\tquestion\tanswer\tcategory\tprediction",
                  ["0" + row, index + row], "ocrbench")  # fmt: skip
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.strip().splitlines()
    assert "row 3: index: " in line and "is not the item's position in OCRBench" in line, line
    assert len(line) < 300


@pytest.mark.parametrize("index", list(ODD.values()), ids=list(ODD))
def test_an_mmbench_index_that_is_no_number_is_scored_as_its_own_item(
    tmp_path: Path, index: str
) -> None:
    row = "\twhat?\tx\ty\tA\tA\tc1"
    proc = _score(tmp_path, "MMBench_DEV_EN_m.tsv",
                  "index\tquestion\tA\tB\tanswer\tprediction\tcategory",
                  ["0" + row, index + row], "mmbench")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_cut_marker_naming_thousands_of_digits_is_the_files_own_text(tmp_path: Path) -> None:
    # lmmprobe marks a field it cut with " [cut here: N characters in the file]" and refuses to
    # make an item from it; a table whose question holds that text with 5,000 digits made
    # int() raise reading N: a traceback.
    question = "q [cut here: " + "9" * 5_000 + " characters in the file]"
    proc = _score(tmp_path, "OCRBench_m.tsv", "index\tquestion\tanswer\tcategory\tprediction",
                  [f'0\t{question}\t["abc"]\tText Recognition\tabc'], "ocrbench")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
