"""Each official judge protocol end to end through the console script (issue 26, item 2).

A benchmark is loaded by name from a fixture in its published schema, answered by the fake
OpenAI server and judged by the same server scripted by prompt (`reply_table`: a judge prompt
quotes the model's answer in the reference's own words, so each needle below is a piece of the
official prompt). ``lmmprobe run --judge SPEC`` picks the benchmark's official protocol
(`Benchmark.judge`) by itself; the official metric in results.json is then computed from the
verdicts, with the paths that decided them and the calls the server received known exactly.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

from lmmprobe.testing.openai_server import FakeOpenAIServer

STR = Value("string")


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((30 * i % 255, 60, 90)), "path": f"{i}.png"}


def _run(tmp_path: Path, data: str, table: list[tuple[str, str]]) -> tuple[dict[str, Any], int]:
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "-q", "--db", tmp_path / "db",
            "--out", out, "--judge", f"openai:judge@{url}", "--bootstrap", "0",
            OPENAI_API_KEY="test-key", HF_DATASETS_CACHE=str(tmp_path / "hf-cache"),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        calls = server.requests_total
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    return model, calls


def _metric(model: dict[str, Any], name: str) -> float:
    value: float = model["metrics"][name]["value"]
    return value


# --------------------------------------------------------------------------- MathVista


def test_mathvista_extract_rules_first_then_the_judges_extraction(tmp_path: Path) -> None:
    meta = {"category": "math-targeted-vqa", "task": "figure question answering",
            "context": "bar chart"}  # fmt: skip
    rows = {
        "pid": ["1", "2", "3"],
        "question": ["How many bars? #a", "How many bars? #b", "How many bars? #c"],
        "image": ["images/1.jpg", "images/2.jpg", "images/3.jpg"],
        "decoded_image": [_img(1), _img(2), _img(3)],
        "choices": [None, None, None],
        "unit": [None, None, None],
        "precision": [None, None, None],
        "answer": ["7", "7", "7"],
        "question_type": ["free_form"] * 3,
        "answer_type": ["integer"] * 3,
        "metadata": [meta] * 3,
        "query": [f"Hint: integer.\nQuestion: How many bars? #{t}" for t in "abc"],
    }
    feats = Features({
        "pid": STR, "question": STR, "image": STR, "decoded_image": Image(),
        "choices": Sequence(STR), "unit": STR, "precision": Value("float64"), "answer": STR,
        "question_type": STR, "answer_type": STR,
        "metadata": {"category": STR, "task": STR, "context": STR}, "query": STR,
    })  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mv", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    table = [
        # The few-shot prompt ends with the query, the response and "Extracted answer: ".
        ("#b\n\nThere are seven bars.\n\nExtracted answer: ", "7"),
        ("#c\n\nHard to count.\n\nExtracted answer: ", "!fail"),  # a failing judge: unjudged
        ("#a", "7"), ("#b", "There are seven bars."), ("#c", "Hard to count."),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"mathvista,path={folder}", table)
    # a: "7" read by MathVista's rules (no judge); b: the judge extracted 7; c: unjudged.
    assert calls == 3 + 2
    assert model["judge"]["protocols"] == {"mathvista-extract": "lupantech/MathVista@53d5258"}
    assert model["judge"]["decided"] == {"rule": 1, "judge": 1, "unjudged": 1}
    # c counts wrong, as calculate_score.py scores MathVista's empty extraction; over the
    # judged answers alone the figure is 2/2.
    assert _metric(model, "mathvista_accuracy") == pytest.approx(2 / 3)
    assert model["metrics"]["mathvista_accuracy"]["n"] == 3
    assert _metric(model, "mathvista_accuracy_judged_only") == pytest.approx(1.0)
    assert model["metrics"]["mathvista_accuracy_judged_only"]["n"] == 2
    # A reading is a verdict: coverage counts the rule's and the judge's, not the unjudged.
    assert _metric(model, "judge_coverage") == pytest.approx(2 / 3)
    assert _metric(model, "judge_score") == pytest.approx(1.0)
    assert model["metrics"]["judge_score"]["n"] == 2


# --------------------------------------------------------------------------- MMBench


def test_mmbench_choice_judges_only_what_vlmevalkits_rules_cannot_read(tmp_path: Path) -> None:
    # Question 1: copies a (gold A) and b (gold B); question 2: copies c and d.
    rows = {
        "index": ["1", "1000001", "2", "1000002"],
        "question": ["What colour? #a", "What colour? #b", "Which shape? #c", "Which shape? #d"],
        "hint": ["nan"] * 4,
        "answer": ["A", "B", "B", "A"],
        "A": ["red", "blue", "round", "square"],
        "B": ["blue", "red", "square", "round"],
        "C": [None] * 4,
        "D": [None] * 4,
        "category": ["color", "color", "shape", "shape"],
        "image": [_img(i) for i in range(4)],
        "source": ["s"] * 4,
        "L2-category": ["perception"] * 4,
        "comment": [None] * 4,
        "split": ["dev"] * 4,
    }
    feats = Features({k: STR for k in rows if k != "image"} | {"image": Image()})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(rows, features=feats)}, config="en"
    )
    table = [
        ("Answer: It looks crimson to me\nYour output: ", "A"),
        ("Answer: no idea at all\nYour output: ", "I cannot tell"),  # unreadable: unjudged
        ("#a", "It looks crimson to me"), ("#b", "B"), ("#c", "B"), ("#d", "no idea at all"),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"mmbench,path={folder}", table)
    assert calls == 4 + 2
    assert model["judge"]["decided"] == {"rule": 2, "judge": 1, "unjudged": 1}
    # Question 1 passes CircularEval (a by the judge, b by rule); question 2 fails: d is
    # unjudged, so wrong (VLMEvalKit would have guessed a random option for it). Over the
    # judged copies alone, question 2 lacks a copy and is left out.
    assert _metric(model, "mmbench_circular") == pytest.approx(1 / 2)
    assert model["metrics"]["mmbench_circular"]["n"] == 2
    assert _metric(model, "mmbench_circular_judged_only") == pytest.approx(1.0)
    assert model["metrics"]["mmbench_circular_judged_only"]["n"] == 1
    # Each copy's letter read by rule or judge is right (a A, b B, c B); d is unjudged.
    assert _metric(model, "judge_coverage") == pytest.approx(3 / 4)
    assert _metric(model, "judge_score") == pytest.approx(1.0)
    assert model["metrics"]["judge_score"]["n"] == 3


# --------------------------------------------------------------------------- HallusionBench


def test_hallusionbench_correct_judges_every_answer(tmp_path: Path) -> None:
    keys = [("0", "0"), ("1", "0"), ("0", "1"), ("1", "1")]  # (figure_id, question_id)
    rows = {
        "category": ["VD"] * 4,
        "subcategory": ["illusion"] * 4,
        "visual_input": ["1"] * 4,
        "set_id": ["0"] * 4,
        "figure_id": [f for f, _ in keys],
        "sample_note": ["circle"] * 4,
        "question_id": [q for _, q in keys],
        "question": [f"Is the left circle bigger? #{t}" for t in "abcd"],
        "gt_answer_details": ["details"] * 4,
        "gt_answer": ["1", "0", "0", "1"],
        "filename": ["VD/illusion/0_0.png"] * 4,
        "image": [_img(i) for i in range(4)],
    }
    feats = Features({k: (Image() if k == "image" else STR) for k in rows})
    folder = write_hub_snapshot(tmp_path / "hb", {"image": Dataset.from_dict(rows, features=feats)})
    table = [
        ("Prediction answer:Yes, it is.\nOutput:", "correct"),
        ("Prediction answer:No.\nOutput:", "Correct."),
        # By rule "Yes" to a "no" question is wrong; this judge says it does not conflict.
        ("Prediction answer:Yes\nOutput:", "correct"),
        ("Prediction answer:It is hard to say\nOutput:", "unclear"),
        ("#a", "Yes, it is."), ("#b", "No."), ("#c", "Yes"), ("#d", "It is hard to say"),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"hallusionbench,path={folder}", table)
    assert calls == 4 + 4
    assert model["judge"]["decided"] == {"rule": 0, "judge": 4, "unjudged": 0}
    assert _metric(model, "hallusionbench_aacc") == pytest.approx(3 / 4)
    assert _metric(model, "hallusionbench_facc") == pytest.approx(1 / 2)
    assert _metric(model, "hallusionbench_qacc") == pytest.approx(1 / 2)
    # The headline reads each answer's yes or no by rule (a, b right; c wrong): d says
    # neither, so the judge's "unclear" decides it (wrong), named as judged.
    assert _metric(model, "accuracy") == pytest.approx(2 / 4)
    assert model["judged_headline"]["answers"] == 1 and model["judged_headline"]["correct"] == 0


# --------------------------------------------------------------------------- MM-Vet


def test_mmvet_grade_five_runs_averaged(tmp_path: Path) -> None:
    rows = {
        "question_id": ["v1_0", "v1_1", "v1_2"],
        "image": [_img(0), _img(1), _img(2)],
        "question": ["What is x? #a", "Explain the meme. #b", "What is written? #c"],
        "answer": ["-1<AND>-5", "Iceland is green", "STOP"],
        "image_source": ["s"] * 3,
        "capability": [["math", "ocr"], ["rec", "know"], ["ocr"]],
    }
    feats = Features({"question_id": STR, "image": Image(), "question": STR, "answer": STR,
                      "image_source": STR, "capability": Sequence(STR)})  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mmvet", {"test": Dataset.from_dict(rows, features=feats)}
    )
    table = [
        # The few-shot table holds "| -1 <AND> -5 | x = -1 | 0.5" itself: needles name the question.
        ("#a | -1 <AND> -5 | x = -1 | ", "0.5"),
        ("#b | Iceland is green | Iceland is green indeed | ", "1.0"),
        ("#c | STOP | a sign | ", "great answer"),  # no grade: unjudged in every run
        ("#a", "x = -1"), ("#b", "Iceland is green indeed"), ("#c", "a sign"),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"mmvet,path={folder}", table)
    assert calls == 3 + 3 * 5  # the grader's five runs per answer
    assert model["judge"]["decided"] == {"rule": 0, "judge": 2, "unjudged": 1}
    # c graded 0.0 in each run, the grader's last resort; left out, (0.5 + 1.0) / 2.
    assert _metric(model, "mmvet_score") == pytest.approx((0.5 + 1.0 + 0.0) / 3 * 100)
    assert _metric(model, "mmvet_score_judged_only") == pytest.approx((0.5 + 1.0) / 2 * 100)


# --------------------------------------------------------------------------- LLaVA-Bench


def test_llava_wild_review_relative_score(tmp_path: Path) -> None:
    rows = {
        "question_id": [0, 1],
        "question": ["What dish is this? #a", "Describe the photo. #b"],
        "image": [_img(0), _img(1)],
        "caption": ["A bowl of ramen.", "A street at night."],
        "gpt_answer": ["It is ramen.", "A busy street lit by neon signs."],
        "category": ["conv", "detail"],
        "image_id": ["001", "002"],
    }
    feats = Features({"question_id": Value("int8"), "question": STR, "image": Image(),
                      "caption": STR, "gpt_answer": STR, "category": STR, "image_id": STR})  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "lw", {"train": Dataset.from_dict(rows, features=feats)})
    table = [
        ("[Assistant 2]\nRamen.\n\n[End of Assistant 2]", "8 6\nAssistant 1 is more detailed."),
        ("[Assistant 2]\nA street.\n\n[End of Assistant 2]", "7 7\nBoth fine."),
        ("#a", "Ramen."), ("#b", "A street."),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"llava-wild,path={folder}", table)
    assert calls == 2 + 2
    assert model["judge"]["decided"] == {"rule": 0, "judge": 2, "unjudged": 0}
    # Means 7.5 (reference) and 6.5 (model): round(6.5 / 7.5 x 100, 1).
    assert _metric(model, "llava_wild_relative") == 86.7


OFF_SCALE = ["8 -1e6", "10 1e300", "1e308 1e308", "0 5", "-5 10"]


def test_llava_wild_review_scores_outside_1_to_10_are_unjudged(tmp_path: Path) -> None:
    # Re-test 11 #18: "8 -1e6" made the judge score -1000000.000, "1e308 1e308" inf on the
    # terminal and null in results.json; every case said "0 unjudged". One run holds every
    # off-scale review (one question each) beside one review in range.
    n = len(OFF_SCALE) + 1
    rows = {
        "question_id": list(range(n)),
        "question": ["What dish is this? #q0"]
        + [f"Describe the photo. #q{i}" for i in range(1, n)],
        "image": [_img(i) for i in range(n)],
        "caption": ["A bowl of ramen."] + ["A street at night."] * (n - 1),
        "gpt_answer": ["It is ramen."] + ["A busy street lit by neon signs."] * (n - 1),
        "category": ["conv"] + ["detail"] * (n - 1),
        "image_id": [f"{i:03d}" for i in range(n)],
    }
    feats = Features({"question_id": Value("int8"), "question": STR, "image": Image(),
                      "caption": STR, "gpt_answer": STR, "category": STR, "image_id": STR})  # fmt: skip
    folder = write_hub_snapshot(tmp_path / "lw", {"train": Dataset.from_dict(rows, features=feats)})
    table = [
        ("[Assistant 2]\nRamen.\n\n[End of Assistant 2]", "8 6\nAssistant 1 is more detailed."),
        *(
            (f"[Assistant 2]\nStreet {i}.\n\n[End of Assistant 2]", f"{review}\nOff the scale.")
            for i, review in enumerate(OFF_SCALE, 1)
        ),
        ("#q0", "Ramen."),
        *((f"#q{i}", f"Street {i}.") for i in range(1, n)),
    ]
    model, _ = _run(tmp_path, f"llava-wild,path={folder}", table)
    assert model["judge"]["decided"] == {"rule": 0, "judge": 1, "unjudged": len(OFF_SCALE)}
    # The one verdict in range is the judged-only figure; the off-scale ones are not in it.
    assert model["metrics"]["judge_score"]["value"] == 6.0
    with sqlite3.connect(tmp_path / "db") as c:
        reasons = dict(
            c.execute("SELECT sample_id, reason FROM judgements WHERE decided_by = 'unjudged'")
        )
    assert len(reasons) == len(OFF_SCALE), reasons
    for sample_id, reason in reasons.items():
        assert "is outside 1-10" in reason, (sample_id, reason)


def test_data_show_names_the_official_judge() -> None:
    proc = lmmprobe("data", "show", "mathvista")
    assert proc.returncode == 0, proc.stderr
    assert "official judge: mathvista-extract (the official number needs --judge SPEC)" in (
        proc.stdout
    )
    # Without a judge the rule-based reading is used and said not to be the official number.
    assert "not the official number" in proc.stdout
    shown = lmmprobe("data", "show", "pope")
    assert "official judge" not in shown.stdout


def test_a_mode_the_official_protocol_does_not_allow_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    # MM-Vet is graded by its judge alone: "rules first" cannot be its protocol. The run is
    # refused before any model is asked (the server receives nothing) with one line naming
    # the benchmark, its protocol and the modes it allows.
    with FakeOpenAIServer(reply_table=[("x", "y")]) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "mmvet,path=nowhere",
            "-q", "--db", tmp_path / "db", "--out", tmp_path / "out",
            "--judge", f"openai:judge@{server.base_url}", "--judge-when", "miss",
            OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert server.requests_total == 0
    assert proc.returncode == 2, proc.stderr
    (line,) = [s for s in proc.stderr.splitlines() if "--judge-when" in s]
    assert "benchmark mmvet" in line and "mmvet-grade" in line
    assert line.endswith("allows only --judge-when always"), line
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- MathVerse


def _mathverse_folder(tmp_path: Path) -> Path:
    meta = {
        "split": "testmini",
        "source": "GeoQA",
        "subject": "Plane Geometry",
        "subfield": "Angle",
    }
    versions = ["Text Dominant", "Vision Only", "Text Dominant"]
    rows = {
        "sample_index": ["1", "2", "3"],
        "problem_index": ["1", "1", "2"],
        "problem_version": versions,
        "question": [f"Find angle {{x}}. #q{t}" for t in "abc"],
        "image": [_img(1), _img(2), _img(3)],
        "answer": ["B", "B", "7"],
        "question_type": ["multi-choice", "multi-choice", "free-form"],
        "metadata": [meta] * 3,
        "query_wo": [f"Please directly answer the question. #w{t}" for t in "abc"],
        "query_cot": ["Please first conduct reasoning."] * 3,
        "question_for_eval": ["Find angle x."] * 3,
    }
    feats = Features({k: STR for k in rows if k not in ("image", "metadata")} | {
        "image": Image(), "metadata": {k: STR for k in meta},
    })  # fmt: skip
    return write_hub_snapshot(
        tmp_path / "mathverse",
        {"testmini": Dataset.from_dict(rows, features=feats)},
        config="testmini",
    )


# The model's answers, then the judge's: an extraction prompt ends with "Model response:
# 'ANSWER'\nExtracted Answer: ", a scoring prompt quotes the question and the extraction and
# ends "Judgement:" (the template is stripped before it is filled).
_MATHVERSE_TABLE = [
    ("#ra'\nExtracted Answer: ", "Extracted Answer: B"),
    ("#rb'\nExtracted Answer: ", "C"),
    ("#rc'\nExtracted Answer: ", "!fail"),  # the extraction fails: unjudged
    ("#qa\n[Standard Answer]: B\n[Model_answer] : B\nJudgement:", "Judgement: 1"),
    ("#qb\n[Standard Answer]: B\n[Model_answer] : C\nJudgement:", "0"),
    ("#wa", "It is B #ra"), ("#wb", "Perhaps C #rb"), ("#wc", "About 7 #rc"),
]  # fmt: skip


def test_mathverse_extracts_then_scores_each_answer_with_the_judge(tmp_path: Path) -> None:
    folder = _mathverse_folder(tmp_path)
    model, calls = _run(tmp_path, f"mathverse,path={folder}", _MATHVERSE_TABLE)
    # 3 answers, 3 extractions, 2 scorings (the failed extraction is not scored).
    assert calls == 3 + 3 + 2
    assert model["judge"]["protocols"] == {"mathverse-judge": "ZrrSkywalker/MathVerse@937b090"}
    assert model["judge"]["decided"] == {"rule": 0, "judge": 2, "unjudged": 1}
    # a right, b wrong, c unjudged and so wrong, as every item stays in the denominator.
    assert _metric(model, "mathverse_accuracy") == pytest.approx(1 / 3)
    assert model["metrics"]["mathverse_accuracy"]["n"] == 3
    assert _metric(model, "mathverse_accuracy_judged_only") == pytest.approx(1 / 2)


def test_mathverse_under_judge_when_miss_scores_an_equal_extraction_by_rule(tmp_path: Path) -> None:
    folder = _mathverse_folder(tmp_path)
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=_MATHVERSE_TABLE) as server:
        url = server.base_url
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", f"mathverse,path={folder}", "-q",
            "--db", tmp_path / "db", "--out", out, "--judge", f"openai:judge@{url}",
            "--judge-when", "miss", "--bootstrap", "0", "--by", "problem_version",
            OPENAI_API_KEY="test-key", HF_DATASETS_CACHE=str(tmp_path / "hf-cache"),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        calls = server.requests_total
    # a's extraction equals the answer: quick_match's rule scores it, no scoring call.
    assert calls == 3 + 3 + 1
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    assert _metric(model, "mathverse_accuracy") == pytest.approx(1 / 3)


def test_mathverse_without_a_judge_has_no_score(tmp_path: Path) -> None:
    folder = _mathverse_folder(tmp_path)
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=_MATHVERSE_TABLE) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url}", "--data",
            f"mathverse,path={folder}", "-q", "--db", tmp_path / "db", "--out", out,
            "--bootstrap", "0", OPENAI_API_KEY="test-key",
            HF_DATASETS_CACHE=str(tmp_path / "hf-cache"),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    (model,) = json.loads((out / "results.json").read_text())["models"].values()
    metric = model["metrics"].get("mathverse_accuracy")
    assert metric is None or metric["value"] is None


# --------------------------------------------------------------------------- CharXiv


def _charxiv_folder(tmp_path: Path) -> Path:
    """A copy in the layout of princeton-nlp/CharXiv's clone: data/*_val.json, images/N.jpg."""
    root = tmp_path / "charxiv"
    (root / "data").mkdir(parents=True)
    (root / "images").mkdir()
    reasoning = {
        "0": {"figure_id": 0, "query": "Which model declines most? #qa", "answer": "Joint-CNN",
              "inst_category": 1, "qa_source": 1},
        "2": {"figure_id": 2, "query": "What is the gap at x=1? #qb", "answer": "0.12",
              "inst_category": 4, "qa_source": 3},
        "5": {"figure_id": 5, "query": "How many lines? #qc", "answer": "3",
              "inst_category": 3, "qa_source": 2},
    }  # fmt: skip
    described = {k: {"figure_id": int(k), "num_subplots": n, "subplot_loc": [0, 0],
                     "qids": [1, 2, 3, 4], "answers": ["a", "b", "c", "d"]}
                 for k, n in (("0", 2), ("2", 1), ("5", 6))}  # fmt: skip
    meta = {k: {"category": c, "year": "21", "figure_path": "f.jpg"}
            for k, c in (("0", "cs"), ("2", "econ"), ("5", "cs"))}  # fmt: skip
    for name, doc in (("reasoning", reasoning), ("descriptive", described),
                      ("image_metadata", meta)):  # fmt: skip
        (root / "data" / f"{name}_val.json").write_text(json.dumps(doc), encoding="utf-8")
    for i, k in enumerate(reasoning):
        (root / "images" / f"{k}.jpg").write_bytes(tiny_png((40 * i, 80, 120)))
    return root


