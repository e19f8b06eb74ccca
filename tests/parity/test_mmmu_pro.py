"""MMMU-Pro's answer reading and accuracy against its released ``mmmu-pro/evaluate.py``.

- mmmu_pro.json.gz: every GPT-4o answer of the four files MMMU-Pro ships (standard 10 options
  and vision, direct and CoT; 1,730 each) with the letter the released code read and the
  accuracy its ``check_files`` printed, and 1,500 generated hard answers
  (generate/mmmu_pro.py). The released code's random fallback was recorded as None.
"""

from __future__ import annotations

import ast
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.metrics.benchmark_choice import mmmu_pro_multi_choice

DATA = Path(__file__).parent / "data" / "mmmu_pro.json.gz"


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _index2ans(options: str) -> dict[str, str]:
    texts = ast.literal_eval(options)
    return {chr(ord("A") + i): str(t) for i, t in enumerate(texts)}


def test_the_reference_is_pinned() -> None:
    ref = _doc()["reference"]
    assert ref["repo"] == "MMMU-Benchmark/MMMU"
    assert ref["commit"] == "bb0b95a945998d91dfef37e969e07d49d1139438"


@pytest.mark.parametrize("index", range(4))
def test_released_answers_read_and_scored_as_evaluate_py(index: int) -> None:
    doc = _doc()
    released = doc["released"][index]
    options = doc["released_options"]
    right = 0
    differ = []
    for row in released["rows"]:
        got = mmmu_pro_multi_choice(row["response"], _index2ans(options[row["id"]]))
        if got != row["pred_indexs"]:
            differ.append((row["id"], row["response"][-80:], got, row["pred_indexs"]))
        right += got == row["answer"]
        assert (got == row["answer"]) == row["if_right"]
    assert not differ, differ[:5]
    # check_files prints true / total x 100 with two decimals.
    assert f"{right / len(released['rows']) * 100:.2f}" == f"{released['printed_accuracy']:.2f}"


def test_released_files_hold_the_answers_that_need_each_rule() -> None:
    # The shipped answers exercise the reading's branches: "Answer: X" lines, bare letters and
    # answers nothing can be read from (the released code's random guess; lmmprobe: unread).
    rows = [r for f in _doc()["released"] for r in f["rows"]]
    assert len(rows) == 4 * 1730
    assert sum("Answer:" in r["response"] for r in rows) > 1000
    assert sum(r["pred_indexs"] is None for r in rows) > 0


def test_generated_hard_answers_read_as_evaluate_py() -> None:
    cases = _doc()["generated"]
    differ = [
        (c["response"], c["options"], got, c["pred_indexs"])
        for c in cases
        if (got := mmmu_pro_multi_choice(c["response"], _index2ans(c["options"])))
        != c["pred_indexs"]
    ]
    assert not differ, differ[:5]
    assert len(cases) == 1500
    # Every kind of outcome is among them: unread, one letter, and verdicts both ways.
    assert {c["pred_indexs"] is None for c in cases} == {True, False}
    assert {c["if_right"] for c in cases} == {True, False}
