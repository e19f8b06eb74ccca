"""MATH-Vision's answer reading, equality and breakdowns against its released evaluation code.

- mathvision.json.gz: four answer files MATH-V ships (Gemini-Pro CoT, InternLM-XComposer2-VL
  CoT, Qwen-VL-Max, LLaVA-v1.5-7B; 3,040 real answers each) and 2,000 generated hard answers
  (boxed LaTeX, reworded golds, tuples, letters, option texts, empty), each with the answer
  ``evaluate.py`` read and its verdict, and the figures ``math_level_subject_acc`` wrote
  (overall, per level, subject, subject and level) (generate/mathvision.py).

The equality needs latex2sympy2 (``pip install 'lmmprobe[mathvision]'``); without it the
comparisons are skipped and the reading alone is compared.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.metrics.mathvision import mathvision_correct, mathvision_extract

DATA = Path(__file__).parent / "data" / "mathvision.json.gz"
HAS_LATEX2SYMPY = importlib.util.find_spec("latex2sympy2") is not None
needs_latex2sympy = pytest.mark.skipif(
    not HAS_LATEX2SYMPY, reason="latex2sympy2 is not installed (lmmprobe[mathvision])"
)


@cache
def _doc() -> dict[str, Any]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


def _files() -> list[tuple[str, dict[str, Any]]]:
    doc = _doc()
    return [*((f["file"], f) for f in doc["released"]), ("generated", doc["generated"])]


def test_the_reference_is_pinned() -> None:
    ref = _doc()["reference"]
    assert ref["repo"] == "mathllm/MATH-V"
    assert ref["commit"] == "a1f5cc3add200c0cd080fad463e500f44ef1fb41"
    assert [len(f["rows"]) for _, f in _files()] == [3040, 3040, 3040, 3040, 2000]


@pytest.mark.parametrize("index", range(5))
def test_answers_are_read_as_evaluate_py(index: int) -> None:
    _, f = _files()[index]
    differ = [
        (r["id"], r["response"][-80:], got, r["model_answer"])
        for r in f["rows"]
        if (got := mathvision_extract(r["response"])) != r["model_answer"]
    ]
    assert not differ, differ[:5]


def _figures(rows: list[dict[str, Any]], verdicts: list[bool]) -> dict[str, str]:
    """math_level_subject_acc's keys and texts, from verdicts."""
    questions = _doc()["questions"]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row, right in zip(rows, verdicts, strict=True):
        q = questions[row["id"]]
        subject, level = q["subject"], q["level"]
        for key in ("-all", f"-level{level}", subject, f"{subject}_level{level}",
                    f"-level{level}_{subject}"):  # fmt: skip
            counts[key][0] += right
            counts[key][1] += 1
    return {k: f"{c}/{n}={round(c / max(n, 1) * 100, 2)}%" for k, (c, n) in counts.items()}


@needs_latex2sympy
@pytest.mark.parametrize("index", range(5))
def test_verdicts_and_breakdowns_are_evaluate_pys(index: int) -> None:
    name, f = _files()[index]
    questions = _doc()["questions"]
    verdicts = []
    differ = []
    for r in f["rows"]:
        q = questions[r["id"]]
        right = mathvision_correct(r["response"], q["answer"], q["options"])
        verdicts.append(right)
        if right != r["correct"]:
            differ.append((r["id"], r["model_answer"], q["answer"], right))
    assert not differ, (name, differ[:5])
    assert _figures(f["rows"], verdicts) == f["result"]
