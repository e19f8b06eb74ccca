"""Parity with the released evaluation code of MME, POPE, HallusionBench, MMMU and MathVista.

The data come from tests/parity/generate/benchmark_choice.py, which runs each reference from
its checkout on seeded inputs:

- benchmark_choice_mme.json: MME's calculation.py, per-subtask scores and the two totals;
- benchmark_choice_pope.json: POPE's evaluate.py, each answer's reading and the five scores;
- benchmark_choice_hallusion.json: HallusionBench's aAcc / fAcc / qAcc counts from its utils.py;
- benchmark_choice_mmmu.json: MMMU's multiple-choice and open readings and open verdicts;
- benchmark_choice_mathvista.json: MathVista's rule-based extraction, normalization, verdict.

Every case must match exactly (floats to the last bit where the reference prints them).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from lmmprobe.metrics.benchmark_choice import (
    MME_COGNITION,
    MME_PERCEPTION,
    HallusionRow,
    hallusion_scores,
    mathvista_correct,
    mathvista_extract,
    mathvista_normalize,
    mme_subtask_score,
    mmmu_multi_choice,
    mmmu_open_correct,
    mmmu_parse_open,
    pope_read,
    pope_scores,
)

DATA = Path(__file__).parent / "data"


@cache
def load(name: str) -> list[Any]:
    doc: dict[str, Any] = json.loads(
        (DATA / f"benchmark_choice_{name}.json").read_text(encoding="utf-8")
    )
    assert doc["reference"]["commit"] and doc["generator"].endswith("benchmark_choice.py")
    cases: list[Any] = doc["cases"]
    return cases


def test_mme_scores_match_calculation_py() -> None:
    diffs = []
    for i, case in enumerate(load("mme")):
        totals = {"perception": 0.0, "cognition": 0.0}
        for task, rows in case["files"].items():
            pairs = [[(r[2], r[3]) for r in rows[k : k + 2]] for k in range(0, len(rows), 2)]
            score = mme_subtask_score(pairs)[0]
            if score != case["scores"][task]:
                diffs.append((i, task, score, case["scores"][task]))
            totals["perception" if task in MME_PERCEPTION else "cognition"] += score
        assert set(case["files"]) == set(MME_PERCEPTION) | set(MME_COGNITION)
        for key in totals:
            if totals[key] != case[key]:
                diffs.append((i, key, totals[key], case[key]))
    assert diffs == []


def _same(ours: float, theirs: float | None) -> bool:
    return math.isnan(ours) if theirs is None else ours == theirs


def test_pope_reading_and_scores_match_evaluate_py() -> None:
    diffs = []
    for i, case in enumerate(load("pope")):
        read = [pope_read(a) for a in case["answers"]]
        if read != case["read"]:
            diffs.append((i, "read", read, case["read"]))
        c = pope_scores(list(zip(case["labels"], case["answers"], strict=True)))
        if case["error"] is not None:  # the script divided by zero: ours is undefined there
            if not math.isnan(c.precision) and not math.isnan(c.recall):
                diffs.append((i, "undefined", c))
            continue
        for name in ("accuracy", "precision", "recall", "f1", "yes_ratio"):
            if not _same(getattr(c, name), case[name]):
                diffs.append((i, name, getattr(c, name), case[name]))
    assert diffs == []
    assert any(case["error"] for case in load("pope"))  # the 0/0 case is covered


def test_hallusionbench_accuracies_match_utils_py() -> None:
    diffs = []
    for i, case in enumerate(load("hallusion")):
        rows = [
            HallusionRow(
                r["category"],
                r["subcategory"],
                r["set_id"],
                r["figure_id"],
                r["question_id"],
                r["gpt4v_output_gpt_check"],
            )
            for r in case["rows"]
        ]
        ours = hallusion_scores(rows)
        for key in ("aAcc", "qAcc"):
            if list(ours[key]) != case[key]:
                diffs.append((i, key, ours[key], case[key]))
        expected_fig = case["fAcc"] if case["fAcc"] is not None else [0, 0]
        if list(ours["fAcc"]) != expected_fig:
            diffs.append((i, "fAcc", ours["fAcc"], case["fAcc"]))
    assert diffs == []


def test_mmmu_readings_match_eval_utils_py() -> None:
    (case,) = load("mmmu")
    mc_diffs = [
        (c["response"], got, c["parsed"])
        for c in case["multi_choice"]
        if (got := mmmu_multi_choice(c["response"], c["index2ans"])) != c["parsed"]
    ]
    assert mc_diffs == []
    open_diffs = []
    for c in case["open"]:
        parsed = mmmu_parse_open(c["response"])
        ordered = sorted(parsed, key=lambda v: (isinstance(v, str), str(v)))
        if ordered != c["parsed"] or mmmu_open_correct(c["gold"], parsed) != c["correct"]:
            open_diffs.append((c["response"], ordered, c["parsed"]))
    assert open_diffs == []


def test_mathvista_rule_based_reading_matches_reference() -> None:
    diffs = []
    for c in load("mathvista"):
        extraction = mathvista_extract(
            c["response"], c["question_type"], c["answer_type"], c["choices"]
        )
        normalized = mathvista_normalize(
            extraction, c["choices"], c["question_type"], c["answer_type"], c["precision"]
        )
        verdict = mathvista_correct(
            c["response"],
            c["answer"],
            c["choices"],
            c["question_type"],
            c["answer_type"],
            c["precision"],
        )
        if (extraction, normalized, verdict) != (c["extraction"], c["normalized"], c["correct"]):
            diffs.append((c["response"], extraction, normalized, verdict, c))
    assert diffs == []
