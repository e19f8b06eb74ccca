"""The data loaders read an index or a number in ASCII digits only (re-test 20 #19).

``str.isdigit`` is true of ``"²"`` (which ``int`` refuses: a traceback), of ``"٣"`` (which
``int`` reads as 3) and of 5,000 digits (past ``int``'s limit: a traceback advising to raise
it). VLMEvalKit TSVs' index (MMBench's circular groups, MMVP's pairs), the answers of the
benchmark tables (`_answers.as_index`), ReForm-Eval's gold indices (ours and the benchmarks'),
MMMU-Pro's ``<image N>`` tokens and a benchmark's ``limit=`` and a row's ``FILE:LINE`` now use
`lmmprobe.schema.text.ascii_integer`, as the rest of the code does.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import tiny_png

from lmmprobe.data.base import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS, _answers, load, reform_common
from lmmprobe.data.benchmarks.standard import mmmu_pro
from lmmprobe.data.reform import _choice_index
from lmmprobe.data.rows import RowError

ODD = ["²", "٣", "9" * 5_000]


@pytest.mark.parametrize("text", ODD)
def test_an_answer_index_in_other_digits_is_a_row_error(text: str) -> None:
    options = ["a", "b", "c", "d"]
    for read in (
        lambda: _answers.as_index(text, options),
        lambda: reform_common._index(text, options),
        lambda: _choice_index(text, options),
    ):
        with pytest.raises(RowError):
            read()
    # ASCII digits still read as before.
    assert _answers.as_index("2", options) == reform_common._index(" 2", options) == 2
    assert _choice_index("3", options) == 3


def test_a_benchmark_limit_or_a_row_place_in_other_digits_is_no_number() -> None:
    b = BENCHMARKS.get("mmvp")
    for text in ODD:
        with pytest.raises(DataError, match="is not a positive integer") as got:
            load._limit(b, {"limit": text}, None)
        assert len(str(got.value)) < 200
        assert load._split_where(f"f.tsv:{text}") == (f"f.tsv:{text}", None)
    assert load._limit(b, {"limit": "5"}, 3) == 3
    assert load._split_where("f.tsv:12") == ("f.tsv", 12)


def test_mmmu_pro_reads_image_tokens_in_ascii_digits_only() -> None:
    text = "<image ٣> and <image " + "9" * 5_000 + "> and <image 2>"
    assert mmmu_pro._IMAGE_TOKEN.findall(text) == ["2"]


def _tsv(folder: Path, name: str, indices: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    image = __import__("base64").b64encode(tiny_png("red")).decode("ascii")
    columns = ["index", "question", "A", "B", "answer", "category", "l2-category", "image"]
    with open(folder / f"{name}.tsv", "w", encoding="utf-8", newline="") as f:
        out = csv.DictWriter(f, columns, delimiter="\t", lineterminator="\n")
        out.writeheader()
        for i, index in enumerate(indices):
            out.writerow({"index": index, "question": f"q{i}", "A": "x", "B": "y",
                          "answer": "A", "category": "c", "l2-category": "d", "image": image})  # fmt: skip
    return folder


@pytest.mark.parametrize(("data", "dataset"), [("mmbench-cn", "MMBench_DEV_CN"), ("mmvp", "MMVP")])
def test_a_tsv_index_in_other_digits_is_a_row_problem_never_a_traceback(
    tmp_path: Path, data: str, dataset: str
) -> None:
    folder = _tsv(tmp_path / data, dataset, ["1", "2", *ODD])
    result = load_source(f"{data},path={folder}")
    # "٣" is no index (it was read as 3); "²" and 5,000 digits made int() raise.
    problems = "\n".join(str(p) for p in result.problems)
    if data == "mmvp":
        assert len(result.samples) == 2 and len(result.problems) == 3, problems
    else:
        assert sorted(s.metadata.get("circular_index") for s in result.samples[:2]) == [1, 2]
        assert all("circular_index" not in s.metadata for s in result.samples[2:])
    proc = lmmprobe("run", "-m", "random", "--data", f"{data},path={folder}", "--dry-run")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    # Each row's line quotes the value cut (`schema.text.shown_message`).
    assert all(len(line) < 1_300 for line in proc.stderr.splitlines()), proc.stderr