def test_charxiv_reasoning_is_graded_by_the_judge_with_charxivs_prompt(tmp_path: Path) -> None:
    folder = _charxiv_folder(tmp_path)
    table = [
        # A grading prompt quotes the question and ends with "* Response: ANSWER\n\n    ".
        ("* Response: Joint-CNN #ra\n", '{"extracted_answer": "Joint-CNN", "score": 1}'),
        ("* Response: about 0.1 #rb\n", '{"extracted_answer": "0.1", "score": 0}'),
        ("* Response: three #rc\n", "Score: 1"),  # no JSON: the script asks again; unjudged
        ("#qa", "Joint-CNN #ra"), ("#qb", "about 0.1 #rb"), ("#qc", "three #rc"),
    ]  # fmt: skip
    model, calls = _run(tmp_path, f"charxiv-reasoning,path={folder}", table)
    assert calls == 3 + 3
    assert model["judge"]["protocols"] == {
        "charxiv-reasoning-grade": "princeton-nlp/CharXiv@7ebe88f"
    }
    assert model["judge"]["decided"] == {"rule": 0, "judge": 2, "unjudged": 1}
    # The unjudged answer counts 0, as get_stats.py counts the script's -1.
    assert _metric(model, "charxiv_reasoning_accuracy") == pytest.approx(1 / 3)
    assert _metric(model, "charxiv_reasoning_accuracy_judged_only") == pytest.approx(1 / 2)


