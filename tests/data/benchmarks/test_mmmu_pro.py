"""MMMU-Pro's three settings by name: the official prompt, the images in order, the reading.

Fixtures are laid out as ``MMMU/MMMU_Pro`` is on the Hub (one folder per config, the card
naming them) in the published schema, so ``--data mmmu-pro-*,path=FOLDER`` reads them as it
would a ``hf download`` of the real thing.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.schema import ImageRef
from lmmprobe.testing import FakeOpenAIServer

SCRIPT = scripted_model("mmmu-pro-scripted")
MODEL = SCRIPT.name

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

NAMES = ("mmmu-pro-standard-4", "mmmu-pro-standard-10", "mmmu-pro-vision")
STANDARD = "Answer with the option letter from the given choices directly."
VISION = (
    "Answer with the option letter from the given choices directly. The last line of your "
    "response should be of the following format: 'Answer: $LETTER' (without quotes) where "
    "LETTER is one of options."
)
COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "white"]


def _png(i: int) -> bytes:
    return tiny_png(COLOURS[i - 1])


def _raw(images: list[ImageRef]) -> list[bytes]:
    return [base64.b64decode(i.data_b64 or "") for i in images]


def _standard_folder(tmp_path: Path, config: str = "standard (10 options)") -> Path:
    rows: dict[str, list[Any]] = {
        "id": ["test_Art_1", "test_Math_2", "validation_Music_3"],
        "question": [
            "Compare <image 2> with <image 1>: which is older? #a",
            "Which plot matches? #b",
            "<image 1> How many beats? {x} #c",
        ],
        "options": [
            "['<image 1>', 'neither', 'both']",
            "['<image 3>', '<image 1>', '<image 2>']",
            "['3', '4', '6', '8']",
        ],
        "explanation": ["", "", ""],
        "image_1": [{"bytes": _png(1), "path": None}, {"bytes": _png(4), "path": None},
                    {"bytes": _png(7), "path": None}],
        "image_2": [{"bytes": _png(2), "path": None}, {"bytes": _png(5), "path": None}, None],
        "image_3": [None, {"bytes": _png(6), "path": None}, None],
        **{f"image_{k}": [None] * 3 for k in range(4, 8)},
        "img_type": ["['Paintings']", "['Plots and Charts']", "['Sheet Music']"],
        "answer": ["B", "C", "B"],
        "topic_difficulty": ["Easy", "Hard", "Medium"],
        "subject": ["Art", "Math", "Music"],
    }  # fmt: skip
    feats = Features({k: (Image() if k.startswith("image_") else Value("string")) for k in rows})
    return write_hub_snapshot(
        tmp_path / "mmmu-pro", {"test": Dataset.from_dict(rows, features=feats)}, config=config
    )


def test_the_three_settings_are_names_with_their_configs_and_metric() -> None:
    configs = {n: BENCHMARKS.get(n).config for n in NAMES}
    assert configs == {
        "mmmu-pro-standard-4": "standard (4 options)",
        "mmmu-pro-standard-10": "standard (10 options)",
        "mmmu-pro-vision": "vision",
    }
    for name in NAMES:
        b = BENCHMARKS.get(name)
        assert b.metric == "mmmu_pro_accuracy"
        assert b.hub_id == "MMMU/MMMU_Pro" and b.split == "test" and b.size == 1730
        assert "prompts.yaml" in b.prompt.source and "bb0b95a" in b.prompt.source
        # Only the config's own files are fetched, at the pinned revision.
        assert f"--include '{b.config}/*'" in b.fetch and f"--revision {b.revision}" in b.fetch


def test_standard_prompt_images_in_the_order_named_and_mmmu_pro_reading(tmp_path: Path) -> None:
    folder = _standard_folder(tmp_path)
    samples = load_source(f"mmmu-pro-standard-10,path={folder}").samples
    by_id = {s.id.split("/", 1)[1]: s for s in samples}  # ids are NAME/ID
    # a: <image 2> then <image 1> in the question, <image 1> again in an option: three images.
    a = by_id["test_Art_1"]
    assert _raw(a.images) == [_png(2), _png(1), _png(1)]
    assert by_id["test_Math_2"].metadata["subject"] == "Math"
    assert _raw(by_id["test_Math_2"].images) == [_png(6), _png(4), _png(5)]
    SCRIPT.replies.clear()
    SCRIPT.replies.update({"a": "Answer: B", "b": "hmm", "c": "The answer is B."})
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"mmmu-pro-standard-10,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0, by=["subject"],
    )  # fmt: skip
    m = ev.results.models[MODEL]
    # a: right; b: nothing readable (MMMU-Pro would guess a letter; lmmprobe: wrong); c: "B "
    # is read as B (right).
    assert m.metrics["mmmu_pro_accuracy"].value == pytest.approx(2 / 3)
    assert m.breakdown["subject"]["Math"]["mmmu_pro_accuracy"].value == 0.0
    assert m.breakdown["subject"]["Art"]["mmmu_pro_accuracy"].value == 1.0
    assert SCRIPT.prompts["a"] == (
        "Compare [image] with [image]: which is older? #a\nA. [image]\nB. neither\nC. both\n"
        + STANDARD
    )
    assert (
        SCRIPT.prompts["c"]
        == f"[image] How many beats? {{x}} #c\nA. 3\nB. 4\nC. 6\nD. 8\n{STANDARD}"
    )


def test_a_question_naming_a_missing_image_is_that_rows_problem(tmp_path: Path) -> None:
    folder = _standard_folder(tmp_path / "x", config="standard (4 options)")
    # Rewrite one row to name <image 5>, which it does not have.
    rows: dict[str, list[Any]] = {
        "id": ["test_Art_9"], "question": ["See <image 5>. #z"], "options": ["['a', 'b']"],
        "explanation": [""], **{f"image_{k}": [None] for k in range(1, 8)},
        "img_type": [""], "answer": ["A"], "topic_difficulty": [""], "subject": ["Art"],
    }  # fmt: skip
    feats = Features({k: (Image() if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "y", {"test": Dataset.from_dict(rows, features=feats)},
        config="standard (4 options)",
    )  # fmt: skip
    result = load_source(f"mmmu-pro-standard-4,path={folder}")
    assert result.samples == []
    (problem,) = result.problems
    assert (problem.field, problem.line) == ("image_5", 0)
    assert problem.reason == "the question names this image but the row has none"


def _vision_folder(tmp_path: Path) -> Path:
    rows: dict[str, list[Any]] = {
        "id": ["test_Art_1", "test_Math_2", "test_Music_3"],
        "image": [{"bytes": _png(i), "path": None} for i in (1, 2, 3)],
        "options": ["['oil', 'ink']", "['1', '2', '3']", "['x', 'y', 'z', 'w']"],
        "answer": ["B", "A", "D"],
        "subject": ["Art", "Math", "Music"],
    }
    feats = Features({k: (Image() if k == "image" else Value("string")) for k in rows})
    return write_hub_snapshot(
        tmp_path / "vision", {"test": Dataset.from_dict(rows, features=feats)}, config="vision"
    )


def test_vision_asks_the_instruction_alone_with_its_one_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _vision_folder(tmp_path)
    samples = load_source(f"mmmu-pro-vision,path={folder}").samples
    assert samples[0].metadata["option_texts"] == ["oil", "ink"]
    assert all(len(s.images) == 1 for s in samples)
    # The whole message is the instruction (no question text, no options: they are in the
    # image); the same for every row, so the fake server answers in order.
    assert {s.prompt.template for s in samples if s.prompt} == {VISION}
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    replies = ["Answer: (B)", "Let me think. Answer: A or C", "The options differ\nAnswer: D"]
    with FakeOpenAIServer(replies=replies) as server:
        ev = evaluate(
            models=[f"openai:vlm@{server.base_url},max_concurrency=1"],
            data=f"mmmu-pro-vision,path={folder}", db=str(tmp_path / "db"),
            out=str(tmp_path / "out"), bootstrap=0,
        )  # fmt: skip
        assert server.received_images == [_png(1), _png(2), _png(3)]
    (model,) = ev.results.models.values()
    # Row 1: the one letter after "Answer:" (right). Row 2: "A or C" names two letters, so
    # MMMU's rules go on: "A " and "C " are bare letters, the later one wins: C (wrong).
    # Row 3: D after the last "Answer:" (right).
    assert model.metrics["mmmu_pro_accuracy"].value == pytest.approx(2 / 3)


def test_standard_images_reach_the_openai_server_in_order(tmp_path: Path) -> None:
    folder = _standard_folder(tmp_path)
    with FakeOpenAIServer(replies=["A", "B", "C"]) as server:
        done = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url},max_concurrency=1", "--data",
            f"mmmu-pro-standard-10,path={folder},limit=1", "--db", tmp_path / "db.sqlite",
            "--bootstrap", "0", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert server.received_images == [_png(2), _png(1), _png(1)]


def test_a_published_answer_beyond_its_options_is_asked_and_never_right(tmp_path: Path) -> None:
    # validation_Accounting_29 as published: one option (a list of three), answer B. The
    # released scoring counts it (wrong whatever the reply); a non-letter answer is a problem.
    rows: dict[str, list[Any]] = {
        "id": ["validation_Accounting_29", "test_Art_2"],
        "question": ["Which statement holds? #q", "Which? #r"],
        "options": ["[['A', 'B', 'Not enough information']]", "['x', 'y']"],
        "explanation": ["", ""], **{f"image_{k}": [None, None] for k in range(1, 8)},
        "img_type": ["", ""], "answer": ["B", "b"], "topic_difficulty": ["", ""],
        "subject": ["Accounting", "Art"],
    }  # fmt: skip
    feats = Features({k: (Image() if k.startswith("image_") else Value("string")) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "acc", {"test": Dataset.from_dict(rows, features=feats)},
        config="standard (10 options)",
    )  # fmt: skip
    result = load_source(f"mmmu-pro-standard-10,path={folder}")
    assert [(p.field, p.line) for p in result.problems] == [("answer", 1)]
    SCRIPT.replies.clear()
    SCRIPT.replies.update({"q": "Answer: B"})
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"mmmu-pro-standard-10,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0,
    )  # fmt: skip
    assert ev.results.models[MODEL].metrics["mmmu_pro_accuracy"].value == 0.0
    assert SCRIPT.prompts["q"] == (
        f"Which statement holds? #q\nA. ['A', 'B', 'Not enough information']\n{STANDARD}"
    )


STANDARD_COT = (
    "Answer the preceding multiple choice question. The last line of your response should be "
    "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
    "options. Think step by step before answering."
)
VISION_COT = (
    "Write out the multiple-choice question in the image and then solve it. The last line of "
    "your response should be of the following format: 'Answer: $LETTER' (without quotes) where "
    "LETTER is one of options. Think step by step before answering."
)


def test_each_setting_has_a_cot_name_citing_its_prompt() -> None:
    # prompts.yaml's two modes (infer_transformers.py --mode direct | cot): a name each.
    for name in NAMES:
        direct, cot = BENCHMARKS.get(name), BENCHMARKS.get(f"{name}-cot")
        assert (cot.config, cot.hub_id, cot.revision, cot.metric, cot.size) == (
            direct.config, direct.hub_id, direct.revision, direct.metric, direct.size,
        )  # fmt: skip
        assert "(cot." in cot.prompt.source and "(direct." in direct.prompt.source
        assert cot.fetch == direct.fetch


def test_cot_names_ask_prompts_yamls_cot_lines(tmp_path: Path) -> None:
    folder = _standard_folder(tmp_path)
    SCRIPT.replies.clear()
    SCRIPT.replies.update(
        {"a": "Older first... so\nAnswer: B", "b": "Answer: C", "c": "Counting. Answer: A"}
    )
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"mmmu-pro-standard-10-cot,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0,
    )  # fmt: skip
    assert ev.results.models[MODEL].metrics["mmmu_pro_accuracy"].value == pytest.approx(2 / 3)
    assert SCRIPT.prompts["c"] == (
        f"[image] How many beats? {{x}} #c\nA. 3\nB. 4\nC. 6\nD. 8\n{STANDARD_COT}"
    )
    vision = load_source(f"mmmu-pro-vision-cot,path={_vision_folder(tmp_path)}").samples
    assert {s.prompt.template for s in vision if s.prompt} == {VISION_COT}
    assert all(len(s.images) == 1 for s in vision)


def test_a_cot_name_reads_its_settings_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One download serves both modes: $LMMPROBE_DATA_DIR/mmmu-pro-vision.
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _vision_folder(tmp_path).rename(data_dir / "mmmu-pro-vision")
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    samples = load_source("mmmu-pro-vision-cot").samples
    assert len(samples) == 3 and samples[0].prompt is not None
    assert samples[0].prompt.template == VISION_COT
