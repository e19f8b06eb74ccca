"""The multiple-choice and yes/no benchmarks, each on a fixture in its published schema.

Every fixture is built here with `datasets` (column names and types, ``Image`` columns stored
as the Hub stores them, the answer format of the card) in the Hub's file layout, then run end
to end through `lmmprobe.api.evaluate` with a scripted model (an external-model stand-in that
replies by a tag in the question), and the official metric is checked against a value
computed by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.data.benchmarks.conftest import (
    MATHVISTA_META,
    MATHVISTA_META_ROW,
    scripted_model,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.api import evaluate
from lmmprobe.data.base import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS

SCRIPT = scripted_model("e1-scripted")
MODEL = SCRIPT.name
REPLIES = SCRIPT.replies
PROMPTS = SCRIPT.prompts


pytestmark = pytest.mark.usefixtures("own_datasets_cache")


IMG = Image()


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((10 * i % 255, 80, 160)), "path": f"{i}.png"}


def _evaluate(tmp_path: Path, data: str, replies: dict[str, str], **spec: Any) -> Any:
    REPLIES.clear()
    REPLIES.update(replies)
    PROMPTS.clear()
    return evaluate(
        models=[MODEL],
        data=data,
        db=str(tmp_path / "db"),
        out=str(tmp_path / "out"),
        bootstrap=0,
        **spec,
    )


def _run(tmp_path: Path, name: str, folder: Path, replies: dict[str, str]) -> dict[str, Any]:
    ev = _evaluate(tmp_path, f"{name},path={folder}", replies)
    return {k: v.value for k, v in ev.results.models[MODEL].metrics.items()}


def test_all_eleven_are_registered_with_their_metric() -> None:
    names = {"mmbench", "mmmu", "mme", "pope", "seedbench", "scienceqa-img", "ai2d", "mmstar",
             "realworldqa", "hallusionbench", "mathvista"}  # fmt: skip
    assert names <= set(BENCHMARKS.names())
    assert BENCHMARKS.get("mmbench").metric == "mmbench_circular"
    assert BENCHMARKS.get("mme").metric == "mme_perception"


# --------------------------------------------------------------------------- MMBench


def test_mmbench_circular_eval_over_the_published_copies(tmp_path: Path) -> None:
    # Question 1 (two copies, both right) and question 2 (two copies, one wrong).
    rows = {
        "index": ["1", "1000001", "2", "1000002"],
        "question": ["What colour? #a", "What colour? #b", "Which shape? #c", "Which shape? #d"],
        "hint": ["A hint.", "A hint.", "nan", "nan"],
        "answer": ["A", "B", "B", "A"],
        "A": ["red", "blue", "round", "square"],
        "B": ["blue", "red", "square", "round"],
        "C": [None, None, None, None],
        "D": [None, None, None, None],
        "category": ["color", "color", "shape", "shape"],
        "image": [_img(i) for i in range(4)],
        "source": ["s"] * 4,
        "L2-category": ["perception"] * 4,
        "comment": [None] * 4,
        "split": ["dev"] * 4,
    }
    feats = Features({k: Value("string") for k in rows if k != "image"} | {"image": IMG})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(rows, features=feats)}, config="en"
    )
    m = _run(tmp_path, "mmbench", folder, {"a": "A", "b": "B", "c": "B", "d": "B"})
    assert m["mmbench_circular"] == pytest.approx(0.5)
    assert m["accuracy"] == pytest.approx(0.75)
    assert PROMPTS["a"] == (
        "A hint. What colour? #a There are several options:\nA. red\nB. blue\n\n"
        "Answer with the option's letter from the given choices directly."
    )
    assert PROMPTS["c"].startswith("Which shape? #c There are several options:")


# --------------------------------------------------------------------------- MMMU


def test_mmmu_reading_and_prompt(tmp_path: Path) -> None:
    n = 3
    rows: dict[str, list[Any]] = {
        "id": [f"validation_Art_{i}" for i in range(1, n + 1)],
        "question": [
            "<image 1> Which style? #a",
            "Compare <image 2> and <image 1>. #b",
            "How many? #c",
        ],
        "options": ["['oil', 'ink', 'fresco']", "['left', 'right']", "[]"],
        "explanation": ["", "", ""],
        "image_1": [_img(1), _img(2), _img(3)],
        "image_2": [None, _img(4), None],
        **{f"image_{k}": [None] * n for k in range(3, 8)},
        "img_type": ["['Paintings']"] * n,
        "answer": ["B", "A", "12"],
        "topic_difficulty": ["Easy"] * n,
        "question_type": ["multiple-choice", "multiple-choice", "open"],
        "subfield": ["Art History"] * n,
    }
    feats = Features({k: (IMG if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    # a: "(B)" read as B (right); b: nothing readable (MMMU would guess; lmmprobe: wrong);
    # c: "the total is 12" read as the number 12 (right).
    m = _run(tmp_path, "mmmu", folder, {"a": "I think (B)", "b": "hmm", "c": "So the total is 12."})
    assert m["mmmu_accuracy"] == pytest.approx(2 / 3)
    assert PROMPTS["a"] == (
        "<image 1> Which style? #a\nA. oil\nB. ink\nC. fresco\n\n"
        "Answer with the option's letter from the given choices directly."
    )
    assert PROMPTS["c"] == "How many? #c\n\nAnswer the question using a single word or phrase."


# --------------------------------------------------------------------------- MME


def test_mme_scores_with_acc_plus(tmp_path: Path) -> None:
    rows = {
        "question_id": ["existence/1.png", "existence/1.png", "existence/2.png", "existence/2.png",
                        "code_reasoning/1.png", "code_reasoning/1.png"],
        "image": [_img(i) for i in range(6)],
        "question": [f"Is it {t}? Please answer yes or no. #{t}" for t in "abcdef"],
        "answer": ["Yes", "No", "Yes", "No", "Yes", "No"],
        "category": ["existence"] * 4 + ["code_reasoning"] * 2,
    }  # fmt: skip
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(tmp_path / "mme", {"test": Dataset.from_dict(rows, features=feats)})
    replies = {
        "a": "Yes",
        "b": "No, there is not.",
        "c": "yes",
        "d": "Yes",
        "e": "maybe",
        "f": "no",
    }
    ev = _evaluate(tmp_path, f"mme,path={folder}", replies, by=["category"])
    m = ev.results.models[MODEL]
    # existence: 3/4 right, 1/2 images fully right -> 75 + 50; code: 1/2, 0/1 -> 50 + 0.
    assert m.metrics["mme_perception"].value == pytest.approx(125.0)
    assert m.metrics["mme_cognition"].value == pytest.approx(50.0)
    # --by category gives each subtask's own score.
    groups = m.breakdown["category"]
    assert groups["existence"]["mme_perception"].value == pytest.approx(125.0)
    assert "mme_cognition" not in groups["existence"]
    assert groups["code_reasoning"]["mme_cognition"].value == pytest.approx(50.0)
    assert PROMPTS["a"] == "Is it a? Please answer yes or no. #a"


def test_mme_acc_plus_pairs_questions_within_a_repeat(tmp_path: Path) -> None:
    # One image, two questions, both right on every repeat: acc+ is 1, not a 4-row "pair".
    rows = {
        "question_id": ["existence/1.png", "existence/1.png"],
        "image": [_img(1), _img(2)],
        "question": ["Is there a cat? Please answer yes or no. #a",
                     "Is there a dog? Please answer yes or no. #b"],
        "answer": ["Yes", "No"],
        "category": ["existence", "existence"],
    }  # fmt: skip
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(tmp_path / "mme", {"test": Dataset.from_dict(rows, features=feats)})
    ev = _evaluate(tmp_path, f"mme,path={folder}", {"a": "Yes", "b": "No"}, repeats=2)
    assert ev.results.models[MODEL].metrics["mme_perception"].value == pytest.approx(200.0)


# --------------------------------------------------------------------------- POPE


def test_pope_f1_precision_recall_yes_ratio(tmp_path: Path) -> None:
    rows = {
        "id": ["0", "1", "2", "3", "4"],
        "question_id": ["1", "2", "3", "4", "5"],
        "question": [f"Is there a {t} in the image? #{t}" for t in "abcde"],
        "answer": ["yes", "yes", "no", "no", "yes"],
        "image_source": ["COCO_val2014_1"] * 5,
        "image": [_img(i) for i in range(5)],
        "category": ["adversarial"] * 5,
    }
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "pope", {"test": Dataset.from_dict(rows, features=feats)}
    )
    replies = {
        "a": "Yes.",
        "b": "There is not a dog.",
        "c": "Yes, there is.",
        "d": "No",
        "e": "I see one",
    }
    m = _run(tmp_path, "pope", folder, replies)
    # read: yes, no, yes, no, yes -> TP 2, FN 1, FP 1, TN 1
    assert m["pope_accuracy"] == pytest.approx(3 / 5)
    assert m["pope_precision"] == pytest.approx(2 / 3)
    assert m["pope_recall"] == pytest.approx(2 / 3)
    assert m["pope_f1"] == pytest.approx(2 / 3)
    assert m["pope_yes_ratio"] == pytest.approx(3 / 5)
    assert (
        PROMPTS["a"]
        == "Is there a a in the image? #a\nAnswer the question using a single word or phrase."
    )


# --------------------------------------------------------------------------- SEED-Bench


def test_seedbench_image_rows_only(tmp_path: Path) -> None:
    rows = {
        "answer": ["A", "C", "B"],
        "choice_a": ["cat", "one", "x"],
        "choice_b": ["dog", "two", "y"],
        "choice_c": ["cow", "three", "z"],
        "choice_d": ["pig", "four", "w"],
        "data_id": ["1.jpg", "2.jpg", "v.mp4"],
        "data_type": ["image", "image", "video"],
        "question": ["Which animal? #a", "How many? #b", "What happens? #c"],
        "question_id": ["101", "102", "103"],
        "question_type_id": [1, 2, 10],
        "image": [[_img(1)], [_img(2)], [_img(3), _img(4)]],
        "segment": [None, None, "[0, 5]"],
    }
    feats = Features(
        {k: Value("string") for k in rows if k not in ("image", "question_type_id")}
        | {"question_type_id": Value("int16"), "image": Seq(IMG)}
    )
    folder = write_hub_snapshot(
        tmp_path / "seed", {"test": Dataset.from_dict(rows, features=feats)}
    )
    m = _run(tmp_path, "seedbench", folder, {"a": "A", "b": "B"})
    assert m["accuracy"] == pytest.approx(1 / 2)
    assert PROMPTS["a"] == (
        "Which animal? #a\nA. cat\nB. dog\nC. cow\nD. pig\n"
        "Answer with the option's letter from the given choices directly."
    )
    assert "c" not in PROMPTS  # the video question is not asked


# --------------------------------------------------------------------------- ScienceQA-IMG


def test_scienceqa_img_context_prompt(tmp_path: Path) -> None:
    rows = {
        "image": [_img(1), _img(2)],
        "question": ["Which is a mammal? #a", "Which is hotter? #b"],
        "choices": [["frog", "whale"], ["ice", "fire", "snow"]],
        "answer": [1, 0],
        "hint": ["Look at the picture.", ""],
        **{
            k: ["x", "y"]
            for k in (
                "task",
                "grade",
                "subject",
                "topic",
                "category",
                "skill",
                "lecture",
                "solution",
            )
        },
    }
    feats = Features(
        {
            "image": IMG,
            "question": Value("string"),
            "choices": Seq(Value("string")),
            "answer": Value("int8"),
        }
        | {k: Value("string") for k in rows if k not in ("image", "question", "choices", "answer")}
    )
    folder = write_hub_snapshot(
        tmp_path / "sqa", {"test": Dataset.from_dict(rows, features=feats)}, config="ScienceQA-IMG"
    )
    m = _run(tmp_path, "scienceqa-img", folder, {"a": "B", "b": "C"})
    assert m["accuracy"] == pytest.approx(1 / 2)
    assert PROMPTS["a"] == (
        "Context: Look at the picture.\nWhich is a mammal? #a\nA. frog\nB. whale\n"
        "Answer with the option's letter from the given choices directly."
    )
    assert PROMPTS["b"].startswith("Which is hotter? #b\nA. ice")


# --------------------------------------------------------------------------- AI2D


def test_ai2d_index_answers(tmp_path: Path) -> None:
    rows = {
        "question": ["What eats grass? #a", "What is the sun? #b"],
        "options": [["deer", "hawk", "fox", "owl"], ["star", "planet"]],
        "answer": ["0", "0"],
        "image": [_img(1), _img(2)],
    }
    feats = Features({"question": Value("string"), "options": Seq(Value("string")),
                      "answer": Value("string"), "image": IMG})  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "ai2d", {"test": Dataset.from_dict(rows, features=feats)}
    )
    m = _run(tmp_path, "ai2d", folder, {"a": "A", "b": "B"})
    assert m["accuracy"] == pytest.approx(1 / 2)
    assert PROMPTS["b"] == (
        "What is the sun? #b\nA. star\nB. planet\n"
        "Answer with the option's letter from the given choices directly."
    )


# --------------------------------------------------------------------------- MMStar


MMSTAR_Q = ("Where is the cup? #a\nOptions: A: on the table, B: under the chair, "
            "C: in the sink, D: on the shelf")  # fmt: skip


def _mmstar_folder(tmp_path: Path) -> Path:
    rows = {
        "index": [0, 1],
        "question": [MMSTAR_Q, "Count? #b\nOptions: A: 1, B: 2, C: 3, D: 4"],
        "image": [_img(1), _img(2)],
        "answer": ["C", "D"],
        "category": ["coarse perception", "math"],
        "l2_category": ["image scene and topic", "numeric commonsense and calculation"],
        "meta_info": [{"source": "SEEDBench", "split": "val", "image_path": "1.jpg"}] * 2,
    }
    feats = Features({
        "index": Value("int64"), "question": Value("string"), "image": IMG,
        "answer": Value("string"), "category": Value("string"), "l2_category": Value("string"),
        "meta_info": {"source": Value("string"), "split": Value("string"), "image_path": Value("string")},
    })  # fmt: skip
    folder = tmp_path / "mmstar"
    folder.mkdir()
    Dataset.from_dict(rows, features=feats).to_parquet(str(folder / "mmstar.parquet"))
    # Lin-Chen/MMStar keeps one parquet file at the root; its card's configs name it split val.
    card = "---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n    path: mmstar.parquet\n---\n"
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def test_mmstar_options_inside_the_question(tmp_path: Path) -> None:
    m = _run(tmp_path, "mmstar", _mmstar_folder(tmp_path), {"a": "C", "b": "The answer is A"})
    assert m["accuracy"] == pytest.approx(1 / 2)
    assert (
        PROMPTS["a"]
        == MMSTAR_Q + "\nAnswer with the option's letter from the given choices directly"
    )


@pytest.mark.parametrize(
    "settings",
    [{}, {"formulate": {"option_marks": "lower"}}, {"formulate": {"option_marks": "random"}}],
)
def test_mmstar_letters_keep_their_options_under_repeats(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    # The question text fixes the letters: shuffled repeats or other marks must not make the
    # matcher read the model's (right) letter as another option.
    folder = _mmstar_folder(tmp_path)
    ev = _evaluate(tmp_path, f"mmstar,path={folder}", {"a": "C", "b": "D"}, repeats=3, **settings)
    assert ev.results.models[MODEL].metrics["accuracy"].value == pytest.approx(1.0)


def test_mmstar_under_circular_asks_the_published_order(tmp_path: Path) -> None:
    folder = _mmstar_folder(tmp_path)
    ev = _evaluate(
        tmp_path, f"mmstar,path={folder}", {"a": "C", "b": "D"}, formulate={"circular": True}
    )
    assert ev.results.models[MODEL].metrics["accuracy"].value == pytest.approx(1.0)


# --------------------------------------------------------------------------- RealWorldQA


RWQA_TAIL = "Please answer directly with only the letter of the correct option and nothing else."


def _rwqa_folder(tmp_path: Path) -> Path:
    rows = {
        "image": [_img(1), _img(2)],
        "question": [f"Which way? #a\nA. Left\nB. Right\nC. Straight\n\n{RWQA_TAIL}",
                     "How many cars? #b\nPlease answer directly with a single word or number."],
        "answer": ["B", "3"],
    }  # fmt: skip
    feats = Features({"image": IMG, "question": Value("string"), "answer": Value("string")})
    return write_hub_snapshot(tmp_path / "rwqa", {"test": Dataset.from_dict(rows, features=feats)})


def test_realworldqa_letter_and_open_answers(tmp_path: Path) -> None:
    m = _run(tmp_path, "realworldqa", _rwqa_folder(tmp_path), {"a": "B", "b": "3"})
    assert m["accuracy"] == pytest.approx(1.0)
    assert PROMPTS["a"] == f"Which way? #a\nA. Left\nB. Right\nC. Straight\n\n{RWQA_TAIL}"


def test_realworldqa_letters_keep_their_options_under_repeats(tmp_path: Path) -> None:
    folder = _rwqa_folder(tmp_path)
    ev = _evaluate(
        tmp_path,
        f"realworldqa,path={folder}",
        {"a": "B", "b": "3"},
        repeats=3,
        formulate={"option_marks": "number"},
    )
    assert ev.results.models[MODEL].metrics["accuracy"].value == pytest.approx(1.0)


# --------------------------------------------------------------------------- HallusionBench


def test_hallusionbench_question_figure_pair_accuracies(tmp_path: Path) -> None:
    # One VD set, rows a..d: (figure 0, q 0), (figure 1, q 0), (figure 0, q 1), (figure 1, q 1).
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
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(tmp_path / "hb", {"image": Dataset.from_dict(rows, features=feats)})
    # a right, b right, c wrong, d unclear -> aAcc 2/4; figure 0 (a, c) and figure 1 (b, d)
    # each have a miss -> fAcc 0/2; question 0 (a, b) right on both figures -> qAcc 1/2.
    replies = {"a": "Yes, it is.", "b": "No.", "c": "Yes", "d": "It is hard to say"}
    m = _run(tmp_path, "hallusionbench", folder, replies)
    assert m["hallusionbench_aacc"] == pytest.approx(2 / 4)
    assert m["hallusionbench_facc"] == pytest.approx(0.0)
    assert m["hallusionbench_qacc"] == pytest.approx(1 / 2)
    assert PROMPTS["a"] == "Is the left circle bigger? #a"


def test_hallusionbench_non_image_split_has_no_images(tmp_path: Path) -> None:
    # Visual-supplement questions asked without their figure: "unclear" counts as right.
    rows = {
        "category": ["VS", "VS"],
        "subcategory": ["map", "map"],
        "visual_input": ["0", "0"],
        "set_id": ["0", "1"],
        "figure_id": ["0", "0"],
        "sample_note": ["", ""],
        "question_id": ["0", "0"],
        "question": ["Is Paris in France? #a", "Is Rome in Spain? #b"],
        "gt_answer_details": ["", ""],
        "gt_answer": ["1", "0"],
        "filename": [None, None],
        "image": [None, None],
    }
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "hb", {"non_image": Dataset.from_dict(rows, features=feats)}
    )
    replies = {"a": "Hard to say", "b": "Yes"}
    ev = _evaluate(tmp_path, f"hallusionbench,path={folder},split=non_image", replies)
    m = {k: v.value for k, v in ev.results.models[MODEL].metrics.items()}
    assert m["hallusionbench_aacc"] == pytest.approx(1 / 2)
    assert m.get("hallusionbench_facc") is None  # no question has a figure


def _hallusion_vd_folder(tmp_path: Path) -> Path:
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
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    return write_hub_snapshot(tmp_path / "hb", {"image": Dataset.from_dict(rows, features=feats)})


def test_hallusionbench_with_repeats_scores_each_repeat(tmp_path: Path) -> None:
    folder = _hallusion_vd_folder(tmp_path)
    replies = {"a": "Yes, it is.", "b": "No.", "c": "Yes", "d": "It is hard to say"}
    ev = _evaluate(tmp_path, f"hallusionbench,path={folder}", replies, repeats=2)
    m = ev.results.models[MODEL].metrics
    # The same answers on both repeats: each repeat's accuracies, averaged, are one run's.
    assert m["hallusionbench_aacc"].value == pytest.approx(2 / 4)
    assert m["hallusionbench_aacc"].n == 8
    assert m["hallusionbench_facc"].value == pytest.approx(0.0)
    assert m["hallusionbench_qacc"].value == pytest.approx(1 / 2)


def test_hallusionbench_only_stated_uncertainty_is_unclear(tmp_path: Path) -> None:
    # Visual-supplement questions without their figure: "I cannot tell" is right (the judge's
    # "unclear"), an answer saying neither yes nor no is unread and wrong.
    n = 4
    rows = {
        "category": ["VS"] * n,
        "subcategory": ["map"] * n,
        "visual_input": ["0"] * n,
        "set_id": [str(i) for i in range(n)],
        "figure_id": ["0"] * n,
        "sample_note": [""] * n,
        "question_id": ["0"] * n,
        "question": [f"Is the city on the coast? #{t}" for t in "abcd"],
        "gt_answer_details": [""] * n,
        "gt_answer": ["1"] * n,
        "filename": [None] * n,
        "image": [None] * n,
    }
    feats = Features({k: (IMG if k == "image" else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "hb", {"non_image": Dataset.from_dict(rows, features=feats)}
    )
    replies = {"a": "I cannot tell without the map.", "b": "blah", "c": "", "d": "I'm not sure."}
    ev = _evaluate(tmp_path, f"hallusionbench,path={folder},split=non_image", replies)
    assert ev.results.models[MODEL].metrics["hallusionbench_aacc"].value == pytest.approx(2 / 4)


# --------------------------------------------------------------------------- MathVista


def test_mathvista_rule_based_reading(tmp_path: Path) -> None:
    query_mc = ("Hint: Please answer the question and provide the correct option letter, e.g., "
                "A, B, C, D, at the end.\nQuestion: Which is larger? #a\nChoices:\n(A) 3\n(B) 5")  # fmt: skip
    rows = {
        "pid": ["1", "2", "3"],
        "question": ["Which is larger? #a", "How many {items}? #b", "What is x? #c"],
        "image": ["images/1.jpg", "images/2.jpg", "images/3.jpg"],
        "decoded_image": [_img(1), _img(2), _img(3)],
        "choices": [["3", "5"], None, None],
        "unit": [None, None, None],
        "precision": [None, None, 1.0],
        "answer": ["5", "7", "2.5"],
        "question_type": ["multi_choice", "free_form", "free_form"],
        "answer_type": ["text", "integer", "float"],
        "metadata": [MATHVISTA_META_ROW] * 3,
        "query": [query_mc, "Hint: integer.\nQuestion: How many {items}? #b",
                  "Hint: float with one decimal.\nQuestion: What is x? #c"],
    }  # fmt: skip
    meta = MATHVISTA_META
    feats = Features({
        "pid": Value("string"), "question": Value("string"), "image": Value("string"),
        "decoded_image": IMG, "choices": Seq(Value("string")), "unit": Value("string"),
        "precision": Value("float64"), "answer": Value("string"), "question_type": Value("string"),
        "answer_type": Value("string"), "metadata": meta, "query": Value("string"),
    })  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mv", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    # a: 'The answer is "B".' -> quick extraction "B" -> choice "5" (right); b: "7" (right);
    # c: prose the rules cannot read (wrong: the official protocol would ask GPT-4).
    replies = {"a": 'The answer is "B".', "b": "7", "c": "x is about 2.5"}
    m = _run(tmp_path, "mathvista", folder, replies)
    assert m["mathvista_accuracy"] == pytest.approx(2 / 3)
    assert PROMPTS["a"] == query_mc
    assert PROMPTS["b"] == "Hint: integer.\nQuestion: How many {items}? #b"


def test_mathvista_letter_replies_read_and_unreadable_ones_wrong(tmp_path: Path) -> None:
    n = 4
    query = ("Hint: Please answer the question and provide the correct option letter, e.g., "
             "A, B, C, D, at the end.\nQuestion: Which is larger? #{t}\nChoices:\n(A) 3\n(B) 5")  # fmt: skip
    rows = {
        "pid": [str(i) for i in range(n)],
        "question": [f"Which is larger? #{t}" for t in "abcd"],
        "image": [f"images/{i}.jpg" for i in range(n)],
        "decoded_image": [_img(i) for i in range(n)],
        "choices": [["3", "5"]] * n,
        "unit": [None] * n,
        "precision": [None] * n,
        # The gold of c and d is the option MathVista's edit-distance fallback would pick.
        "answer": ["5", "5", "3", "3"],
        "question_type": ["multi_choice"] * n,
        "answer_type": ["text"] * n,
        "metadata": [MATHVISTA_META_ROW] * n,
        "query": [query.format(t=t) for t in "abcd"],
    }
    feats = Features({
        "pid": Value("string"), "question": Value("string"), "image": Value("string"),
        "decoded_image": IMG, "choices": Seq(Value("string")), "unit": Value("string"),
        "precision": Value("float64"), "answer": Value("string"), "question_type": Value("string"),
        "answer_type": Value("string"), "metadata": MATHVISTA_META, "query": Value("string"),
    })  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mv", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    # a "B" and b "(B)": read as option 5 (right); c "" and d "blah": unread, wrong.
    m = _run(tmp_path, "mathvista", folder, {"a": "B", "b": "(B)", "c": "", "d": "blah"})
    assert m["mathvista_accuracy"] == pytest.approx(2 / 4)


# --------------------------------------------------------------------------- MMBench limit


def test_mmbench_circular_leaves_out_questions_missing_a_copy(tmp_path: Path) -> None:
    # Question 1 has both copies (right), question 2 only its first (right): CircularEval can
    # judge question 1 only; question 2 alone must not pass as CircularEval.
    rows = {
        "index": ["1", "1000001", "2"],
        "question": ["What colour? #a", "What colour? #b", "Which shape? #c"],
        "hint": ["nan"] * 3,
        "answer": ["A", "B", "B"],
        "A": ["red", "blue", "round"],
        "B": ["blue", "red", "square"],
        "C": [None] * 3,
        "D": [None] * 3,
        "category": ["color", "color", "shape"],
        "image": [_img(i) for i in range(3)],
        "source": ["s"] * 3,
        "L2-category": ["perception"] * 3,
        "comment": [None] * 3,
        "split": ["dev"] * 3,
    }
    feats = Features({k: Value("string") for k in rows if k != "image"} | {"image": IMG})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(rows, features=feats)}, config="en"
    )
    replies = {"a": "A", "b": "B", "c": "B"}
    ev = _evaluate(tmp_path, f"mmbench,path={folder}", replies)
    circ = ev.results.models[MODEL].metrics["mmbench_circular"]
    assert (circ.value, circ.n) == (pytest.approx(1.0), 1)
    # limit=1 keeps one copy of question 1: no question can be judged.
    ev = _evaluate(tmp_path, f"mmbench,path={folder},limit=1", replies)
    assert ev.results.models[MODEL].metrics["mmbench_circular"].value is None
    # With repeats, each repeat is its own pass over the complete question.
    ev = _evaluate(tmp_path, f"mmbench,path={folder}", replies, repeats=2)
    assert ev.results.models[MODEL].metrics["mmbench_circular"].value == pytest.approx(1.0)


# --------------------------------------------------------------------------- bad rows


def test_bad_rows_are_problems_naming_row_and_field(tmp_path: Path) -> None:
    rows = {
        "index": ["1", "2"],
        "question": ["Fine? #a", "Broken? #b"],
        "hint": [None, None],
        "answer": ["A", "E"],  # E names no option
        "A": ["yes", "yes"],
        "B": ["no", "no"],
        "C": [None, None],
        "D": [None, None],
        "category": ["c", "c"],
        "image": [_img(1), _img(2)],
        "source": ["s", "s"],
        "L2-category": ["l", "l"],
        "comment": [None, None],
        "split": ["dev", "dev"],
    }
    feats = Features({k: Value("string") for k in rows if k != "image"} | {"image": IMG})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(rows, features=feats)}, config="en"
    )
    result = load_source(f"mmbench,path={folder}")
    assert [s.id for s in result.samples] == ["mmbench/1"]
    (problem,) = result.problems
    assert problem.field == "answer" and "'E'" in problem.reason
    with pytest.raises(DataError, match="answer"):
        load_source(f"mmbench,path={folder}", strict=True)


def test_mmmu_question_naming_a_missing_image_is_a_problem(tmp_path: Path) -> None:
    rows: dict[str, list[Any]] = {
        "id": ["validation_Art_1"],
        "question": ["Compare <image 1> with <image 2>. #a"],
        "options": ["['same', 'different']"],
        "explanation": [""],
        "image_1": [_img(1)],
        **{f"image_{k}": [None] for k in range(2, 8)},
        "img_type": ["['Paintings']"],
        "answer": ["A"],
        "topic_difficulty": ["Easy"],
        "question_type": ["multiple-choice"],
        "subfield": ["Art History"],
    }
    feats = Features({k: (IMG if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    result = load_source(f"mmmu,path={folder}")
    assert result.samples == []
    assert [(p.field, p.line) for p in result.problems] == [("image_2", 0)]


def test_mmmu_subject_is_every_word_between_split_and_number(tmp_path: Path) -> None:
    # A breakdown --by subject keeps Art_Theory apart from Art, and Basic_Medical_Science
    # whole, as lmms-eval's extract_subset_name and MMMU's subject folders name them.
    ids = ["validation_Art_1", "validation_Art_Theory_2", "validation_Basic_Medical_Science_3"]
    n = len(ids)
    rows: dict[str, list[Any]] = {
        "id": ids,
        "question": ["Which? #a"] * n,
        "options": ["['x', 'y']"] * n,
        "explanation": [""] * n,
        **{f"image_{k}": [None] * n for k in range(1, 8)},
        "img_type": ["['Paintings']"] * n,
        "answer": ["A"] * n,
        "topic_difficulty": ["Easy"] * n,
        "question_type": ["multiple-choice"] * n,
        "subfield": ["s"] * n,
    }
    feats = Features({k: (IMG if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    result = load_source(f"mmmu,path={folder}")
    assert [s.metadata["subject"] for s in result.samples] == [
        "Art", "Art_Theory", "Basic_Medical_Science",
    ]  # fmt: skip