def test_mathverse_dry_run_counts_the_scoring_stage_from_the_stored_extractions(
    tmp_path: Path,
) -> None:
    folder = _mathverse_folder(tmp_path)
    with FakeOpenAIServer(reply_table=_MATHVERSE_TABLE) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge@{url}"
        base = ("run", "-m", model, "--data", f"mathverse,path={folder}", "-q",
                "--db", tmp_path / "db", "--bootstrap", "0")  # fmt: skip
        env = {"OPENAI_API_KEY": "test-key", "HF_DATASETS_CACHE": str(tmp_path / "hf-cache")}

        def dry() -> str:
            server.reset_stats()
            proc = lmmprobe(*base, "--judge", judge, "--dry-run", **env)
            assert proc.returncode == 0, proc.stderr
            assert server.requests_total == 0
            return " ".join(proc.stdout.split())

        assert lmmprobe(*base, "--out", tmp_path / "o1", **env).returncode == 0
        # The answers stored, no extraction yet: 3 extractions, and a scoring each at most.
        assert f"on {model}: 6 call(s)" in dry()
        judged = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o2", **env)
        assert judged.returncode == 0, judged.stderr
        # Both stages' replies stored: the scorings follow from the stored extractions (the
        # failed one is asked again, and would be scored after it): nothing else is sent.
        out = dry()
        assert f"on {model}: 2 call(s)" in out, out
        # The same command again sends only what failed: the failed extraction (still failing).
        server.reset_stats()
        again = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o3", **env)
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 1


