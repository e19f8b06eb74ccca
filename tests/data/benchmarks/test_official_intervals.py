"""Every official metric reports the bootstrap interval every other metric has.

The fixtures hold the published schemas (as `test_standard_choice` builds them: MMMU, MME,
MathVista), are loaded by name through the real loader and run end to end with a scripted
model; each point value is checked by hand, its interval by its bounds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.metrics.run_metric import compute_metrics
from lmmprobe.schema import RunSpec, Score

SCRIPT = scripted_model("intervals-scripted")
MODEL = SCRIPT.name
IMG = Image()
REPLIES = SCRIPT.replies


pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((10 * i % 255, 80, 160)), "path": f"{i}.png"}


def _metrics(tmp_path: Path, data: str, replies: dict[str, str]) -> dict[str, Any]:
    REPLIES.clear()
    REPLIES.update(replies)
    ev = evaluate(
        models=[MODEL], data=data, db=str(tmp_path / "db"), out=str(tmp_path / "out"), bootstrap=400
    )
    return dict(ev.results.models[MODEL].metrics)


def _interval(tmp_path: Path, data: str, replies: dict[str, str], metric: str) -> Any:
    return _metrics(tmp_path, data, replies)[metric]


def _mme_folder(tmp_path: Path) -> Path:
    rows = {
        "question_id": ["existence/1.png", "existence/1.png", "existence/2.png", "existence/2.png",
                        "existence/3.png", "existence/3.png"],
        "image": [_img(i) for i in range(6)],
        "question": [f"Is it {t}? Please answer yes or no. #{t}" for t in "abcdef"],
        "answer": ["Yes", "No", "Yes", "No", "Yes", "No"],
        "category": ["existence"] * 6,
    }  # fmt: skip
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    return write_hub_snapshot(tmp_path / "mme", {"test": Dataset.from_dict(rows, features=feats)})


def test_mme_score_has_an_interval_over_images(tmp_path: Path) -> None:
    replies = {"a": "Yes", "b": "No", "c": "yes", "d": "Yes", "e": "no", "f": "yes"}
    got = _interval(tmp_path, f"mme,path={_mme_folder(tmp_path)}", replies, "mme_perception")
    # 3/6 right, 1/3 images fully right: (0.5 + 1/3) x 100, as without resampling.
    assert got.value == pytest.approx(250 / 3) and got.n == 6
    assert got.low is not None and got.high is not None
    # Images are drawn whole: the best resample is image 1 alone (200), the worst image 3
    # alone (0); both ends lie inside those bounds.
    assert 0 <= got.low < got.value < got.high <= 200


def test_mmmu_accuracy_has_an_interval(tmp_path: Path) -> None:
    n = 4
    rows: dict[str, list[Any]] = {
        "id": [f"validation_Art_{i}" for i in range(1, n + 1)],
        "question": [f"<image 1> Which style? #{t}" for t in "abcd"],
        "options": ["['oil', 'ink', 'fresco']"] * n,
        "explanation": [""] * n,
        "image_1": [_img(i) for i in range(n)],
        **{f"image_{k}": [None] * n for k in range(2, 8)},
        "img_type": ["['Paintings']"] * n,
        "answer": ["B"] * n,
        "topic_difficulty": ["Easy"] * n,
        "question_type": ["multiple-choice"] * n,
        "subfield": ["Art History"] * n,
    }
    feats = Features({k: (IMG if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    replies = {"a": "(B)", "b": "(A)", "c": "I think (B)", "d": "hmm"}
    got = _interval(tmp_path, f"mmmu,path={folder}", replies, "mmmu_accuracy")
    assert got.value == pytest.approx(0.5) and got.n == 4
    assert got.low is not None and got.high is not None
    assert 0 <= got.low < 0.5 < got.high <= 1


def test_mathvista_accuracy_has_an_interval(tmp_path: Path) -> None:
    n = 4
    rows: dict[str, list[Any]] = {
        "pid": [str(i) for i in range(n)],
        "question": [f"How many? #{t}" for t in "abcd"],
        "image": [f"images/{i}.jpg" for i in range(n)],
        "decoded_image": [_img(i) for i in range(n)],
        "choices": [None] * n,
        "unit": [None] * n,
        "precision": [None] * n,
        "answer": ["7"] * n,
        "question_type": ["free_form"] * n,
        "answer_type": ["integer"] * n,
        "query": [f"Hint: integer.\nQuestion: How many? #{t}" for t in "abcd"],
    }
    feats = Features(
        {k: (IMG if k == "decoded_image" else Value("string")) for k in rows}
        | {"choices": Value("string"), "precision": Value("float64")}
    )
    folder = write_hub_snapshot(
        tmp_path / "mv", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    replies = {"a": "7", "b": "7", "c": "7", "d": "eight"}
    got = _interval(tmp_path, f"mathvista,path={folder}", replies, "mathvista_accuracy")
    assert got.value == pytest.approx(0.75) and got.n == 4
    assert got.low is not None and got.high is not None
    assert 0 <= got.low < 0.75 <= got.high <= 1


def test_pope_scores_have_intervals(tmp_path: Path) -> None:
    n = 8
    rows = {
        "id": [str(i) for i in range(n)],
        "question_id": [str(i) for i in range(n)],
        "question": [f"Is there a thing in the image? #{t}" for t in "abcdefgh"],
        "answer": ["yes", "yes", "no", "no", "yes", "no", "yes", "no"],
        "image_source": ["COCO_val2014_1"] * n,
        "image": [_img(i) for i in range(n)],
        "category": ["adversarial"] * n,
    }
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "pope", {"test": Dataset.from_dict(rows, features=feats)}
    )
    # read: yes, no, yes, no, yes, no, yes, yes -> TP 3, FN 1, FP 2, TN 2
    replies = dict(
        zip("abcdefgh", ["Yes", "No", "Yes", "No", "Yes", "No", "Yes", "Yes"], strict=True)
    )
    metrics = _metrics(tmp_path, f"pope,path={folder}", replies)
    assert metrics["pope_accuracy"].value == pytest.approx(5 / 8)
    assert metrics["pope_f1"].value == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    for name in ("pope_f1", "pope_accuracy", "pope_precision", "pope_recall", "pope_yes_ratio"):
        got = metrics[name]
        assert got.low is not None and got.high is not None, name
        assert 0 <= got.low <= got.value <= got.high <= 1, name


def test_hallusionbench_accuracies_have_intervals_over_question_sets(tmp_path: Path) -> None:
    # Three VD sets of two figures x one question: set 0 all right, set 1 half, set 2 none.
    n = 6
    rows = {
        "category": ["VD"] * n,
        "subcategory": ["illusion"] * n,
        "visual_input": ["1"] * n,
        "set_id": ["0", "0", "1", "1", "2", "2"],
        "figure_id": ["0", "1"] * 3,
        "sample_note": ["circle"] * n,
        "question_id": ["0"] * n,
        "question": [f"Is the left circle bigger? #{t}" for t in "abcdef"],
        "gt_answer_details": ["details"] * n,
        "gt_answer": ["1", "0"] * 3,
        "filename": ["VD/illusion/0_0.png"] * n,
        "image": [_img(i) for i in range(n)],
    }
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(tmp_path / "hb", {"image": Dataset.from_dict(rows, features=feats)})
    replies = {"a": "Yes", "b": "No", "c": "Yes", "d": "Yes", "e": "No", "f": "Yes"}
    got = _interval(tmp_path, f"hallusionbench,path={folder}", replies, "hallusionbench_aacc")
    assert got.value == pytest.approx(3 / 6) and got.n == 6
    assert got.low is not None and got.high is not None
    assert 0 <= got.low < 0.5 < got.high <= 1


def test_a_row_stored_before_the_typed_tag_is_scored_by_its_official_metric() -> None:
    # A stored row keeps its sample's metadata: rows written before held the whole stamp.
    legacy = {"benchmark": "textvqa", "metric": "vqa_accuracy_evalai", "split": "validation",
              "prompt_style": "benchmark", "prompt_template": "{question}", "option_format":
              "{mark}. {text}", "option_sep": "\n", "context_format": "{context}\n"}  # fmt: skip
    rows = [
        Score(model="m", sample_id=f"textvqa/{i}", repeat=0, key=f"k{i}", stage="match",
              prediction_text=text, correct=None, gold=["cat"] * 10, gold_text="cat",
              metadata=legacy)
        for i, text in enumerate([" cat\n", "dog", "Cat."])
    ]  # fmt: skip
    got = compute_metrics(rows, RunSpec(bootstrap=200))["vqa_accuracy_evalai"]
    assert got.value == pytest.approx(2 / 3) and got.n == 3
    assert got.low is not None and got.high is not None
