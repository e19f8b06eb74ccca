"""Mantis-Eval by name: Mantis's own prompt, reading and accuracies, its images in order.

Parity: ``mantis_parity/`` holds questions in Mantis's local layout and the answers scored
(``make_inputs.py``), and what TIGER-AI-Lab/Mantis ``mantis/benchmark/eval.py`` itself sent and
computed on them (``expected.json``, by ``make_expected.py``: the text and images of each
question, each answer's correctness, the Overall, Multi-choice and Short-answer accuracies).
The test writes the questions as the Hub lays out TIGER-Lab/Mantis-Eval (``mantis_eval/``
parquet) and runs the benchmark end to end with a model giving those answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import PIL.Image
import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.data.benchmarks.conftest import scripted_model, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.formulate import formulate
from lmmprobe.metrics.mantis import mantis_correct

HERE = Path(__file__).parent / "mantis_parity"
ROWS = json.loads((HERE / "dataset.json").read_text(encoding="utf-8"))
ANSWERS = json.loads((HERE / "answers.json").read_text(encoding="utf-8"))
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
SCRIPT = scripted_model("mantis-scripted")

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

FEATURES = Features({
    "id": Value("string"), "question_type": Value("string"), "question": Value("string"),
    "images": Seq(Image()), "options": Seq(Value("string")), "answer": Value("string"),
    "category": Value("string"), "data_source": Value("string"),
})  # fmt: skip


def _snapshot(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    table: dict[str, list[Any]] = {k: [] for k in FEATURES}
    for row in rows:
        for k in FEATURES:
            value = row[k]
            if k == "images":
                value = [{"bytes": (HERE / p).read_bytes(), "path": None} for p in value]
            table[k].append(value)
    ds = Dataset.from_dict(table, features=FEATURES)
    return write_hub_snapshot(tmp_path / "mantis", {"test": ds}, config="mantis_eval")


def test_it_is_registered_multi_image_with_its_pinned_copy() -> None:
    b = BENCHMARKS.get("mantis-eval")
    assert (b.metric, b.split, b.size, b.config) == ("mantis_accuracy", "test", 217, "mantis_eval")
    assert b.hub_id == "TIGER-Lab/Mantis-Eval" and b.revision and len(b.revision) == 40
    assert "multi-image" in b.groups and "eval.py" in b.prompt.source


def test_scores_equal_mantis_own_eval(tmp_path: Path) -> None:
    folder = _snapshot(tmp_path, ROWS)
    SCRIPT.replies.clear()
    SCRIPT.replies.update(ANSWERS)
    SCRIPT.prompts.clear()
    ev = evaluate(models=[SCRIPT.name], data=f"mantis-eval,path={folder}", db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, by=["question_type"])  # fmt: skip
    m = ev.results.models[SCRIPT.name]
    figures = EXPECTED["figures"]
    assert m.metrics["mantis_accuracy"].value == pytest.approx(figures["Overall"], abs=1e-12)
    assert m.metrics["mantis_accuracy"].n == len(ROWS)
    by_type = {k: v["mantis_accuracy"].value for k, v in m.breakdown["question_type"].items()}
    assert by_type == pytest.approx(
        {k: figures[k] for k in ("multi-choice", "short-answer")}, abs=1e-12
    )
    # The text eval.py sent with the images first, for every question.
    for row in ROWS:
        tag = row["question"].rsplit("#", 1)[1]
        assert SCRIPT.prompts[tag] == EXPECTED["rows"][row["id"]]["text"]


def test_each_answer_reads_as_mantis_get_prediction_reads_it() -> None:
    for row in ROWS:
        tag = row["question"].rsplit("#", 1)[1]
        got = mantis_correct(row["question_type"], ANSWERS[tag], row["answer"], row["options"])
        assert got == EXPECTED["rows"][row["id"]]["correct"], (row["id"], ANSWERS[tag])


def test_a_questions_images_come_in_order(tmp_path: Path) -> None:
    samples = {s.id.split("/")[-1]: s for s in load_source(
        f"mantis-eval,path={_snapshot(tmp_path, ROWS)}").samples}  # fmt: skip
    for row in ROWS:
        names = EXPECTED["rows"][row["id"]]["images"]
        sent = [PIL.Image.open(HERE / "images" / n).convert("RGB").tobytes() for n in names]
        request = formulate(samples[row["id"]])
        assert [i.load().convert("RGB").tobytes() for i in samples[row["id"]].images] == sent
        assert request.prompt == EXPECTED["rows"][row["id"]]["text"]


def test_bad_rows_are_named_and_the_rest_load(tmp_path: Path) -> None:
    bad_type = {**ROWS[0], "id": "bad_type", "question_type": "essay"}
    bad_answer = {**ROWS[0], "id": "bad_answer", "answer": "(12)"}
    result = load_source(f"mantis-eval,path={_snapshot(tmp_path, [bad_type, bad_answer, ROWS[1]])}")
    assert [s.id.split("/")[-1] for s in result.samples] == [ROWS[1]["id"]]
    problems = "\n".join(str(p) for p in result.problems)
    assert "question_type" in problems and "expected multi-choice or short-answer" in problems
    assert "'(12)' holds no single option letter" in problems


def test_a_letter_whose_upper_case_is_two_letters_is_no_option() -> None:
    # get_prediction raises there (ord of 'SS') and stops the run; lmmprobe reads no option.
    assert mantis_correct("multi-choice", "ßo B", "B", ["x", "y"]) is False
    assert mantis_correct("multi-choice", "ßo", "A", ["ßo", "y"]) is True


@settings(max_examples=300, deadline=None)
@given(
    raw=st.text(max_size=500) | st.sampled_from(["answer:" * 20_000, "A" * 100_000]),
    answer=st.sampled_from(["A", "(B)", "C", "yes", "3"]),
    qtype=st.sampled_from(["multi-choice", "short-answer"]),
)
def test_any_answer_is_right_or_wrong_never_a_crash(raw: str, answer: str, qtype: str) -> None:
    if qtype == "multi-choice" and answer in ("yes", "3"):
        answer = "A"
    assert mantis_correct(qtype, raw, answer, ["red", "B. blue", "(C) green"]) in (True, False)
