"""lmms-eval's per-sample judge grades are recorded judgements that decide the official figure.

The logs under ``fixtures/lmms_eval/judged/`` were written by lmms-eval's own MM-Vet and
LLaVA-Bench task code (``mmvet_process_results``, ``llava_process_results`` @ 75571cf) with a
scripted judge, and saved as ``save_results_samples`` saves them; ``expected.json`` holds what
the tasks' own aggregations return over them (see ``generate.py`` there). Scored by lmmprobe
against a copy of each benchmark, the official figure is lmmprobe's metric over lmms-eval's
recorded grades, equal to lmms-eval's own; a failed review is counted apart in the coverage and
enters the figure as lmms-eval's [-1, -1].
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.predictions.imported import READERS, ReadOptions

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

HERE = Path(__file__).parent / "fixtures" / "lmms_eval" / "judged"
EXPECTED: dict[str, Any] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
MMVET_LOG = HERE / "20261130_120000_samples_mmvet.jsonl"
LLAVA_LOG = HERE / "20261130_120000_samples_llava_in_the_wild.jsonl"
STR = Value("string")


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((40 * i % 255, 90, 120)), "path": f"{i}.png"}


def _mmvet_copy(tmp_path: Path) -> Path:
    logged = [r["gpt_eval_score"] for r in _records(MMVET_LOG)]
    rows = {
        "question_id": [r["question_id"] for r in logged],
        "image": [_img(i) for i in range(len(logged))],
        "question": [r["question"] for r in logged],
        "answer": [r["gt_answer"] for r in logged],
        "image_source": ["source"] * len(logged),
        "capability": [r["capabilities"].split(",") for r in logged],
    }
    feats = Features({"question_id": STR, "image": Image(), "question": STR, "answer": STR,
                      "image_source": STR, "capability": Sequence(STR)})  # fmt: skip
    return write_hub_snapshot(tmp_path / "mmvet", {"test": Dataset.from_dict(rows, features=feats)})


def _llava_copy(tmp_path: Path) -> Path:
    logged = [r["gpt_eval_llava_all"] for r in _records(LLAVA_LOG)]
    n = len(logged)
    rows = {
        "question_id": list(range(n)),
        "question": [r["question"] for r in logged],
        "image": [_img(i) for i in range(n)],
        "caption": [r["context"] for r in logged],
        "gpt_answer": [r["ans1"] for r in logged],
        "category": [r["category"].removeprefix("llava_bench_") for r in logged],
        "image_id": [f"{i:03d}" for i in range(n)],
    }
    feats = Features({"question_id": Value("int8"), "question": STR, "image": Image(),
                      "caption": STR, "gpt_answer": STR, "category": STR, "image_id": STR})  # fmt: skip
    return write_hub_snapshot(
        tmp_path / "llava-wild", {"train": Dataset.from_dict(rows, features=feats)}
    )


def _score(log: Path, data: str) -> dict[str, Any]:
    done = lmmprobe("score", log, "--benchmark", data, "--format", "json", HF_HUB_OFFLINE="1")
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _metrics(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: (v or {}).get("value") for k, v in doc["metrics"].items()}


def test_mmvet_official_score_is_lmms_evals_from_its_recorded_grades(tmp_path: Path) -> None:
    doc = _score(MMVET_LOG, f"mmvet,path={_mmvet_copy(tmp_path)}")
    metrics = _metrics(doc)
    assert metrics["mmvet_score"] == pytest.approx(EXPECTED["mmvet"]["gpt_eval_score"])
    assert metrics["judge_coverage"] == 1.0
    judge = doc["judge"]
    assert judge["judges"] == ["lmms-eval (recorded)"], judge


def test_llava_wild_relative_score_is_lmms_evals_with_failed_reviews_counted_apart(
    tmp_path: Path,
) -> None:
    doc = _score(LLAVA_LOG, f"llava-wild,path={_llava_copy(tmp_path)}")
    metrics = _metrics(doc)
    assert metrics["llava_wild_relative"] == EXPECTED["llava_in_the_wild"]["gpt_eval_llava_all"]
    failed = sum(r["gpt_eval_llava_all"]["scores"] == [-1, -1] for r in _records(LLAVA_LOG))
    assert failed == 3
    n = len(_records(LLAVA_LOG))
    assert metrics["judge_coverage"] == pytest.approx((n - failed) / n)


def test_each_grade_is_read_with_its_judge_and_a_bad_one_named(tmp_path: Path) -> None:
    reader = READERS.get("lmms-eval")
    rows = list(reader.read(LLAVA_LOG, ReadOptions()))
    grades = [p.tool_grade for p in rows]
    assert all(g is not None and g.protocol == "llava-wild-review" for g in grades)
    first = next(g for g in grades if g is not None and g.value is not None)
    assert first.detail == {"eval_model": "gpt-4o-2024-11-20", "reference": 8.0}
    bad = tmp_path / "samples_llava_in_the_wild.jsonl"
    record = _records(LLAVA_LOG)[1]
    record["gpt_eval_llava_all"]["scores"] = [8, "six"]
    bad.write_text(json.dumps(record) + "\n" + LLAVA_LOG.read_text(encoding="utf-8"))
    read = list(reader.read(bad, ReadOptions()))
    assert read[0].refused is not None and "gpt_eval_llava_all.scores" in read[0].refused
    # One line naming the file, the line and the field; the other rows are read.
    assert read[0].refused.startswith(f"{bad}:1: ") and "'six'" in read[0].refused
    assert len(read) == 1 + len(rows) and all(p.refused is None for p in read[1:])


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(score=_JSON, scores=_JSON, model=_JSON)
def test_any_logged_grade_is_read_or_its_row_named(
    tmp_path: Path, score: Any, scores: Any, model: Any
) -> None:
    mmvet, llava = _records(MMVET_LOG)[0], _records(LLAVA_LOG)[0]
    mmvet["gpt_eval_score"] |= {"score": score, "eval_model": model}
    llava["gpt_eval_llava_all"] |= {"scores": scores, "eval_model": model}
    reader = READERS.get("lmms-eval")
    for name, record in (("samples_mmvet.jsonl", mmvet), ("samples_llava.jsonl", llava)):
        path = tmp_path / name
        path.write_text(json.dumps(record, allow_nan=True) + "\n", encoding="utf-8")
        (row,) = reader.read(path, ReadOptions())
        grade = row.tool_grade
        if row.refused is not None:
            assert row.refused.startswith(f"{path}:1: ") and grade is None
        else:
            assert grade is not None
            # As logged: a 0-1 grade, or a score on LLaVA-Bench's scale (-1 where none).
            assert grade.value is None or -1.0 <= grade.value <= 10.0


@pytest.mark.parametrize(
    ("grade", "said"),
    [
        # A grade of the wrong shape used to leave the row out of MM-Vet's score unsaid.
        ([{"score": 1.0}], "gpt_eval_score: [{'question_id': 'v1_0'"),
        # The field was named "gpt_eval_score.verdict", a key the file does not have.
        ({"a": [1]}, "gpt_eval_score.score: expected a verdict (number or true/false)"),
        # A 401-digit number filled the cut message and left out why it was refused.
        (10**400, "gpt_eval_score.score: the verdict 1000"),
    ],
    ids=["list", "nested", "huge"],
)
def test_a_bad_recorded_grade_is_its_rows_one_line_through_the_console(
    tmp_path: Path, grade: Any, said: str
) -> None:
    records = _records(MMVET_LOG)
    first = records[0]["gpt_eval_score"]
    if isinstance(grade, list):
        records[0]["gpt_eval_score"] = [first]
    else:
        first["score"] = grade
    log = tmp_path / "samples_mmvet.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    copy = _mmvet_copy(tmp_path)
    done = lmmprobe("score", log, "--benchmark", f"mmvet,path={copy}", columns=1000,
                    HF_HUB_OFFLINE="1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith(f"note: {log}:1: "))
    assert said in line, line
    assert len(line) < 300 and line.endswith("(kept as an error row)"), line
    assert not isinstance(grade, int) or "is not a finite number" in line
    assert "answers judged (mmvet-grade recorded): 0 by rule, 5 by judge" in done.stdout


def test_the_audit_pairs_mmvets_recorded_grades_with_the_figure_printed(tmp_path: Path) -> None:
    # lmmprobe's side of the audit was the rule's exact match (16.67), not the grades its own
    # MM-Vet figure (60.0) is made of; the 43-point gap was blamed on "extraction".
    copy = _mmvet_copy(tmp_path)
    done = lmmprobe("score", MMVET_LOG, "--benchmark", f"mmvet,path={copy}", "--audit",
                    columns=1000, HF_HUB_OFFLINE="1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    figure = EXPECTED["mmvet"]["gpt_eval_score"]  # in points
    n = len(_records(MMVET_LOG))
    assert f"lmmprobe {figure:.2f} vs lmms-eval {figure:.2f} on {n} paired items: gap +0.00" in (
        done.stdout
    ), done.stdout
    assert "extraction or normalization" not in done.stdout
