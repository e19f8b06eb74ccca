"""The lmmprobe JSONL source: validation rules, problem reports, strict mode, paths, limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lmmprobe.data import DataError, LoadResult, SampleProblem, load_source
from lmmprobe.registry import RegistryError


def row(id: str = "s1", **fields: Any) -> dict[str, Any]:
    """A valid single-choice row without images; keyword arguments override or add fields."""
    base: dict[str, Any] = {
        "id": id,
        "images": [],
        "question": "What color is it?",
        "choices": ["red", "blue", "green"],
        "answer": 1,
    }
    base.update(fields)
    return base


def load(path: Path, **kw: Any) -> LoadResult:
    return load_source(str(path), **kw)


def only_problem(result: LoadResult) -> SampleProblem:
    assert result.invalid == 1, [str(p) for p in result.problems]
    assert len(result.problems) == 1
    return result.problems[0]


def assert_reported(result: LoadResult, path: Path, line: int, field: str | None) -> SampleProblem:
    """The single problem names FILE:LINE and the field, in the documented format."""
    problem = only_problem(result)
    assert problem.line == line
    assert problem.field == field
    text = str(problem)
    assert text.startswith(f"{path}:{line}: ")
    if field is not None:
        assert f"{path}:{line}: {field}: " in text
    return problem


# --- valid input ---------------------------------------------------------------------------------


def test_valid_rows_load_with_fields(tmp_path: Path, write_jsonl, write_png) -> None:
    write_png(tmp_path / "img" / "a.png", size=(10, 6))
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [
            row(
                "a",
                images=["img/a.png"],
                context="A picture.",
                history=[
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ],
                metadata={"task": "color", "level": 2},
            ),
            row(7, answer=0),
        ],
    )
    result = load(path)
    assert result.invalid == 0
    assert result.problems == []
    a, b = result.samples
    assert a.id == "a"
    assert a.choices == ["red", "blue", "green"]
    assert a.answer == 1
    assert a.gold_text == "blue"
    assert a.context == "A picture."
    assert [(t.role, t.content) for t in a.history] == [("user", "hi"), ("assistant", "hello")]
    assert a.metadata == {"task": "color", "level": 2}
    assert a.images[0].load().size == (10, 6)
    assert b.id == "7"  # integer ids become strings


def test_plain_path_spec(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a")])
    assert [s.id for s in load_source(str(path)).samples] == ["a"]


def test_prefixed_spec_for_other_suffix(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.txt", [row("a")])
    assert [s.id for s in load_source(f"jsonl:{path}").samples] == ["a"]


def test_prefixed_spec_for_jsonl_suffix(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a")])
    assert [s.id for s in load_source(f"jsonl:{path}").samples] == ["a"]


def test_missing_file_is_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_source(str(tmp_path / "nope.jsonl"))


def test_options_rejected(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a")])
    with pytest.raises(DataError, match="no options"):
        load_source(f"{path},n=3")


def test_unknown_source_name_is_registry_error() -> None:
    with pytest.raises(RegistryError, match="jsonl"):
        load_source("no-such-source")


def test_blank_lines_and_comments_are_ignored_and_lines_still_counted(
    tmp_path: Path, write_jsonl
) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl",
        ["# a comment", "", row("a"), "   ", "  # indented comment", row("b", answer=9)],
    )
    result = load(path)
    assert [s.id for s in result.samples] == ["a"]
    assert_reported(result, path, 6, "answer")


def test_windows_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\r\n".join(json.dumps(row(i)).encode() for i in "abc") + b"\r\n")
    assert [s.id for s in load(path).samples] == ["a", "b", "c"]


def test_utf8_bom_accepted(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(row(i)) for i in "ab").encode())
    assert [s.id for s in load(path).samples] == ["a", "b"]


@pytest.mark.parametrize(
    ("extra", "formulation", "choices"),
    [
        ({}, "single_choice", ["red", "blue", "green"]),
        ({"choices": None, "answer": "a cat"}, "open_ended", None),
        ({"choices": None, "answer": ["a cat", "cat"]}, "open_ended", None),
        ({"choices": None, "answer": 0, "formulation": "true_false"}, "true_false", ["yes", "no"]),
    ],
)
def test_default_formulation(
    tmp_path: Path, write_jsonl, extra: dict[str, Any], formulation: str, choices: Any
) -> None:
    r = row("a", **extra)
    if r.get("choices") is None:
        del r["choices"]
    path = write_jsonl(tmp_path / "d.jsonl", [r])
    (sample,) = load(path).samples
    assert sample.formulation == formulation
    assert sample.choices == choices


@pytest.mark.parametrize(
    ("answer", "references"),
    [("a cat", ["a cat"]), (["a cat", "one cat"], ["a cat", "one cat"])],
)
def test_open_ended_rows(tmp_path: Path, write_jsonl, answer: Any, references: list[str]) -> None:
    r = row("a", question="Describe the image.", answer=answer)
    del r["choices"]
    path = write_jsonl(tmp_path / "d.jsonl", [r])
    (sample,) = load(path).samples
    assert sample.formulation == "open_ended"
    assert sample.answer == references
    assert not sample.is_choice


# --- one rule per test ---------------------------------------------------------------------------


@pytest.mark.parametrize("junk", ["{not json", '{"id": "a",}', "[1, 2", "nul"])
def test_invalid_json_line(tmp_path: Path, write_jsonl, junk: str) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), junk, row("c")])
    result = load(path)
    assert [s.id for s in result.samples] == ["a", "c"]
    problem = assert_reported(result, path, 2, None)
    assert "JSON" in problem.reason


@pytest.mark.parametrize("value", [[1, 2], "text", 3])
def test_non_object_row(tmp_path: Path, write_jsonl, value: Any) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [json.dumps(value)])
    result = load(path)
    assert result.samples == []
    assert "object" in assert_reported(result, path, 1, None).reason


@pytest.mark.parametrize("field", ["id", "images", "question", "answer"])
def test_missing_required_field(tmp_path: Path, write_jsonl, field: str) -> None:
    bad = row("b")
    del bad[field]
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), bad])
    result = load(path)
    assert [s.id for s in result.samples] == ["a"]
    problem = assert_reported(result, path, 2, field)
    assert "missing" in problem.reason


def test_unknown_field_typo(tmp_path: Path, write_jsonl) -> None:
    bad = row("b")
    bad["choises"] = bad.pop("choices")
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), bad])
    result = load(path)
    assert [s.id for s in result.samples] == ["a"]
    problem = assert_reported(result, path, 2, "choises")
    assert "unknown field" in problem.reason
    assert "choices" in problem.reason  # lists the known fields, so the typo is obvious


def test_missing_image_file(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", images=["missing.png"])])
    result = load(path)
    assert result.samples == []
    problem = assert_reported(result, path, 1, "images[0]")
    assert "not found" in problem.reason
    assert "missing.png" in problem.reason


def test_second_image_problem_names_its_index(tmp_path: Path, write_jsonl, write_png) -> None:
    write_png(tmp_path / "ok.png")
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", images=["ok.png", "gone.png"])])
    assert_reported(load(path), path, 1, "images[1]")


def _text_png(path: Path) -> None:
    path.write_bytes(b"this is not an image at all\n" * 4)


def _truncated_png(path: Path) -> None:
    from PIL import Image

    full = path.with_name("full.png")
    im = Image.new("RGB", (48, 48))
    im.putdata([((i * 37) % 256, (i * 91) % 256, (i * 13) % 256) for i in range(48 * 48)])
    im.save(full, format="PNG")
    data = full.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("make", [_text_png, _truncated_png], ids=["text-bytes", "truncated"])
def test_unreadable_image(tmp_path: Path, write_jsonl, make) -> None:
    make(tmp_path / "bad.png")
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), row("b", images=["bad.png"])])
    result = load(path)
    assert [s.id for s in result.samples] == ["a"]
    problem = assert_reported(result, path, 2, "images[0]")
    assert "unreadable" in problem.reason


@pytest.mark.parametrize("answer", [3, 99, -1])
def test_answer_index_out_of_range(tmp_path: Path, write_jsonl, answer: int) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", answer=answer)])
    problem = assert_reported(load(path), path, 1, "answer")
    assert "out of range" in problem.reason


@pytest.mark.parametrize("answer", ["1", "blue", ["blue"]])
def test_non_integer_answer_for_single_choice(tmp_path: Path, write_jsonl, answer: Any) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", answer=answer)])
    problem = assert_reported(load(path), path, 1, "answer")
    assert "integer" in problem.reason


def test_fractional_answer_names_answer_field(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", answer=1.5)])
    result = load(path)
    assert result.samples == []
    problem = only_problem(result)
    assert problem.line == 1
    assert problem.field is not None
    assert problem.field.startswith("answer")
    assert f"{path}:1: answer" in str(problem)


@pytest.mark.parametrize("answer", [True, False])
def test_boolean_answer_rejected(tmp_path: Path, write_jsonl, answer: bool) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", answer=answer)])
    problem = only_problem(load(path))
    assert problem.field is not None
    assert problem.field.startswith("answer")


def test_duplicate_id_names_first_line(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ["# header", row("a"), row("b"), row("a", answer=0)])
    result = load(path)
    assert [s.id for s in result.samples] == ["a", "b"]
    assert result.samples[0].answer == 1  # the first occurrence is the one kept
    problem = assert_reported(result, path, 4, "id")
    assert "duplicate" in problem.reason
    assert "line 2" in problem.reason


def test_duplicate_id_int_and_string(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(5), row("5")])
    result = load(path)
    assert len(result.samples) == 1
    assert_reported(result, path, 2, "id")


@pytest.mark.parametrize(
    ("images", "field"),
    [
        ("a.png", "images"),
        ({"path": "a.png"}, "images"),
        (None, "images"),
        ([1], "images[0]"),
        ([""], "images[0]"),
        ([["a.png"]], "images[0]"),
    ],
)
def test_wrong_type_for_images(
    tmp_path: Path, write_jsonl, write_png, images: Any, field: str
) -> None:
    write_png(tmp_path / "a.png")
    path = write_jsonl(tmp_path / "d.jsonl", [row("a", images=images)])
    result = load(path)
    assert result.samples == []
    assert_reported(result, path, 1, field)


# --- default vs strict mode ----------------------------------------------------------------------


def test_invalid_rows_skipped_counted_and_first_ten_kept(tmp_path: Path, write_jsonl) -> None:
    rows: list[dict[str, Any] | str] = []
    for i in range(15):
        rows.append(row(f"good{i}"))
        rows.append(row(f"bad{i}", answer=42))
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    result = load(path)
    assert [s.id for s in result.samples] == [f"good{i}" for i in range(15)]
    assert result.invalid == 15
    assert len(result.problems) == 10
    # The first ten, in file order: bad rows sit on even lines 2, 4, ..., 20.
    assert [p.line for p in result.problems] == list(range(2, 22, 2))
    assert all(p.field == "answer" for p in result.problems)


def test_strict_raises_on_first_bad_line(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(
        tmp_path / "d.jsonl", [row("a"), "", row("b", answer=7), "{oops", row("c", choises=[])]
    )
    with pytest.raises(DataError) as info:
        load(path, strict=True)
    assert f"{path}:3: answer" in str(info.value)
    assert isinstance(info.value.problem, SampleProblem)
    assert info.value.problem.line == 3


def test_strict_accepts_valid_file(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), "# c", row("b")])
    result = load(path, strict=True)
    assert [s.id for s in result.samples] == ["a", "b"]
    assert result.invalid == 0


# --- paths and limit -----------------------------------------------------------------------------


def test_image_paths_resolve_relative_to_jsonl_folder(
    tmp_path: Path, write_jsonl, write_png, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "dataset"
    write_png(data_dir / "images" / "a.png", size=(5, 7))
    write_jsonl(data_dir / "d.jsonl", [row("a", images=["images/a.png"])])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # A decoy with the same relative path under the working folder must not be used.
    write_png(elsewhere / "images" / "a.png", size=(3, 3))
    monkeypatch.chdir(elsewhere)
    result = load_source("../dataset/d.jsonl")
    assert result.invalid == 0, [str(p) for p in result.problems]
    (sample,) = result.samples
    assert sample.images[0].load().size == (5, 7)
    # The reference stays valid when the working folder changes again.
    monkeypatch.chdir(tmp_path)
    assert sample.images[0].load().size == (5, 7)


def test_missing_image_not_found_from_cwd(
    tmp_path: Path, write_jsonl, write_png, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The image exists relative to the cwd but not relative to the JSONL file: reported missing.
    write_jsonl(tmp_path / "dataset" / "d.jsonl", [row("a", images=["a.png"])])
    write_png(tmp_path / "a.png")
    monkeypatch.chdir(tmp_path)
    result = load_source("dataset/d.jsonl")
    assert result.samples == []
    assert only_problem(result).field == "images[0]"


@pytest.mark.parametrize("limit", [1, 2, 4])
def test_limit(tmp_path: Path, write_jsonl, limit: int) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row(f"s{i}") for i in range(4)])
    result = load(path, limit=limit)
    assert [s.id for s in result.samples] == [f"s{i}" for i in range(limit)]


def test_limit_counts_valid_samples(tmp_path: Path, write_jsonl) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [row("x", answer=9), row("a"), row("b"), row("c")])
    result = load(path, limit=2)
    assert [s.id for s in result.samples] == ["a", "b"]
    assert result.invalid == 1


@pytest.mark.parametrize(
    ("cell", "shown"), [("Infinity", "inf"), ("-Infinity", "-inf"), ("1e999", "inf")]
)
def test_an_infinite_number_is_that_rows_problem_naming_its_field(
    tmp_path: Path, write_jsonl, cell: str, shown: str
) -> None:
    # Python's JSON reader takes them; the store writes standard JSON only, so the row used
    # to fail the whole run where its samples were recorded.
    bad = json.dumps(row("b")).replace('"id": "b"', f'"id": "b", "metadata": {{"w": [1, {cell}]}}')
    path = write_jsonl(tmp_path / "d.jsonl", [row("a"), bad, row("c")])
    result = load(path)
    assert [s.id for s in result.samples] == ["a", "c"]
    problem = assert_reported(result, path, 2, "metadata.w[1]")
    assert problem.reason == f"{shown} is infinite, a number JSON has no value for"


def test_a_nan_and_a_large_finite_number_are_read_as_before(tmp_path: Path, write_jsonl) -> None:
    ok = json.dumps(row("b")).replace('"id": "b"', '"id": "b", "metadata": {"w": NaN, "x": 1e300}')
    result = load(write_jsonl(tmp_path / "d.jsonl", [ok]))
    assert [s.id for s in result.samples] == ["b"]
    assert result.samples[0].metadata["x"] == 1e300
