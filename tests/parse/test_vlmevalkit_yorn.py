"""VLMEvalKit's yes/no reading (``YOrN_Extraction``), reproduced: its own outputs, every one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmmprobe.parse.vlmevalkit import yorn_extraction
from lmmprobe.predictions._stream import iter_table

PARITY = Path(__file__).parents[1] / "parity" / "data"
RELEASED = PARITY / "vlmevalkit_released"
GENERATED = PARITY / "vlmevalkit_published"


def test_every_reading_of_the_reference_code_on_made_answers() -> None:
    # tests/parity/generate/vlmevalkit_yorn.py: each commit's own functions, run.
    doc = json.loads((PARITY / "vlmevalkit_yorn.json").read_text(encoding="utf-8"))
    for commit, readings in doc["readings"].items():
        got = [yorn_extraction(a) for a in doc["answers"]]
        assert got == readings, commit


@pytest.mark.parametrize(
    "table",
    [
        RELEASED / "vila_13b_MME_auxmatch.xlsx",
        RELEASED / "vila_13b_POPE_auxmatch.xlsx",
        RELEASED / "vila_13b_HallusionBench_auxmatch.xlsx",
        GENERATED / "Model_MME_auxmatch.xlsx",
        GENERATED / "Model_POPE_auxmatch.tsv",
    ],
    ids=lambda p: p.name,
)
def test_every_extracted_cell_the_tool_wrote_by_its_rule(table: Path) -> None:
    # VILA-13B's run of July 2024 asked no judge (every reading is its rule's): 8,452 answers.
    rows = [(str(r["prediction"] or ""), r["extracted"]) for _, r in iter_table(table)]
    assert rows
    assert [yorn_extraction(p) for p, _ in rows] == [e for _, e in rows]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("yesno ,.;()1-!?\n"), max_size=400))
def test_any_answer_reads_yes_no_or_unknown(answer: str) -> None:
    assert yorn_extraction(answer) in ("Yes", "No", "Unknown")


def test_a_long_adversarial_answer_is_read_in_bounded_time() -> None:
    # 1 MiB (the longest prediction read) of marks, digits and commas: linear passes only.
    answer = ("1,2 (yes). no; " * 70_000)[: 1 << 20]
    assert yorn_extraction(answer) == "Unknown"
    assert yorn_extraction("." * (1 << 20) + " yes") == "Yes"