# --------------------------------------------------------------------------- CharXiv descriptive

# Seven charts in the data's order; as text their sample ids sort otherwise ("100_0" < "10_0"
# < "11_0" < "20_0" < "2_0" < "3_0" < "5_0"), the order the store gives the rows in.
_CX_FIGURES = (2, 10, 3, 11, 100, 20, 5)


def _charxiv_descriptive_folder(tmp_path: Path) -> Path:
    """A copy in the layout of princeton-nlp/CharXiv's clone: four questions a chart."""
    root = tmp_path / "charxiv-d"
    (root / "data").mkdir(parents=True)
    (root / "images").mkdir()
    described = {
        str(f): {"figure_id": f, "num_subplots": 1, "subplot_loc": f"fig{f}",
                 "qids": [1, 2, 18, 19], "answers": [f"Title {f}", f"X{f}", "1 by 1", "1"]}
        for f in _CX_FIGURES
    }  # fmt: skip
    meta = {str(f): {"category": "cs", "year": "22"} for f in _CX_FIGURES}
    for name, doc in (("descriptive", described), ("image_metadata", meta)):
        (root / "data" / f"{name}_val.json").write_text(json.dumps(doc), encoding="utf-8")
    for i, f in enumerate(_CX_FIGURES):
        (root / "images" / f"{f}.jpg").write_bytes(tiny_png((30 * i, 80, 120)))
    return root


