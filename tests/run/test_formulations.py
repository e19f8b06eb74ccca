"""Every formulation end to end: built-in baseline and a loopback API model answering from the image."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from lmmprobe import evaluate
from lmmprobe.store import Store

pytest.importorskip("openai")
from lmmprobe.testing import FakeOpenAIServer

ROWS = [
    {"id": "sc", "question": "What color is it?", "choices": ["red", "blue", "green"], "answer": 0},
    {"id": "tf", "question": "Is it red?", "formulation": "true_false", "answer": 0},
    {"id": "open", "question": "What color is it?", "formulation": "open_ended", "answer": ["red"]},
    {
        "id": "cap",
        "question": "Describe it.",
        "formulation": "caption",
        "answer": ["red", "a red square"],
    },
    {"id": "ocr", "question": "What word is shown?", "formulation": "ocr", "answer": "red"},
    {"id": "kie", "question": "What is the color field?", "formulation": "kie", "answer": "red"},
]


@pytest.fixture
def data(tmp_path):
    Image.new("RGB", (32, 32), (220, 30, 30)).save(tmp_path / "red.png")
    path = tmp_path / "d.jsonl"
    path.write_text(
        "".join(
            json.dumps({**r, "images": ["red.png"], "metadata": {"f": r["id"]}}) + "\n"
            for r in ROWS
        )
    )
    return path


def test_each_formulation_with_an_image_reading_model(data, tmp_path):
    with FakeOpenAIServer() as server:
        model = f"openai:fake@{server.base_url}"
        ev = evaluate(
            models=[model],
            data=str(data),
            by=["f"],
            db=str(tmp_path / "db"),
            out=str(tmp_path / "o"),
        )
    r = ev.results.models[model]
    groups = r.breakdown["f"]
    for f in ("sc", "tf", "open", "ocr", "kie"):
        assert groups[f]["accuracy"].value == 1.0, f
    # Captions are judged as a corpus: no per-answer accuracy, corpus metrics instead.
    assert groups["cap"]["accuracy"].value is None
    assert (r.metrics["BLEU-1"].value or 0) > 0 and "CIDEr" in r.metrics
    assert r.metrics["accuracy"].n == 5


def test_each_formulation_with_a_baseline(data, tmp_path):
    ev = evaluate(
        models=["first"], data=str(data), by=["f"], db=str(tmp_path / "db"), out=str(tmp_path / "o")
    )
    groups = ev.results.models["first"].breakdown["f"]
    assert groups["sc"]["accuracy"].value == 1.0 and groups["tf"]["accuracy"].value == 1.0
    # A baseline has nothing to say to open questions: unparsed, and wrong where judged.
    for f in ("open", "ocr", "kie"):
        assert groups[f]["accuracy"].value == 0.0 and groups[f]["unparsed_rate"].value == 1.0


def test_blind_setting_and_gap(data, tmp_path):
    from lmmprobe.metrics import blind_gap

    with FakeOpenAIServer() as server:
        model = f"openai:fake@{server.base_url}"
        seen = evaluate(
            models=[model], data=str(data), db=str(tmp_path / "db"), out=str(tmp_path / "a")
        )
        blind = evaluate(
            models=[model], data=str(data), db=str(tmp_path / "db"), out=str(tmp_path / "b"),
            formulate={"blind": True},
        )  # fmt: skip
        assert server.received_images  # the normal run sent images...
    # ...the blind one asked the same questions without them, and the model could not answer.
    assert blind.results.models[model].metrics["accuracy"].value == 0.0
    # A run keeps no Scores (each chunk is stored and dropped): they are read from the store.
    with Store(tmp_path / "db") as store:
        normal_rows = store.model_scores(seen.run_id, model)
        blind_rows = store.model_scores(blind.run_id, model)
    gap = blind_gap(normal_rows, blind_rows)
    assert gap > 50
