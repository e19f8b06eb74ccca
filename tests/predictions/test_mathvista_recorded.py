"""MathVista's recorded GPT-4 extractions scored as MathVista's calculate_score scores them.

``fixtures/mathvista/output_skills.json`` is a MathVista output file rescored by MathVista's own
``calculate_score.py`` (lupantech/MathVista @ 53d5258), which also wrote
``calculate_score_skills.json`` (see the fixture README). Its extractions differ from what
lmmprobe's rules read from the responses; the file's extraction is a recorded judge answer, so
``score`` and ``import`` give MathVista's own figure (the mean of its ``true_false``) and its
per-skill figures, with no judge called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    MATHVISTA_META,
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

FIXTURES = Path(__file__).parent / "fixtures" / "mathvista"
OUTPUT = FIXTURES / "output_skills.json"
OFFICIAL = json.loads((FIXTURES / "calculate_score_skills.json").read_text())
RECORDS: dict[str, dict[str, Any]] = json.loads(OUTPUT.read_text())
STR = Value("string")

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _copy(tmp_path: Path, records: list[dict[str, Any]] | None = None) -> str:
    """A MathVista testmini copy of the file's problems, each with its own metadata.

    `records` (default: this module's file) may lack what the benchmark shows and scoring does
    not read (question, query, image: an excerpt keeps the fields its figures need).
    """
    records = list(RECORDS.values()) if records is None else records
    rows = {
        "pid": [r["pid"] for r in records],
        "question": [r.get("question", f"(problem {r['pid']})") for r in records],
        "image": [r.get("image", f"images/{r['pid']}.jpg") for r in records],
        "decoded_image": [
            {"bytes": tiny_png((20 * i % 256, 80, 160)), "path": f"{i}.png"}
            for i in range(len(records))
        ],
        "choices": [r["choices"] for r in records],
        "unit": [r["unit"] for r in records],
        "precision": [None if r["precision"] is None else float(r["precision"]) for r in records],
        "answer": [r["answer"] for r in records],
        "question_type": [r["question_type"] for r in records],
        "answer_type": [r["answer_type"] for r in records],
        "metadata": [r["metadata"] for r in records],
        "query": [r.get("query", f"(problem {r['pid']})") for r in records],
    }
    feats = Features({
        "pid": STR, "question": STR, "image": STR, "decoded_image": Image(),
        "choices": Seq(STR), "unit": STR, "precision": Value("float64"), "answer": STR,
        "question_type": STR, "answer_type": STR, "metadata": MATHVISTA_META, "query": STR,
    })  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mathvista", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    return f"mathvista,path={folder}"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache")}


def _value(metrics: dict[str, Any], name: str) -> Any:
    return (metrics.get(name) or {}).get("value")


def _assert_mathvista_figures(metrics: dict[str, Any], breakdown: dict[str, Any]) -> None:
    true_false = [r["true_false"] for r in RECORDS.values()]
    assert _value(metrics, "mathvista_accuracy") == pytest.approx(sum(true_false) / len(true_false))
    assert _value(metrics, "mathvista_accuracy") == pytest.approx(OFFICIAL["average"]["accuracy"])
    # lmmprobe's rule-based reading of the same responses scores them otherwise.
    assert _value(metrics, "accuracy") != pytest.approx(OFFICIAL["average"]["accuracy"])
    skills = breakdown["skills"]
    assert set(skills) == set(OFFICIAL["skills"])
    for skill, theirs in OFFICIAL["skills"].items():
        ours = skills[skill]["mathvista_accuracy"]
        assert (ours["value"], ours["n"]) == (pytest.approx(theirs["accuracy"]), theirs["total"])


def test_score_json_gives_mathvistas_figure_and_skills(tmp_path: Path) -> None:
    done = lmmprobe(
        "score", OUTPUT, "--benchmark", _copy(tmp_path), "--format", "json", **_env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reader"] == "mathvista" and doc["rows"] == len(RECORDS)
    _assert_mathvista_figures(doc["metrics"], doc["breakdown"])
    # Every item was decided by the recorded extraction: none left to a judge.
    assert _value(doc["metrics"], "judge_coverage") == pytest.approx(1.0)


@pytest.mark.parametrize("more", [("--audit",), ("--by", "skills"), ("--by", "grade")])
def test_score_json_with_audit_and_breakdowns_is_json(tmp_path: Path, more: tuple[str]) -> None:
    done = lmmprobe(
        "score", OUTPUT, "--benchmark", _copy(tmp_path), "--format", "json", *more,
        **_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert _value(doc["metrics"], "mathvista_accuracy") == pytest.approx(7 / 12)


def test_score_table_lists_the_skills(tmp_path: Path) -> None:
    done = lmmprobe("score", OUTPUT, "--benchmark", _copy(tmp_path), **_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "by skills" in done.stdout and "logical reasoning" in done.stdout


def test_import_stores_the_recorded_extractions_as_judgements(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    env = _env(tmp_path)
    done = lmmprobe(
        "import", OUTPUT, "--benchmark", _copy(tmp_path), "--model", "bard", "--db", db,
        "--format", "json", **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    results = json.loads((tmp_path / run_id / "results.json").read_text())
    model = results["models"]["bard"]
    _assert_mathvista_figures(model["metrics"], model["breakdown"])
    exported = lmmprobe("export", run_id, "--db", db, "--format", "jsonl", **env)
    assert exported.returncode == 0, exported.stderr
    rows = {r["sample_id"]: r for r in map(json.loads, exported.stdout.splitlines())}
    (judgement,) = rows["mathvista/6"]["judgements"]
    assert judgement["judge"] == "mathvista:gpt-4 (recorded)"
    assert (judgement["protocol"], judgement["version"]) == ("mathvista-extract", "recorded")
    assert judgement["decided_by"] == "judge" and judgement["reading"] == "D"
    report = lmmprobe("report", run_id, "--db", db, "--format", "json", **env)
    assert report.returncode == 0, report.stderr
    (shown,) = json.loads(report.stdout)["leaderboard"]
    assert shown["judged"] == len(RECORDS)
    assert _value(shown["metrics"], "mathvista_accuracy") == pytest.approx(7 / 12)


def test_an_empty_recorded_extraction_is_unjudged_and_counted_wrong_as_mathvista_does(
    tmp_path: Path,
) -> None:
    """MathVista's extraction is ``""`` when its GPT call failed: unjudged, and wrong.

    MathVista's calculate_score counts such an item wrong (its ``true_false`` says so), and so
    does ``mathvista_accuracy``: every item in the denominator, so the figure is the file's
    own; ``mathvista_accuracy_judged_only`` leaves the two out. ``score --audit`` gives
    lmmprobe's side the verdicts ``mathvista_accuracy`` uses, so its figure is the one printed.
    """
    records = json.loads(json.dumps(RECORDS))
    failed = [pid for pid, r in records.items() if r["question_type"] == "free_form"][:2]
    for pid, empty in zip(failed, ("", None), strict=True):
        records[pid].update(response=records[pid]["answer"], extraction=empty, true_false=False)
    path = tmp_path / "output_failed.json"
    path.write_text(json.dumps(records))
    bench, env = _copy(tmp_path), _env(tmp_path)
    done = lmmprobe("score", path, "--benchmark", bench, "--format", "json", **env)
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    every = [r["true_false"] for r in records.values()]
    judged = [r["true_false"] for pid, r in records.items() if pid not in failed]
    assert metrics["mathvista_accuracy"]["n"] == len(records)
    assert _value(metrics, "mathvista_accuracy") == pytest.approx(sum(every) / len(every))
    assert metrics["mathvista_accuracy_judged_only"]["n"] == len(records) - 2
    only = _value(metrics, "mathvista_accuracy_judged_only")
    assert only == pytest.approx(sum(judged) / len(judged))
    assert _value(metrics, "judge_coverage") == pytest.approx((len(records) - 2) / len(records))
    audited = lmmprobe("score", path, "--benchmark", bench, "--audit", **env)
    assert audited.returncode == 0, audited.stderr
    figure = 100 * sum(every) / len(every)
    assert f"lmmprobe {figure:.2f} vs mathvista {figure:.2f} on 12 paired items" in audited.stdout
    assert "left out" not in audited.stdout


def test_an_empty_lmms_eval_judge_extraction_is_unjudged(tmp_path: Path) -> None:
    """lmms-eval's ``llm_as_judge_eval`` records MathVista's extraction; empty or null: unjudged.

    Layout of lmms_eval/tasks/mathvista/utils.py ``mathvista_process_results`` (@ 75571cf).
    """
    lines = []
    for n, (pid, r) in enumerate(RECORDS.items()):
        result = {
            "question_id": pid, "query": r["query"], "choices": r["choices"],
            "answer": r["answer"], "extraction": r["extraction"], "prediction": r["prediction"],
            "true_false": r["true_false"], "question_type": r["question_type"],
            "answer_type": r["answer_type"], "precision": r["precision"], "metadata": {},
        }  # fmt: skip
        if n < 2:  # the evaluator's GPT call failed: nothing extracted, scored wrong
            result.update(extraction="" if n == 0 else None, true_false=False)
        lines.append({
            "doc_id": n, "target": r["answer"], "filtered_resps": [r["response"]],
            "doc_hash": "x", "llm_as_judge_eval": result, "submission": result,
        })  # fmt: skip
    log = tmp_path / "20250101_samples_mathvista_testmini.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = lmmprobe(
        "score", log, "--benchmark", _copy(tmp_path), "--format", "json", **_env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    every = [line["llm_as_judge_eval"]["true_false"] for line in lines]
    judged = every[2:]
    assert metrics["mathvista_accuracy"]["n"] == len(lines)
    assert _value(metrics, "mathvista_accuracy") == pytest.approx(sum(every) / len(every))
    only = _value(metrics, "mathvista_accuracy_judged_only")
    assert only == pytest.approx(sum(judged) / len(judged))
    assert _value(metrics, "judge_coverage") == pytest.approx((len(lines) - 2) / len(lines))


def test_compare_audit_of_an_imported_run_gives_its_results_figure(tmp_path: Path) -> None:
    # The imported run's side of `compare --audit` is the verdict its mathvista_accuracy used
    # (the recorded extractions), so it says the figure its results.json holds.
    db, env, bench = tmp_path / "store.db", _env(tmp_path), _copy(tmp_path)
    done = lmmprobe(
        "import", OUTPUT, "--benchmark", bench, "--model", "bard", "--db", db,
        "--out", tmp_path / "imported", **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = json.loads((tmp_path / "imported" / "results.json").read_text())
    figure = _value(imported["models"]["bard"]["metrics"], "mathvista_accuracy")
    assert figure == pytest.approx(7 / 12)
    done = lmmprobe(
        "run", "-m", "first", "-d", bench, "-q", "--db", db, "--out", tmp_path / "first", **env
    )
    assert done.returncode == 0, done.stderr
    first = json.loads((tmp_path / "first" / "results.json").read_text())
    compared = lmmprobe(
        "compare", first["run_id"], imported["run_id"], "--audit", "--db", db, "-f", "json",
        **env,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    doc = json.loads(compared.stdout)
    assert doc["n"] == len(RECORDS)
    assert doc["accuracy_b"] == pytest.approx(figure)
    ours = _value(first["models"]["first"]["metrics"], "mathvista_accuracy")
    assert doc["accuracy_a"] == pytest.approx(ours)
    assert sum(c["net_items"] for c in doc["causes"].values()) == pytest.approx(doc["gap_items"])