def _grades(*scores: int, drop: str | None = None) -> str:
    doc: dict[str, Any] = {}
    for i, s in enumerate(scores, start=1):
        doc[f"extract_answer_T{i}"], doc[f"score_T{i}"] = "x", s
    doc.pop(drop or "", None)
    return json.dumps(doc)


# A grading prompt quotes each answer as "Response N: ANSWER"; the first names its group.
_CX_TABLE = [
    # Template 1: charts 2, 10, 3, 11, 100 in one prompt, then 20 and 5.
    ("Response 1: T2 #a\n", _grades(1, 0, 1, 1, 0)),
    ("Response 1: T20 #a\n", _grades(1, 1)),
    # Template 2: the first group's reply lacks T3's score: the script refuses it whole.
    ("Response 1: X2 #b\n", _grades(1, 1, 1, 1, 1, drop="score_T3")),
    ("Response 1: X20 #b\n", _grades(0, 1)),
    # Templates 18 and 19 (no subplot named: every chart's answer is the same).
    ("Response 5: layout 1 by 1\n", _grades(1, 1, 1, 1, 1)),
    ("Response 2: layout 1 by 1\n", _grades(1, 0)),
    ("Response 5: one subplot\n", _grades(0, 0, 0, 0, 1)),
    ("Response 2: one subplot\n", _grades(1, 1)),
    *[(f"For fig{f}, what is its title?", f"T{f} #a") for f in _CX_FIGURES],
    *[(f"For fig{f}, what is the label of the x-axis?", f"X{f} #b") for f in _CX_FIGURES],
    ("What is the layout of the subplots?", "layout 1 by 1"),
    ("What is the number of subplots?", "one subplot"),
]  # fmt: skip


