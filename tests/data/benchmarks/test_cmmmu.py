"""CMMMU by name: lmms-eval's prompt per question type, images in the order named, the reading.

The fixture is laid out as ``lmms-lab/CMMMU`` is on the Hub (``data/val-*.parquet``) in the
fields lmms-eval's port reads, so ``--data cmmmu,path=FOLDER`` reads it as it would a ``hf
download`` of the real thing.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks.standard.cmmmu import CMMMU_INSTRUCTIONS
from lmmprobe.schema import ImageRef
from lmmprobe.testing import FakeOpenAIServer

SCRIPT = scripted_model("cmmmu-scripted")
MODEL = SCRIPT.name

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

COLOURS = ["red", "green", "blue", "yellow", "purple"]


def _png(i: int) -> bytes:
    return tiny_png(COLOURS[i - 1])


def _raw(images: list[ImageRef]) -> list[bytes]:
    return [base64.b64decode(i.data_b64 or "") for i in images]


def _img(i: int) -> dict[str, Any]:
    return {"bytes": _png(i), "path": None}


def _folder(tmp_path: Path) -> Path:
    # a: choice, its options name two images (option 3 then option 1), the question a third;
    # b: true/false; c: fill in the blank; d: choice whose answer is two letters.
    rows: dict[str, list[Any]] = {
        "id": ["101", "102", "103", "104"],
        "type": ["选择", "判断", "填空", "选择"],
        "question": [
            '从<img="q_1.png">中选择 #a', '<img="q_2.png">是对映体。（） #b',
            '如<img="q_3.png">，功为__J {x} #c', "哪些正确？ #d",
        ],
        "option1": ['<img="a_1.png">', None, None, "甲"],
        "option2": ["乙", None, None, "乙"],
        "option3": ['<img="a_3.png">', None, None, "丙"],
        "option4": ["丁", None, None, "丁"],
        "answer": ["C", "错", "400", "AC"],
        "image_1": [_img(1), _img(4), _img(5), None],
        "image_2": [_img(2), None, None, None],
        "image_3": [_img(3), None, None, None],
        "image_4": [None] * 4,
        "image_5": [None] * 4,
        "image_1_filename": ["q_1.png", "q_2.png", "q_3.png", None],
        "image_2_filename": ["a_1.png", None, None, None],
        "image_3_filename": ["a_3.png", None, None, None],
        "image_4_filename": [None] * 4,
        "image_5_filename": [None] * 4,
        "subcategory": ["艺术", "生物", "物理", "会计"],
        "category": ["艺术与设计", "科学", "科学", "商业"],
        "difficulty_level": ["easy", "middle", "hard", "easy"],
    }  # fmt: skip
    feats = Features(
        {
            k: (Image() if k.startswith("image_") and "filename" not in k else Value("string"))
            for k in rows
        }
    )
    return write_hub_snapshot(tmp_path / "cmmmu", {"val": Dataset.from_dict(rows, features=feats)})


def test_cmmmu_is_a_chinese_multi_image_name_pinned_on_the_val_split() -> None:
    b = BENCHMARKS.get("cmmmu")
    assert b.metric == "cmmmu_accuracy" and b.split == "val" and b.size == 900
    assert set(b.groups) == {"chinese", "multi-image"}
    assert b.hub_id == "lmms-lab/CMMMU" and f"--revision {b.revision}" in b.fetch
    assert "cmmmu/utils.py" in b.prompt.source and "75571cf" in b.prompt.source


def test_prompts_images_in_order_and_cmmmu_reading(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    samples = load_source(f"cmmmu,path={folder}").samples
    by_id = {s.id.split("/", 1)[1]: s for s in samples}
    # a: the question's image (slot 1), then option A's (slot 2), then option C's (slot 3).
    assert _raw(by_id["101"].images) == [_png(1), _png(2), _png(3)]
    assert _raw(by_id["103"].images) == [_png(5)]
    assert by_id["104"].images == []
    assert by_id["102"].metadata["category"] == "科学"
    SCRIPT.replies.clear()
    # a: "(C)" right; b: a tie (CMMMU would draw: wrong here); c: the number after 等于;
    # d: A and C both named twice: "AC", right.
    SCRIPT.replies.update({"a": "(C)", "b": "无法判断", "c": "所以功等于400", "d": "A和C，选A与C"})
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"cmmmu,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0, by=["category", "question_type"],
    )  # fmt: skip
    m = ev.results.models[MODEL]
    assert m.metrics["cmmmu_accuracy"].value == pytest.approx(3 / 4)
    assert m.breakdown["category"]["科学"]["cmmmu_accuracy"].value == pytest.approx(1 / 2)
    assert m.breakdown["question_type"]["判断"]["cmmmu_accuracy"].value == 0.0
    assert SCRIPT.prompts["a"] == (
        f"{CMMMU_INSTRUCTIONS['选择']}\n\n问题：从<图片 1>中选择 #a\n选项：\n(A) <图片 2>\n"
        "(B) 乙\n(C) <图片 3>\n(D) 丁\n\n正确答案：\n"
    )
    assert SCRIPT.prompts["c"] == (
        f"{CMMMU_INSTRUCTIONS['填空']}\n\n问题：如<图片 1>，功为__J {{x}} #c\n正确答案：\n"
    )


def test_a_bad_row_is_that_rows_problem(tmp_path: Path) -> None:
    rows: dict[str, list[Any]] = {
        "id": ["1", "2", "3", "4"], "type": ["选择", "判断", "问答", "填空"],
        "question": ["q <图片 2> #a", "q #b", "q #c", 'q <img="q_9.png"> #d'],
        "option1": ["x", None, None, None], "option2": ["y", None, None, None],
        "option3": ["z", None, None, None], "option4": ["w", None, None, None],
        "answer": ["E", "是", "x", "1"],
        **{f"image_{k}": [None] * 4 for k in range(1, 6)},
        **{f"image_{k}_filename": [None] * 4 for k in range(1, 6)},
        "subcategory": ["艺术"] * 4, "category": ["艺术与设计"] * 4,
    }  # fmt: skip
    feats = Features(
        {
            k: (Image() if k.startswith("image_") and "filename" not in k else Value("string"))
            for k in rows
        }
    )
    folder = write_hub_snapshot(tmp_path / "bad", {"val": Dataset.from_dict(rows, features=feats)})
    result = load_source(f"cmmmu,path={folder}")
    assert result.samples == []
    assert [(p.field, p.line) for p in result.problems] == [
        ("answer", 0),
        ("answer", 1),
        ("type", 2),
        ("question", 3),  # an image placeholder no slot holds: never asked without it
    ]
    assert "q_9.png" in result.problems[3].reason


def test_images_reach_the_openai_server_in_order(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    with FakeOpenAIServer(replies=["C"]) as server:
        done = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url},max_concurrency=1", "--data",
            f"cmmmu,path={folder},limit=1", "--db", tmp_path / "db.sqlite",
            "--bootstrap", "0", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.received_images == [_png(1), _png(2), _png(3)]


def test_score_as_published_gives_cmmmus_table_with_its_draws(tmp_path: Path) -> None:
    # CMMMU's own response file (id, type, response; file order differs from the copy's).
    folder = _folder(tmp_path)
    rows = [
        {"id": 103, "type": "填空", "response": "所以功等于400"},
        {"id": 101, "type": "选择", "response": "(C)"},
        {"id": 102, "type": "判断", "response": "无法判断"},
        {"id": 104, "type": "选择", "response": "我不知道"},
    ]
    responses = tmp_path / "Yi-VL-34B-response.jsonl"
    responses.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    done = lmmprobe(
        "score", responses, "--benchmark", f"cmmmu,path={folder}", "--field",
        "prediction=response", "--as-published", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    table = doc["as_published"]["tables"][0]["rows"]
    # eval_script.py @ 59a4776 run on the same rows (their data file: id, type, category,
    # options, answer) printed: 1/1, 0/1, 1/2, three empty disciplines at 0, Overall 2/4 0.5.
    assert [(r["Subject"], r["Correct Num"], r["Entries Num"], r["Acc"]) for r in table] == [
        ("Art & Design", 1, 1, 1.0),
        ("Business", 0, 1, 0.0),
        ("Science", 1, 2, 0.5),
        ("Health & Medicine", 0, 0, 0),
        ("Humanities & Social Sciences", 0, 0, 0),
        ("Technology & Engineering", 0, 0, 0),
        ("Overall", 2, 4, 0.5),
    ]
    # Business is scored before Science: 104 takes the stream's first draw, 102 its second.
    assert doc["as_published"]["guessed"] == {"104": "A", "102": "对"}
    # lmmprobe's own figure counts both drawn answers wrong.
    assert doc["metrics"]["cmmmu_accuracy"]["value"] == 0.5
    # Without --as-published, the table says how many answers CMMMU's code would draw for.
    plain = lmmprobe(
        "score", responses, "--benchmark", f"cmmmu,path={folder}", "--field",
        "prediction=response",
    )  # fmt: skip
    assert plain.returncode == 0, plain.stdout + plain.stderr
    said = "".join(plain.stdout.split())  # the console wraps long lines, even inside words
    assert "CMMMU'sowncodewouldanswer2answersatrandom" in said


def test_one_drawn_answer_is_said_in_the_singular(tmp_path: Path) -> None:
    # Before: "would answer 1 answers at random", "1 answers drawn at random ... of them".
    folder = _folder(tmp_path)
    rows = [{"id": 101, "type": "选择", "response": "(C)"},
            {"id": 104, "type": "选择", "response": "我不知道"}]  # fmt: skip
    responses = tmp_path / "Yi-VL-34B-response.jsonl"
    responses.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    done = lmmprobe(
        "score", responses, "--benchmark", f"cmmmu,path={folder}", "--field",
        "prediction=response", "--as-published",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert "CMMMU's own code would answer 1 answer at random" in said, said
    assert "lmmprobe counts it wrong" in said
    assert "1 answer drawn at random (seed 42, in CMMMU's discipline order); 0 of 1 right" in said


def test_a_huge_bad_value_is_one_short_line_and_the_other_rows_run(tmp_path: Path) -> None:
    # Before: each refused value was quoted whole: three rows of a few MB printed 8 MB.
    rows: dict[str, list[Any]] = {
        "id": ["1", "2", "3"], "type": ["选择", "判断", "判断"],
        "question": ["q #a", "q #b", "q #c"],
        "option1": ["x", None, None], "option2": ["y", None, None],
        "option3": ["z", None, None], "option4": ["w", None, None],
        "answer": ["E" * 2_000_000, "是" * 1_000_000, "对"],
        **{f"image_{k}": [None] * 3 for k in range(1, 6)},
        **{f"image_{k}_filename": [None] * 3 for k in range(1, 6)},
        "subcategory": ["艺术"] * 3, "category": ["艺术与设计"] * 3,
    }  # fmt: skip
    feats = Features(
        {
            k: (Image() if k.startswith("image_") and "filename" not in k else Value("string"))
            for k in rows
        }
    )
    folder = write_hub_snapshot(tmp_path / "bad", {"val": Dataset.from_dict(rows, features=feats)})
    done = lmmprobe(
        "run", "-m", "first", "--data", f"cmmmu,path={folder}", "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "out", HF_DATASETS_CACHE=str(tmp_path / "hf-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[:2000]
    lines = [line for line in done.stderr.splitlines() if "answer:" in line]
    assert len(lines) == 2, done.stderr[:2000]
    for line in lines:
        assert len(line) < 1_200, len(line)
    # The start (field, what was expected) and how much was left out are kept.
    assert "answer: expected option letters A-D, got 'EEEE" in lines[0]
    assert "characters cut" in lines[0]
    assert "expected 对 or 错, got '是是" in lines[1]
    (model,) = json.loads((tmp_path / "out" / "results.json").read_text())["models"].values()
    assert model["metrics"]["cmmmu_accuracy"]["n"] == 1


def test_the_as_published_table_is_titled_by_what_it_holds(tmp_path: Path) -> None:
    # Before: the table's title repeated the heading: "as published: as published".
    folder = _folder(tmp_path)
    responses = tmp_path / "Yi-VL-34B-response.jsonl"
    responses.write_text(json.dumps({"id": 101, "type": "选择", "response": "(C)"}) + "\n")
    done = lmmprobe(
        "score", responses, "--benchmark", f"cmmmu,path={folder}", "--field",
        "prediction=response", "--as-published",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert "as published: by discipline" in said, said
    assert "as published: as published" not in said
