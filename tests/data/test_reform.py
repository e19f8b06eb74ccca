"""The ReForm-Eval JSON source: fields, roles, base64 images, problem reports, strict, limit."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from lmmprobe import evaluate
from lmmprobe.data import DataError, LoadResult, SampleProblem, load_source


def entry(sample_id: Any = 0, **fields: Any) -> dict[str, Any]:
    """A valid single-choice entry as ReForm-Eval writes it; keywords override or add fields."""
    base: dict[str, Any] = {
        "sample_id": sample_id,
        "image": "img/a.png",
        "question": "What disaster happens in the image?",
        "answer": "1",  # ReForm stores str(index)
        "answer_options": ["flood", "fire", "earthquake", "none"],
    }
    base.update(fields)
    return base


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path, write_png) -> Path:
    """A dataset folder with two images under img/."""
    write_png(tmp_path / "img" / "a.png", size=(10, 6), color=(200, 30, 30))
    write_png(tmp_path / "img" / "b.png", size=(4, 4), color=(30, 30, 200))
    return tmp_path


def load(path: Path, opts: str = "", **kw: Any) -> LoadResult:
    return load_source(f"reform:{path}{opts}", **kw)


def only_problem(result: LoadResult, path: Path, index: int, field: str | None) -> SampleProblem:
    assert result.invalid == 1, [str(p) for p in result.problems]
    (problem,) = result.problems
    assert (problem.line, problem.field) == (index, field)
    prefix = f"{path}:{index}: " + (f"{field}: " if field else "")
    assert str(problem).startswith(prefix), str(problem)
    return problem


# --- valid entries -------------------------------------------------------------------------------


def test_single_choice_entry(folder: Path) -> None:
    path = write(folder / "d.json", [entry(0, instruct="Pick one.", question_type="disaster")])
    result = load(path)
    assert result.invalid == 0
    (s,) = result.samples
    assert s.id == "0"
    assert s.formulation == "single_choice"
    assert s.question == "What disaster happens in the image?"
    assert s.choices == ["flood", "fire", "earthquake", "none"]
    assert s.answer == 1
    assert s.gold_text == "fire"
    # Extra ReForm fields are kept; a digit-string answer says nothing new, so it is not.
    assert s.metadata == {"instruct": "Pick one.", "question_type": "disaster"}
    assert s.images[0].load().size == (10, 6)
    assert s.images[0].content_hash() == _sha256(folder / "img" / "a.png")


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("answer", "index"), [(2, 2), ("2", 2), (" 0 ", 0), ("none", 3)])
def test_answer_forms(folder: Path, answer: Any, index: int) -> None:
    path = write(folder / "d.json", [entry(answer=answer)])
    (s,) = load(path).samples
    assert s.answer == index


def test_answer_given_as_option_text_kept_as_original(folder: Path) -> None:
    path = write(folder / "d.json", [entry(answer="earthquake")])
    (s,) = load(path).samples
    assert s.answer == 2
    assert s.metadata["original_answer"] == "earthquake"


def test_numeric_options_become_text(folder: Path) -> None:
    path = write(folder / "d.json", [entry(answer="1", answer_options=[1, 2, 3])])
    (s,) = load(path).samples
    assert s.choices == ["1", "2", "3"]
    assert s.answer == 1  # a digit string is an index, as ReForm writes it, even here


def test_object_with_data_list_and_dataset_name(folder: Path) -> None:
    doc = {"dataset_name": "MEDIC", "data": [entry(0), entry(1, image="img/b.png")]}
    result = load(write(folder / "d.json", doc))
    assert [s.id for s in result.samples] == ["0", "1"]
    assert all(s.metadata["dataset"] == "MEDIC" for s in result.samples)
    assert result.samples[1].images[0].load().size == (4, 4)


def test_caption_references_are_open_ended(folder: Path) -> None:
    caption = {
        "sample_id": "c1",
        "image": "img/a.png",
        "question": "Describe the image briefly.",
        "references": ["a red square", "red"],
        "answer": "a red square",
    }
    (s,) = load(write(folder / "d.json", [caption])).samples
    assert s.formulation == "open_ended"
    assert s.choices is None
    assert s.answer == ["a red square", "red"]
    assert s.metadata["original_answer"] == "a red square"  # ReForm's own field, kept


@pytest.mark.parametrize(
    ("answer", "refs"), [("cat", ["cat"]), (["cat", "a cat"], ["cat", "a cat"])]
)
def test_generation_answer_text(folder: Path, answer: Any, refs: list[str]) -> None:
    e = entry(answer=answer)
    del e["answer_options"]
    (s,) = load(write(folder / "d.json", [e])).samples
    assert (s.formulation, s.answer) == ("open_ended", refs)


def test_formulation_open_ended_uses_gold_option_text(folder: Path) -> None:
    path = write(folder / "d.json", [entry(answer="2")])
    (s,) = load(path, ",formulation=open_ended").samples
    assert s.formulation == "open_ended"
    assert s.answer == ["earthquake"]
    assert s.metadata["answer_options"] == ["flood", "fire", "earthquake", "none"]


def test_history_roles_mapped(folder: Path) -> None:
    history = [
        {"from": "human", "value": "can you see the image? Options: (A) yes; (B) no."},
        {"from": "gpt", "value": "(A) yes"},
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": "yes"},
        {"from": "system", "value": "be brief"},
    ]
    (s,) = load(write(folder / "d.json", [entry(history=history)])).samples
    assert [t.role for t in s.history] == ["user", "assistant", "user", "assistant", "system"]
    assert s.history[1].content == "(A) yes"


def test_image_dir_option(tmp_path: Path, write_png) -> None:
    write_png(tmp_path / "images" / "x.png", size=(3, 5))
    path = write(tmp_path / "ann" / "d.json", [entry(image="x.png")])
    assert load(path).invalid == 1  # not beside the JSON file
    (s,) = load(path, f",image_dir={tmp_path / 'images'}").samples
    assert s.images[0].load().size == (3, 5)


def test_base64_images_as_in_reform_eval_data(folder: Path) -> None:
    raw = (folder / "img" / "a.png").read_bytes()
    b64 = base64.b64encode(raw).decode()
    doc = [entry(0, image=b64), entry(1, image=f"data:image/png;base64,{b64}")]
    result = load(write(folder / "d.json", doc))
    assert result.invalid == 0, [str(p) for p in result.problems]
    for s in result.samples:
        assert s.images[0].kind == "base64"
        assert s.images[0].content_hash() == _sha256(folder / "img" / "a.png")


def test_large_base64_image_longer_than_a_file_name(folder: Path, write_png) -> None:
    big = write_png(folder / "big.png", size=(64, 64), noise=1)
    b64 = base64.b64encode(big.read_bytes()).decode()
    assert len(b64) > 10_000
    result = load(write(folder / "d.json", [entry(0, image=b64), entry(1, image=b64[:5000])]))
    assert [s.id for s in result.samples] == ["0"]
    assert result.samples[0].images[0].load().size == (64, 64)
    assert "unreadable image" in only_problem(result, folder / "d.json", 2, "image").reason


def test_list_of_images(folder: Path) -> None:
    (s,) = load(write(folder / "d.json", [entry(image=["img/a.png", "img/b.png"])])).samples
    assert [im.load().size for im in s.images] == [(10, 6), (4, 4)]


# --- invalid entries -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ({"answer": "7"}, "answer", "out of range"),
        ({"answer": "volcano"}, "answer", "answer_options"),
        ({"answer": True}, "answer", "option index"),
        ({"answer_options": "flood"}, "answer_options", "list"),
        ({"answer_options": ["a", None]}, "answer_options[1]", "option text"),
        ({"image": "img/missing.png"}, "image", "not found"),
        ({"image": ["img/a.png", "nope.png"]}, "image[1]", "not found"),
        ({"image": 3}, "image", "file path"),
        ({"sample_id": None}, "sample_id", "string"),
        ({"question": ""}, "question", "least 1"),
        ({"history": [{"from": "robot", "value": "x"}]}, "history[0].from", "unknown role"),
        ({"history": [{"from": "human", "value": 3}]}, "history[0].value", "text"),
        ({"history": "hi"}, "history", "list"),
    ],
)
def test_invalid_entry_names_index_and_field(
    folder: Path, bad: dict[str, Any], field: str, words: str
) -> None:
    path = write(folder / "d.json", [entry(0), {**entry(1), **bad}, entry(2)])
    result = load(path)
    assert [s.id for s in result.samples] == ["0", "2"]
    problem = only_problem(result, path, 2, field)
    assert words in problem.reason


@pytest.mark.parametrize("field", ["sample_id", "image", "question", "answer"])
def test_missing_field(folder: Path, field: str) -> None:
    bad = entry(1)
    del bad[field]
    path = write(folder / "d.json", [bad])
    assert "missing" in only_problem(load(path), path, 1, field).reason


def test_non_object_entry(folder: Path) -> None:
    path = write(folder / "d.json", [entry(0), [1, 2]])
    assert "object" in only_problem(load(path), path, 2, None).reason


def test_unreadable_image(folder: Path) -> None:
    (folder / "img" / "bad.png").write_bytes(b"not an image" * 10)
    path = write(folder / "d.json", [entry(image="img/bad.png")])
    assert "unreadable" in only_problem(load(path), path, 1, "image").reason


def test_duplicate_sample_id_names_first_entry(folder: Path) -> None:
    path = write(folder / "d.json", [entry(5), entry("5", answer="0")])
    result = load(path)
    assert [s.answer for s in result.samples] == [1]
    assert "entry 1" in only_problem(result, path, 2, "sample_id").reason


def test_single_choice_forced_without_options(folder: Path) -> None:
    e = entry(answer="cat")
    del e["answer_options"]
    path = write(folder / "d.json", [e])
    only_problem(load(path, ",formulation=single_choice"), path, 1, "answer_options")


@pytest.mark.parametrize(
    ("text", "words"),
    [("{not json", "JSON"), ('{"data": 3}', "'data' list"), ("42", "JSON list")],
)
def test_unreadable_file(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text)
    with pytest.raises(DataError, match=words):
        load(path)


@pytest.mark.parametrize(
    ("opts", "words"),
    [
        (",formulation=caption", "formulation"),
        (",colour=red", "no option"),
        (",image_dir=/nope", "folder"),
    ],
)
def test_bad_options(folder: Path, opts: str, words: str) -> None:
    path = write(folder / "d.json", [entry()])
    with pytest.raises(DataError, match=words):
        load(path, opts)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load(tmp_path / "nope.json")


# --- strict and limit ----------------------------------------------------------------------------


def test_strict_raises_on_first_invalid_entry(folder: Path) -> None:
    path = write(folder / "d.json", [entry(0), entry(1, answer="9"), entry(2, image="x.png")])
    with pytest.raises(DataError) as info:
        load(path, strict=True)
    assert isinstance(info.value.problem, SampleProblem)
    assert str(info.value).startswith(f"{path}:2: answer: ")


def test_default_mode_counts_all_keeps_ten(folder: Path) -> None:
    entries = [entry(i, answer="9" if i % 2 else "0") for i in range(30)]
    result = load(write(folder / "d.json", entries))
    assert len(result.samples) == 15 and result.invalid == 15
    assert [p.line for p in result.problems] == list(range(2, 22, 2))


@pytest.mark.parametrize("limit", [1, 3])
def test_limit_counts_valid_samples(folder: Path, limit: int) -> None:
    entries = [entry("bad", answer="9")] + [entry(i) for i in range(5)]
    result = load(write(folder / "d.json", entries), limit=limit)
    assert [s.id for s in result.samples] == [str(i) for i in range(limit)]


# --- end to end ----------------------------------------------------------------------------------


def test_evaluate_end_to_end(folder: Path) -> None:
    entries = [entry(i, answer=str(i % 4)) for i in range(8)]
    path = write(folder / "d.json", entries)
    ev = evaluate(
        models=["first"], data=f"reform:{path}", db=str(folder / "db"), out=str(folder / "o")
    )
    assert ev.results.data.samples == 8
    metrics = ev.results.models["first"].metrics
    # "first" always picks option 0; two of the eight answers are option 0.
    assert metrics["accuracy"].value == pytest.approx(2 / 8)
    assert ev.results_json.is_file()