def test_charxiv_descriptive_grades_five_answers_of_a_template_a_prompt(tmp_path: Path) -> None:
    folder = _charxiv_descriptive_folder(tmp_path)
    with FakeOpenAIServer(reply_table=_CX_TABLE) as server:
        url = server.base_url
        model, judge = f"openai:fake-vlm@{url}", f"openai:judge@{url}"
        base = ("run", "-m", model, "--data", f"charxiv-descriptive,path={folder}", "-q",
                "--db", tmp_path / "db", "--bootstrap", "0", "--by", "template")  # fmt: skip
        env = {"OPENAI_API_KEY": "test-key", "HF_DATASETS_CACHE": str(tmp_path / "hf-cache")}

        def dry() -> str:
            server.reset_stats()
            proc = lmmprobe(*base, "--judge", judge, "--dry-run", **env)
            assert proc.returncode == 0, proc.stderr
            assert server.requests_total == 0
            return " ".join(proc.stdout.split())

        # Before any answer: a bound, a call per answer.
        assert f"on {model}: at most 28 call(s)" in dry()
        assert lmmprobe(*base, "--out", tmp_path / "o1", **env).returncode == 0
        # The answers stored: the groups are known, a call each.
        assert f"on {model}: 8 call(s)" in dry()
        stored = lmmprobe("judge", "latest", "--judge", judge, "--db", tmp_path / "db",
                          "--dry-run", **env)  # fmt: skip
        assert stored.returncode == 0, stored.stderr
        assert f"on {model}: 8 call(s)" in " ".join(stored.stdout.split())
        server.reset_stats()
        judged = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o2", **env)
        assert judged.returncode == 0, judged.stderr
        assert server.requests_total == 8
        # Why fewer requests than verdicts: the protocol's grouping, not a cache.
        assert (
            f"judge {judge}: 8 requests for 28 verdicts (charxiv-descriptive-grade grades up "
            "to 5 answers in one prompt)"
        ) in " ".join(judged.stdout.split())
        # Every reply stored: nothing left to ask, and the same command asks nothing.
        assert f"on {model}: 0 call(s)" in dry()
        server.reset_stats()
        again = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o3", **env)
        assert again.returncode == 0, again.stderr
        assert server.requests_total == 0
    with sqlite3.connect(tmp_path / "db") as db:
        grading = [p for (p,) in db.execute("SELECT prompt FROM responses") if "Overarching" in p]
    # One prompt a group, in the data's order: chart 2's answer first, chart 5's last.
    assert (
        sorted(p[:36] for p in grading)
        == ["\nYou will be given 2 pairs of ground"] * 4
        + ["\nYou will be given 5 pairs of ground"] * 4
    )
    (title,) = [p for p in grading if "Response 1: T2 #a" in p]
    assert [title.index(f"T{f} #a") for f in (2, 10, 3, 11, 100)] == sorted(
        title.index(f"T{f} #a") for f in (2, 10, 3, 11, 100)
    )
    assert "T20 #a" not in title and "Ground Truth 5: Title 100\n" in title
    for out in ("o2", "o3"):
        (result,) = json.loads((tmp_path / out / "results.json").read_text())["models"].values()
        calls = result["judge"]["calls"][judge]
        assert (calls["requests"], calls["verdicts"]) == (8, 28)
        assert result["judge"]["decided"] == {"rule": 0, "judge": 23, "unjudged": 5}
        assert result["judge"]["unjudged"] == {"unreadable reply": 5}
        # 15 of the 28 scored 1 (the refused group's five count 0, as get_stats.py's -1).
        assert _metric(result, "charxiv_descriptive_accuracy") == pytest.approx(15 / 28)
        assert _metric(result, "charxiv_descriptive_accuracy_judged_only") == pytest.approx(15 / 23)
        # get_stats.py's By Question: Q2's refused group counts 0, its other two 0 and 1.
        by = result["breakdown"]["template"]
        figures = {q: by[q]["charxiv_descriptive_accuracy"]["value"] for q in by}
        assert figures == pytest.approx({"Q1": 5 / 7, "Q2": 1 / 7, "Q18": 6 / 7, "Q19": 3 / 7})
    assert calls["cached"] == 8


