"""ReForm-Eval files are a reader of the one path other tools' files take (issue 36, item 6).

- ``--as-published`` is ReForm-Eval's own figure: on every file of
  ``tests/parity/data/reform_files.json`` in each layout, equal to the last digit to what the
  whole-file reader gave (``data/whole_file_readings.json``, the figures
  ``tests/parity/test_reform.py`` checks against ReForm-Eval's code).
- The headline is lmmprobe's registered metric on the items the file holds (its options and
  gold index), and ``import`` stores the file as a run with its rows, as for other tools' files.
- Recognised by its layout without ``--reader``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.predictions.as_published.reform import reform_published
from lmmprobe.predictions.importing import score_file

HERE = Path(__file__).parent
PARITY = HERE.parent / "parity" / "data"
BASELINE = HERE / "data" / "whole_file_readings.json"
FORMULATIONS = {"SingleChoice": "single_choice", "OCROpenEnded": "ocr", "KIEOpenEnded": "kie"}

ENTRIES = [
    {"sample_id": 1, "answer": 0, "answer_options": ["cat", "dog", "cow"],
     "prediction": "The answer is (A) cat"},
    # ReForm-Eval reads only an (X) mark: the option's text alone is unmatched there.
    {"sample_id": 1, "answer": 0, "answer_options": ["cat", "dog", "cow"], "prediction": "cat"},
    {"sample_id": 2, "answer": "2", "answer_options": ["red", "green", "blue"],
     "prediction": "(B)"},
    {"sample_id": 2, "answer": "2", "answer_options": ["red", "green", "blue"],
     "prediction": "(C) blue"},
]  # fmt: skip


def _write(path: Path, entries: list[Any], layout: str) -> Path:
    if layout == "jsonl":
        text = "".join(json.dumps(e) + "\n" for e in entries)
    elif layout == "wrapped":
        text = json.dumps({"data": entries}, indent=1)
    else:
        text = json.dumps(entries, indent=1)
    path.write_text(text, encoding="utf-8")
    return path


def test_as_published_is_reform_evals_figure_on_every_parity_file(tmp_path: Path) -> None:
    cases = json.loads((PARITY / "reform_files.json").read_text(encoding="utf-8"))["cases"]
    recorded = json.loads(BASELINE.read_text(encoding="utf-8"))["reform"]
    assert len(recorded) == 3 * len(cases) >= 21
    for want in recorded:
        (case,) = [c["input"] for c in cases if c["input"]["name"] == want["name"]]
        path = _write(tmp_path / f"pred.{want['layout']}", case["entries"], want["layout"])
        formulation = FORMULATIONS[case["formulation"]]
        # Told from the file where it can be (a single choice, its method): given otherwise.
        detail = {} if formulation == "single_choice" else {"formulation": formulation}
        got = reform_published(path, detail)
        assert got.extra["metrics"] == want["result"]["metrics"], (want["name"], want["layout"])
        assert list(got.notes) == want["result"]["notes"], (want["name"], want["layout"])
        assert got.extra["formulation"] == want["result"]["formulation"]


def test_score_as_published_through_the_console_script(tmp_path: Path) -> None:
    cases = json.loads((PARITY / "reform_files.json").read_text(encoding="utf-8"))["cases"]
    recorded = json.loads(BASELINE.read_text(encoding="utf-8"))["reform"]
    want = next(
        w for w in recorded if w["name"].startswith("likelihood") and w["layout"] == "jsonl"
    )
    (case,) = [c["input"] for c in cases if c["input"]["name"] == want["name"]]
    path = _write(tmp_path / "pred.jsonl", case["entries"], "jsonl")
    # No --reader: the layout says it is ReForm-Eval's; the method is told from the indices.
    done = lmmprobe("score", path, "--as-published", "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "reform" and doc["origin"]["tool"] == "reform-eval"
    assert doc["as_published"]["metrics"] == want["result"]["metrics"]
    assert doc["as_published"]["infer_method"] == "likelihood"


def test_headline_is_lmmprobes_reading_and_the_tools_figure_stands_beside_it(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "pred.json", ENTRIES, "json")
    done = lmmprobe("score", path, "--reader", "reform", "--as-published", "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    # lmmprobe reads "cat" as option A (the file's options are the item's): 3 of 4 right.
    assert doc["metrics"]["accuracy"]["value"] == 0.75 and doc["rows"] == 4
    assert doc["items"] == "file"
    # ReForm-Eval reads marks only: 2 of 4, and its instability over each sample's prompts.
    assert doc["as_published"]["metrics"]["accuracy"] == 0.5
    assert doc["as_published"]["metrics"]["format_hit_rate"] == 0.75
    table = lmmprobe("score", path, "--reader", "reform", "--as-published")
    assert table.returncode == 0, table.stderr
    assert "as published: ReForm-Eval (single_choice)" in table.stdout
    assert "instability" in table.stdout


def test_each_entry_is_a_row_with_reform_evals_own_verdict(tmp_path: Path) -> None:
    path = _write(tmp_path / "pred.json", ENTRIES, "json")
    seen: list[Any] = []
    run = score_file(
        path, None, on_rows=lambda rows, scores: seen.extend(zip(rows, scores, strict=True))
    )
    assert run.reader == "reform"
    ids = [sample.id for (sample, _, _, _), _ in seen]
    assert ids == ["1#1", "1#2", "2#1", "2#2"]
    verdicts = [pred.tool_verdict for (_, _, _, pred), _ in seen]
    assert verdicts == [1.0, 0.0, 0.0, 1.0]
    sample = seen[2][0][0]
    assert sample.choices == ["red", "green", "blue"] and sample.answer == 2


def test_import_stores_a_reform_file_as_a_run(tmp_path: Path) -> None:
    path = _write(tmp_path / "pred.json", ENTRIES, "json")
    db = tmp_path / "store.db"
    done = lmmprobe("import", path, "--db", db, "--model", "m", "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "reform" and doc["run_id"] and doc["rows"] == 4
    assert doc["metrics"]["accuracy"]["value"] == 0.75
    shown = lmmprobe("runs", "--db", db)
    assert doc["run_id"] in shown.stdout


def test_a_bad_entry_is_named_by_file_entry_and_field(tmp_path: Path) -> None:
    bad = [*ENTRIES[:2], {"sample_id": 3, "answer": 7, "answer_options": ["a", "b"],
                          "prediction": "(A)"}]  # fmt: skip
    path = _write(tmp_path / "pred.json", bad, "json")
    done = lmmprobe("score", path, "--reader", "reform")
    assert done.returncode == 0, done.stderr
    assert f"{path}:#3: answer: 7 is not an index of the 2 options (left out)" in done.stdout


def test_plain_score_leaves_bad_entries_out_names_the_first_20_and_scores_the_rest(
    tmp_path: Path,
) -> None:
    # One engine (issue 36, item 6): plain `score FILE` reads the file with the reform reader,
    # as every other tool's; 25 bad entries of five kinds are each left out in one line (the
    # first 20 named, all counted) and the 4 good ones scored, by lmmprobe and as published.
    kinds = [
        "not an entry",
        {"answer": 0, "answer_options": ["a", "b"], "prediction": "(A)"},
        {"sample_id": 9, "answer": 0, "answer_options": ["a", "b"]},
        {"sample_id": 9, "answer": "x", "answer_options": ["a", "b"], "prediction": "(A)"},
        {"sample_id": 9, "answer": 0, "answer_options": ["a"], "prediction": "(A)"},
    ]
    entries = [*ENTRIES[:2], *(kinds[i % 5] for i in range(25)), *ENTRIES[2:]]
    path = _write(tmp_path / "pred.json", entries, "json")
    done = lmmprobe("score", path, "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "reform" and doc["rows"] == 4 and doc["skipped"] == 25
    assert len(doc["problems"]) == 20
    assert doc["problems"][:5] == [
        f"{path}:#3: (entry): expected an object, got str (left out)",
        f"{path}:#4: sample_id: missing required field (left out)",
        f"{path}:#5: prediction: missing required field (left out)",
        f"{path}:#6: answer: expected an option index, got 'x' (left out)",
        f"{path}:#7: answer_options: expected a list of at least two option texts (left out)",
    ]
    assert doc["metrics"]["accuracy"]["value"] == 0.75  # as on the four good entries alone
    # ReForm-Eval's own figures leave out what its code cannot read: a one-option entry it
    # reads (lmmprobe makes no item of it), so 20 left out and 9 entries, 5 of them those.
    published = doc["as_published"]
    assert published["skipped"] == 20 and published["metrics"]["n"] == 9
    table = lmmprobe("score", path)
    assert table.returncode == 0, table.stderr
    said = " ".join(table.stdout.split())
    assert "skipped 25 entries for bad input (the others scored); the first 20 named below" in said
    assert (
        f"note: {path}:#27: answer_options: expected a list of at least two option texts"
        not in said
    )
    # Every entry bad (the first still ReForm-Eval's layout): one line, naming the first.
    only_bad = _write(tmp_path / "bad.json", [kinds[3], kinds[4], *kinds[:3]], "json")
    done = lmmprobe("score", only_bad)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no entry of the file could be read (5 left out; the first:" in done.stderr


def _long_entries(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(n):
            pred = f"({'ABCD'[i % 4]})" if i % 3 else f"no idea {i} " + "x" * 2_000
            entry = {"sample_id": i % 100, "answer": 1, "answer_options": ["a", "b", "c", "d"],
                     "prediction": pred}  # fmt: skip
            fh.write(("," if i else "") + json.dumps(entry))
        fh.write("]")
    return path


def test_the_reader_and_its_hook_read_in_memory_that_does_not_grow_with_the_file(
    tmp_path: Path,
) -> None:
    """3,000 and 12,000 entries (2,000-character predictions a third of them): about one peak.

    The reader yields a row at a time (what it keeps is a count per sample, for the ``#K`` of
    each id), and ReForm-Eval's hook reads the file again an entry at a time (``reads_rows =
    False``: ``score`` holds no row for it). The rest of the path is the one every reader's
    rows take (stored a chunk at a time).
    """
    import tracemalloc

    from lmmprobe.predictions.imported import READERS, ReadOptions

    reader = READERS.get("reform")

    def read(path: Path) -> int:
        n = sum(1 for _ in reader.read(path, ReadOptions()))
        assert reform_published(path).extra["metrics"]["n"] == n
        return n

    small = _long_entries(tmp_path / "small.json", 3_000)
    large = _long_entries(tmp_path / "large.json", 12_000)
    read(small)  # what the first read imports is not what the file costs
    peaks = []
    for path in (small, large):
        tracemalloc.start()
        try:
            read(path)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    size = large.stat().st_size
    assert peaks[1] < size / 1.5, (peaks, size)  # held whole, the text alone is `size`
    assert peaks[1] < 1.5 * peaks[0] + (1 << 20), peaks  # four times the file


def test_audit_names_the_entry_where_the_two_readings_part(tmp_path: Path) -> None:
    path = _write(tmp_path / "pred.json", ENTRIES, "json")
    done = lmmprobe("score", path, "--reader", "reform", "--audit", "-f", "json")
    assert done.returncode == 0, done.stderr
    audit = json.loads(done.stdout)["audit"]
    assert (audit["label_b"], audit["n"], audit["accuracy_a"], audit["accuracy_b"]) == (
        "reform-eval", 4, 0.75, 0.5,
    )  # fmt: skip
    # The second entry of sample 1 ("cat"): lmmprobe reads option A, ReForm-Eval reads nothing.
    assert [it["sample_id"] for it in audit["items"]] == ["1#2"]


def test_an_entry_whose_item_lmmprobe_cannot_ask_is_named_by_file_and_row(tmp_path: Path) -> None:
    # Before: "error: choices: 300 options, more than the 256 ..." naming no file, no entry
    # (the item's Sample refused it and nothing caught that). Now named by file and row, and
    # left out as any bad entry is (re-test 16 #13); with every entry so, the file is refused.
    many = {"sample_id": 3, "answer": 0, "answer_options": [f"o{i}" for i in range(300)],
            "prediction": "(A)"}  # fmt: skip
    path = _write(tmp_path / "pred.json", [*ENTRIES[:2], many], "json")
    done = lmmprobe("score", path, "--reader", "reform")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert f"{path}: row 3: choices: 300 options, more than the 256" in said
    assert "(left out)" in said and "Traceback" not in done.stderr
    alone = _write(tmp_path / "alone.json", [many], "json")
    done = lmmprobe("score", alone, "--reader", "reform")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{alone}: row 1: choices: 300 options" in " ".join(done.stderr.split())


def _object_file(path: Path, members: int, size: int, data: bool) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("{")
        for i in range(members):
            fh.write(f'"m{i}": "{"x" * size}", ')
        fh.write('"data": ' + json.dumps(ENTRIES[:1]) if data else '"last": 1')
        fh.write("}")
    return path


def test_a_file_of_one_object_holds_one_member_at_a_time_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: every member of the object was kept to pick `data` at the end: a 720 MB file of
    # twelve 60 MB members peaked at 919 MB. The bound, shrunk here, is one element's.
    import tracemalloc

    from lmmprobe.predictions import _stream

    monkeypatch.setattr(_stream, "MAX_ELEMENT", 3_000_000)
    path = _object_file(tmp_path / "pred.json", members=40, size=1_000_000, data=True)
    tracemalloc.start()
    try:
        got = list(_stream.iter_entries(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [v for _, v in got] == ENTRIES[:1]
    # The file is 40 MB; the reader's own buffers take about 17 MB whatever the file.
    assert peak < 30_000_000, peak


def test_an_object_past_one_entrys_bound_with_no_data_list_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lmmprobe.data import DataError
    from lmmprobe.predictions import _stream

    monkeypatch.setattr(_stream, "MAX_ELEMENT", 3_000_000)
    path = _object_file(tmp_path / "pred.json", members=5, size=1_000_000, data=False)
    with pytest.raises(DataError, match="an object of more than 2 MiB with no data list"):
        list(_stream.iter_entries(path))


def test_an_entry_whose_item_lmmprobe_refuses_is_left_out_and_the_rest_scored(
    tmp_path: Path,
) -> None:
    # Re-test 16 #13: an entry of 100,000 options (more than a sample may offer) stopped the
    # whole file, where any other bad entry is left out in one line and the rest scored. And
    # #14: an answer of 1e308 is named as the file wrote it, not as a 309-digit integer.
    huge = {"sample_id": 9, "answer": 0, "answer_options": ["o"] * 100_000, "prediction": "(A)"}
    far = {"sample_id": 10, "answer": 1e308, "answer_options": ["a", "b"], "prediction": "(A)"}
    path = _write(tmp_path / "pred.json", [*ENTRIES[:2], huge, far, *ENTRIES[2:]], "json")
    done = lmmprobe("score", path, "--reader", "reform", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 4 and doc["skipped"] == 2
    assert doc["metrics"]["accuracy"]["value"] == 0.75  # as on the four good entries alone
    refused, named = doc["problems"]
    assert refused.startswith(f"{path}: row 3: ") and refused.endswith("(left out)")
    assert len(refused) < 1_000
    assert named == f"{path}:#4: answer: 1e+308 is not an index of the 2 options (left out)"
