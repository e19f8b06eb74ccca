"""Parity with the released evaluation code of MME, POPE, HallusionBench, MMMU and MathVista.

The data come from tests/parity/generate/benchmark_choice.py, which runs each reference from
its checkout on seeded inputs:

- benchmark_choice_mme.json: MME's calculation.py, per-subtask scores and the two totals;
- benchmark_choice_pope.json: POPE's evaluate.py, each answer's reading and the five scores;
- benchmark_choice_hallusion.json: HallusionBench's aAcc / fAcc / qAcc counts from its utils.py;
- benchmark_choice_mmmu.json: MMMU's multiple-choice and open readings and open verdicts;
- benchmark_choice_mathvista.json: MathVista's rule-based extraction, normalization, verdict
  (the verdict departs where the rules read nothing from a multiple-choice answer: lmmprobe
  reads a bare option letter and leaves the rest unread, see `mathvista_read`).

Every other case must match exactly (floats to the last bit where the reference prints them).
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
    hallusion_correctness,
    hallusion_scores,
    mathvista_correct,
    mathvista_extract,
    mathvista_normalize,
    mathvista_read,
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


def test_hallusionbench_rule_reading_keeps_unclear_for_stated_uncertainty() -> None:
    # The judge's "unclear" ("2") is for answers unclear about the answer, not unreadable ones.
    for answer in ("I cannot tell.", "I can’t determine that.", "I'm not sure", "Hard to say"):
        assert hallusion_correctness(answer, "1") == "2", answer
    for answer in ("", "blah", "Yes and no", "No, I cannot see a cat."):
        assert hallusion_correctness(answer, "1") == "0", answer
    assert hallusion_correctness("Yes, it is.", "1") == "1"
    assert hallusion_correctness("No, I cannot see a cat.", "0") == "1"


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


def _letter_reply_gold(c: dict[str, Any]) -> bool:
    """lmmprobe's verdict where MathVista's rules read nothing from a multiple-choice answer.

    The released code sends such an answer to GPT-4 (and, without it, to the nearest option by
    edit distance); lmmprobe reads a reply that is only an option letter, as GPT-4 would, and
    leaves anything else unread and wrong.
    """
    text = c["response"].strip()
    letter = text[1:-1] if len(text) == 3 and text[0] + text[2] == "()" else text.rstrip(".)")
    letters = [chr(ord("A") + i) for i in range(len(c["choices"]))]
    if letter.upper() in letters and (letter.isupper() or text.startswith("(")):
        return bool(c["choices"][letters.index(letter.upper())] == c["answer"])
    return False


def test_mathvista_rule_based_reading_matches_reference() -> None:
    diffs = []
    departures = 0
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
        expected = c["correct"]
        if c["question_type"] == "multi_choice" and c["extraction"] == "":
            expected = _letter_reply_gold(c)
            departures += expected != c["correct"]
        if (extraction, normalized, verdict) != (c["extraction"], c["normalized"], expected):
            diffs.append((c["response"], extraction, normalized, verdict, c))
    assert diffs == []
    assert departures > 0  # the cases where the edit-distance fallback picked an option


def test_mathvista_letter_replies_are_read_and_unreadable_ones_are_wrong() -> None:
    choices = ["3", "5", "7"]

    def correct(response: str, answer: str = "5") -> bool:
        return mathvista_correct(response, answer, choices, "multi_choice", "text", None)

    for reply in ("B", "(B)", "B.", "B)", "(b)", ' The answer is "B".'):
        assert correct(reply), reply
    # Nothing readable: never the nearest option, even when it is the gold one.
    assert not correct("", "3") and not correct("blah", "3") and not correct("blah")
    assert not correct("E", "3")  # a letter beyond the options is unread
    assert mathvista_read("", choices, "multi_choice", "text", None) is None
    assert mathvista_read("blah", choices, "multi_choice", "text", None) is None
    assert mathvista_read("C", choices, "multi_choice", "text", None) == "7"