def test_charxiv_descriptive_groups_whose_calls_failed_are_asked_again_exactly(
    tmp_path: Path,
) -> None:
    folder = _charxiv_descriptive_folder(tmp_path)
    env = {"OPENAI_API_KEY": "test-key", "HF_DATASETS_CACHE": str(tmp_path / "hf-cache")}
    with FakeOpenAIServer(reply_table=_CX_TABLE) as answers:
        base = ("run", "-m", f"openai:fake-vlm@{answers.base_url}", "--data",
                f"charxiv-descriptive,path={folder}", "-q", "--db", tmp_path / "db",
                "--bootstrap", "0")  # fmt: skip
        # A judge refusing every call: each group's five answers are unjudged, failed calls.
        with FakeOpenAIServer(always="bad_request") as refusing:
            judge = f"openai:judge@{refusing.base_url},max_attempts=1"
            failed = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o1", **env)
            assert refusing.requests_total == 8
        assert failed.returncode == 1 and "judging_failed" in failed.stderr, failed.stderr
        # The same judge (the same address) answering now: the same command asks the same
        # eight group prompts again, nothing else.
        port = int(refusing.base_url.rsplit(":", 1)[1].split("/")[0])
        with FakeOpenAIServer(reply_table=_CX_TABLE, port=port) as judging:
            answers.reset_stats()
            again = lmmprobe(*base, "--judge", judge, "--out", tmp_path / "o2", **env)
            assert again.returncode == 0, again.stderr
            assert (judging.requests_total, answers.requests_total) == (8, 0)
    (result,) = json.loads((tmp_path / "o2" / "results.json").read_text())["models"].values()
    assert result["judge"]["decided"] == {"rule": 0, "judge": 23, "unjudged": 5}
    assert _metric(result, "charxiv_descriptive_accuracy") == pytest.approx(15 / 28)


