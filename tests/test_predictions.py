"""Scoring prediction files: ReForm-Eval's layout with their definitions, and our own export."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from lmmprobe import evaluate
from lmmprobe.cli.main import app
from lmmprobe.data import DataError
from lmmprobe.parse import reform_match
from lmmprobe.predictions import score_prediction_file
from lmmprobe.store import Store, export_run_to_file

OPTS = ["red", "blue", "green", "yellow"]


def entry(sid, pred, answer=1, options=OPTS):
    return {"sample_id": sid, "answer": answer, "answer_options": options, "prediction": pred}


def test_reform_matcher_rules():
    assert reform_match("(B)", OPTS) == 1
    assert reform_match("I pick (c) because", OPTS) == 2
    assert reform_match("(2)", OPTS) == 1
    assert reform_match("blue", OPTS) == 1  # exact option text
    assert reform_match(" blue", OPTS) is None  # exact means exact
    assert reform_match("I think blue", OPTS) is None  # not exact, no mark
    assert reform_match("(E)", OPTS) is None  # out of range
    assert reform_match("(A) no wait (B)", OPTS) == 0  # the first mark wins


def test_single_choice_file_matches_hand_computation(tmp_path):
    path = tmp_path / "pred.json"
    records = [
        entry("1", "(B)"), entry("1", "blue"), entry("1", "I think blue"), entry("1", "(A)"),
        entry("2", "(A)", 0, ["yes", "no"]), entry("2", "(A)", 0, ["yes", "no"]),
    ]  # fmt: skip
    path.write_text(json.dumps(records))
    m = score_prediction_file(path)["metrics"]
    # As ReForm-Eval's own evaluation: only "(X)" marks are read from a file ("blue" alone is
    # unmatched there), and the raw "blue" shares its category with the option text "blue".
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["format_hit_rate"] == pytest.approx(4 / 6)
    h1 = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert m["instability"] == pytest.approx(h1 / 2)


def test_out_of_range_mark_is_a_hit_but_wrong(tmp_path):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(E)"), entry("1", "(B)")]))
    m = score_prediction_file(path)["metrics"]
    assert m["format_hit_rate"] == 1.0 and m["accuracy"] == 0.5
    assert m["instability"] == pytest.approx(math.log(2))  # "(E)" counts as its raw text


def test_likelihood_file_and_bad_entries(tmp_path):
    path = tmp_path / "pred.jsonl"
    path.write_text("\n".join(json.dumps(entry("1", p)) for p in (1, 1, 0)))
    m = score_prediction_file(path, infer_method="likelihood")["metrics"]
    assert m["accuracy"] == pytest.approx(2 / 3) and m["format_hit_rate"] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([entry("1", 1), {"sample_id": "2", "answer": 0}]))
    with pytest.raises(DataError, match=r"#2: answer_options"):
        score_prediction_file(bad, infer_method="likelihood")


def test_ocr_and_kie_files(tmp_path):
    pytest.importorskip("rapidfuzz")
    path = tmp_path / "ocr.json"
    path.write_text(json.dumps([
        {"sample_id": "1", "answer": "stop", "prediction": "The sign says STOP."},
        {"sample_id": "2", "answer": "exit", "prediction": "no idea"},
    ]))  # fmt: skip
    assert score_prediction_file(path, "ocr")["metrics"]["accuracy"] == 0.5
    kie = tmp_path / "kie.json"
    kie.write_text(
        json.dumps(
            [{"sample_id": "1", "answer": "two dollars", "prediction": "It costs 2 dollars"}]
        )
    )
    assert score_prediction_file(kie, "kie")["metrics"]["accuracy"] == 1.0


def test_own_export_scores_like_the_run(tmp_path):
    ev = evaluate(
        models=["random"],
        data="demo,n=30",
        repeats=3,
        db=str(tmp_path / "db"),
        out=str(tmp_path / "o"),
    )
    with Store(tmp_path / "db") as store:
        export_run_to_file(store, ev.run_id, "jsonl", tmp_path / "e.jsonl")
    got = score_prediction_file(tmp_path / "e.jsonl")["models"]["random"]
    want = ev.results.models["random"].metrics
    assert got["accuracy"]["value"] == pytest.approx(want["accuracy"].value)
    assert got["instability"]["value"] == pytest.approx(want["instability"].value)


def test_score_command(tmp_path):
    path = tmp_path / "pred.json"
    path.write_text(json.dumps([entry("1", "(B)"), entry("1", "(A)")]))
    res = CliRunner().invoke(app, ["score", str(path)])
    assert res.exit_code == 0 and "accuracy" in res.output and "0.5000" in res.output
    res = CliRunner().invoke(app, ["score", str(path), "--formulation", "nope"])
    assert res.exit_code == 2


def test_caption_file_scores_and_anls(tmp_path):
    pytest.importorskip("pycocoevalcap")
    path = tmp_path / "cap.json"
    path.write_text(json.dumps([
        {"sample_id": "1", "prediction": "a red star on a gray background", "references": ["a red star on a gray background"]},
        {"sample_id": "2", "prediction": "two blue squares", "references": ["two blue squares side by side"]},
    ]))  # fmt: skip
    m = score_prediction_file(path, "generation")["metrics"]
    assert m["n"] == 2 and 0 < m["BLEU-1"] <= 1 and "CIDEr" in m and "ROUGE-L" in m
    ocr = tmp_path / "ocr.json"
    ocr.write_text(json.dumps([{"sample_id": "1", "answer": "stop", "prediction": "stop"}]))
    assert score_prediction_file(ocr, "ocr")["metrics"]["anls"] == 1.0
