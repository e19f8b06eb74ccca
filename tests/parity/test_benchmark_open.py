"""Open-ended benchmark metrics against the outputs of their reference code.

The data come from tests/parity/generate/benchmark_open_*.py, which run: the official VQA
evaluation (GT-Vision-Lab/VQA ``vqaEval.py``, Python 2.7), lmms-eval's TextVQA, VQAv2 and OK-VQA
scoring, ChartQA relaxed correctness and GQA exact match, and OCRBench's released scoring (``example.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lmmprobe.metrics.benchmark_open import (
    gqa_exact_match,
    ocrbench_correct,
    ocrbench_totals,
    relaxed_correct,
    vqa_accuracy,
    vqa_accuracy_evalai,
    vqa_accuracy_lmms_eval,
)

DATA = Path(__file__).parent / "data"

CASES: dict[str, tuple[Callable[..., Any], int]] = {
    "benchmark_open_vqa.json": (vqa_accuracy, 1000),
    "benchmark_open_evalai.json": (vqa_accuracy_evalai, 1000),
    "benchmark_open_vqav2.json": (vqa_accuracy_lmms_eval, 1000),
    "benchmark_open_okvqa.json": (vqa_accuracy_evalai, 1000),
    "benchmark_open_chartqa.json": (relaxed_correct, 1000),
    "benchmark_open_gqa.json": (gqa_exact_match, 1000),
    "benchmark_open_ocrbench.json": (ocrbench_correct, 1000),
}


def _load(name: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return payload


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_the_reference_code(name: str) -> None:
    function, minimum = CASES[name]
    payload = _load(name)
    assert {"repo", "commit", "file", "function"} <= set(payload["reference"])
    cases = payload["cases"]
    assert len(cases) >= minimum
    diffs = [
        (case["input"], case["expected"], got)
        for case in cases
        if (got := function(**case["input"])) != case["expected"]
    ]
    assert not diffs, f"{len(diffs)} of {len(cases)} differ, first: {diffs[:5]}"


def test_ocrbench_score_sheet_matches_the_printed_one() -> None:
    sheet = _load("benchmark_open_ocrbench.json")["sheet"]
    rows = sheet["input"]
    assert len(rows) == 1000
    totals = ocrbench_totals(
        (r["type"], ocrbench_correct(r["prediction"], r["answers"], r["dataset"])) for r in rows
    )
    assert totals == sheet["expected"]


def test_vqa_accuracy_cases_cover_the_normalization() -> None:
    # The generated inputs exercise what the normalization does, not only exact strings.
    inputs = [c["input"] for c in _load("benchmark_open_vqa.json")["cases"]]
    preds = [i["prediction"] for i in inputs]
    assert any("," in p for p in preds)
    assert any(p.lower().startswith(("the ", "a ", "an ")) for p in preds)
    assert any(w in p for p in preds for w in ("dont", "cant", "theyre"))
    assert any(w in p.lower().split() for p in preds for w in ("two", "ten", "none"))
    assert any(p.endswith((".", "!", "?")) for p in preds)
    unanimous = [i for i in inputs if len(set(i["answers"])) == 1]
    assert len(unanimous) > 100  # the branch where nothing is normalized


def test_lmms_eval_vqav2_cases_include_replies_vqa_eval_would_score_differently() -> None:
    # The raw replies lmms-eval cleans ("Yes" against ten "yes") are what the data must cover.
    cases = _load("benchmark_open_vqav2.json")["cases"]
    differ = [c for c in cases if vqa_accuracy(**c["input"]) != c["expected"]]
    assert len(differ) > 50
    assert any(len(set(c["input"]["answers"])) == 1 for c in differ)


ANSWER_TEXT = st.text(alphabet="abcAB 12,.!'-", max_size=8)


@given(ANSWER_TEXT, st.lists(ANSWER_TEXT, min_size=1, max_size=10))
def test_vqa_accuracies_are_multiples_of_a_third_averaged(
    prediction: str, answers: list[str]
) -> None:
    for score in (vqa_accuracy, vqa_accuracy_evalai, vqa_accuracy_lmms_eval):
        value = score(prediction, answers)
        assert 0.0 <= value <= 1.0
        # Each left-out term is 0, 1/3, 2/3 or 1.
        assert abs(value * 3 * len(answers) - round(value * 3 * len(answers))) < 1e-9


@given(ANSWER_TEXT.filter(str.strip), st.lists(ANSWER_TEXT, max_size=6))
def test_four_annotators_agreeing_with_the_answer_give_full_credit(
    prediction: str, others: list[str]
) -> None:
    # With 4 matching references, every subset of 9 keeps at least 3 of them.
    answers = [prediction] * 4 + others
    assert vqa_accuracy(prediction, answers) == 1.0
    assert vqa_accuracy_evalai(prediction, answers) == 1.0
    assert vqa_accuracy_lmms_eval(prediction, answers) == 1.0