def test_a_charxiv_template_out_of_range_says_the_whole_range(tmp_path: Path) -> None:
    # Before: "qid: expected one of [1, 2, 3, 4, 5, 6, 7, 8], got '20'": the first eight of the
    # 19 templates, read as the whole list (15, a valid template, looked refused too).
    root = _charxiv_descriptive_folder(tmp_path)
    doc = json.loads((root / "data" / "descriptive_val.json").read_text(encoding="utf-8"))
    doc["2"]["qids"], doc["2"]["answers"] = [15, 20], ["1", "2"]
    (root / "data" / "descriptive_val.json").write_text(json.dumps(doc), encoding="utf-8")
    proc = lmmprobe(
        "run", "-m", "first", "--data", f"charxiv-descriptive,path={root}", "-q",
        "--db", tmp_path / "db", "--out", tmp_path / "out",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert "descriptive_val.json:2[1]: qid: expected a number from 1 to 19, got '20'" in said
    assert "2[0]" not in said


def test_charxivs_reasoning_grader_named_for_other_data_grades_nothing_and_says_so(
    tmp_path: Path,
) -> None:
    # Before: the grader built its prompt from fields only CharXiv's rows have, and the
    # judging step failed with `KeyError: 'inst_category'`. Now it applies to no answer of
    # other data, as CharXiv's descriptive grader already did: no judge call. A protocol named
    # for data it fits nowhere judged nothing, so the run is not complete (re-test 19, as a
    # judge that fails every call): one line saying what the protocol judges, exit status 1.
    with FakeOpenAIServer(reply_table=[("x", "y")]) as server:
        proc = lmmprobe(
            "run", "-m", "first", "--data", "demo,n=4", "-q", "--db", tmp_path / "db",
            "--out", tmp_path / "out", "--judge", f"openai:judge@{server.base_url}",
            "--judge-protocol", "charxiv-reasoning-grade", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert server.requests_total == 0
    assert proc.returncode == 1, proc.stderr
    assert "KeyError" not in proc.stdout + proc.stderr
    assert "answers judged (none applied)" in proc.stdout
    assert "--judge-protocol charxiv-reasoning-grade applies to none of the run's 4 answer(s)" in (
        proc.stderr
    )
    status = json.loads((tmp_path / "out" / "results.json").read_text())["status"]
    assert status == "judging_failed"


@pytest.mark.parametrize("data", ["charxiv-reasoning", "charxiv-descriptive"])
def test_a_charxiv_entry_that_is_not_an_object_is_named_so(tmp_path: Path, data: str) -> None:
    # Before: "figure_id: expected a chart number, got 'None'" for an entry that is a list.
    if data == "charxiv-reasoning":
        root, name = _charxiv_folder(tmp_path), "reasoning_val.json"
    else:
        root, name = _charxiv_descriptive_folder(tmp_path), "descriptive_val.json"
    doc = json.loads((root / "data" / name).read_text(encoding="utf-8"))
    doc["2"] = [1, 2]
    (root / "data" / name).write_text(json.dumps(doc), encoding="utf-8")
    proc = lmmprobe(
        "run", "-m", "first", "--data", f"{data},path={root}", "-q",
        "--db", tmp_path / "db", "--out", tmp_path / "out",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert f"{name}:2: (entry): expected an object, got list" in said
    assert "chart number" not in said
