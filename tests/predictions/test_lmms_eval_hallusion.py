"""lmms-eval's HallusionBench verdict files are recorded judgements that decide aAcc/fAcc/qAcc.

The output folder under ``fixtures/lmms_eval/hallusion/out/`` was written by lmms-eval's own
HallusionBench code (``hb_process_results``, ``hb_aggregation_result`` and
``evaluate_by_chatgpt`` @ 75571cf) with a scripted judge; ``expected.json`` holds the figures
its aggregation returned (see ``generate.py`` there). Scored with no copy of the benchmark.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.predictions.test_file_items import _offline

from lmmprobe.predictions.readers._hallusion_sidecar import HallusionSidecars

HERE = Path(__file__).parent / "fixtures" / "lmms_eval" / "hallusion"
EXPECTED: dict[str, float] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
LOG = "fake-vlm/20261130_120000_samples_hallusion_bench_image.jsonl"
VS = "gpt_response/hallusion_output_vs_model.json"


def _score(tmp_path: Path, log: Path) -> dict[str, Any]:
    done = lmmprobe(
        "score", log, "--benchmark", "hallusionbench", "--format", "json", **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _metrics(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: (v or {}).get("value") for k, v in doc["metrics"].items()}


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(HERE / "out", out)
    return out


def test_official_figures_are_lmms_evals_from_its_verdict_files(tmp_path: Path) -> None:
    doc = _score(tmp_path, HERE / "out" / LOG)
    metrics = _metrics(doc)
    for key in ("aAcc", "fAcc", "qAcc"):
        assert round(100 * metrics[f"hallusionbench_{key.lower()}"], 4) == EXPECTED[key]
    # "hmm maybe" is no verdict: lmms-eval read it "2", which the official figures keep.
    assert metrics["judge_coverage"] == pytest.approx(11 / 12)
    assert doc["judge"]["judges"] == ["lmms-eval (recorded)"], doc["judge"]
    assert doc["judge"]["decided"] == {"rule": 0, "judge": 11, "unjudged": 1}
    # Its question has a figure, where "2" is wrong anyway: the strict figures agree.
    for key in ("aacc", "facc", "qacc"):
        assert metrics[f"hallusionbench_{key}_strict"] == metrics[f"hallusionbench_{key}"]
    assert "hallusion_output_vs_model.json" in doc["origin"]["detail"]["judge_files"]


def test_a_recorded_reply_holding_no_verdict_is_unjudged_read_2_officially_and_wrong_strictly(
    tmp_path: Path,
) -> None:
    # lmms-eval writes "2" for a judge reply holding none of incorrect/correct/unclear; on a
    # visual-supplement question asked without its figure its figures count that "2" right.
    # lmmprobe leaves the question unjudged: the official figures keep lmms-eval's reading
    # (its published numbers), the strict ones count it wrong.
    out = _copy(tmp_path)
    records = json.loads((out / VS).read_text(encoding="utf-8"))
    paris = next(r for r in records if r["model_prediction"] == "Paris is the capital.")
    assert paris["figure_id"] == "0" and paris["gpt_answer"].endswith("\nOutput:unclear")
    paris["gpt_answer"] = paris["gpt_answer"].removesuffix("unclear") + "I would say so"
    (out / VS).write_text(json.dumps(records, indent=4), encoding="utf-8")
    doc = _score(tmp_path, out / LOG)
    metrics = _metrics(doc)
    for key in ("aAcc", "fAcc", "qAcc"):
        assert round(100 * metrics[f"hallusionbench_{key.lower()}"], 4) == EXPECTED[key]
    assert doc["judge"]["decided"] == {"rule": 0, "judge": 10, "unjudged": 2}
    assert metrics["hallusionbench_aacc_strict"] == pytest.approx(6 / 12)  # 7 of 12 officially
    # Its pair was wrong already (figure 1 "incorrect"); it has no figure for fAcc.
    for key in ("qacc", "facc"):
        assert metrics[f"hallusionbench_{key}_strict"] == metrics[f"hallusionbench_{key}"]
    assert doc["problems"] == []  # the judge's own failure, not the file's


def test_without_its_verdict_files_the_log_is_read_by_rule(tmp_path: Path) -> None:
    out = _copy(tmp_path)
    shutil.rmtree(out / "gpt_response")
    doc = _score(tmp_path, out / LOG)
    assert doc.get("judge") in (None, {}) or not doc["judge"].get("judges"), doc["judge"]
    assert "judge_files" not in doc["origin"]["detail"]


def test_a_stale_record_leaves_its_item_unjudged_and_named(tmp_path: Path) -> None:
    # evaluate_by_chatgpt resumes by count: a file of an earlier run keeps its verdicts on
    # another model's replies. Such a record is not used; its item is counted apart.
    out = _copy(tmp_path)
    records = json.loads((out / VS).read_text(encoding="utf-8"))
    records[1]["model_prediction"] = "Yes, much higher."
    records[2] = "not a record"
    (out / VS).write_text(json.dumps(records, indent=4), encoding="utf-8")
    doc = _score(tmp_path, out / LOG)
    metrics = _metrics(doc)
    assert metrics["judge_coverage"] == pytest.approx(10 / 12)
    assert doc["judge"]["decided"] == {"rule": 0, "judge": 10, "unjudged": 2}
    # One line per item: where its record is, and why it is not used.
    assert doc["problems"] == [
        f"{out / VS}:#2: model_prediction 'Yes, much higher.' is not the log's reply "
        "'No, lower.' (a stale verdict file): not used (left unjudged)",
        "no record of the question VS_chart_0_2_0 in the lmms-eval verdict files (left unjudged)",
    ], doc["problems"]
    problem = doc["origin"]["detail"]["judge_files_problems"]
    assert problem == f"{out / VS}:#3: (record): expected an object, got str"


def test_a_long_question_key_is_named_cut(tmp_path: Path) -> None:
    # Before: a 500 KB question_id in the log printed a 500 KB note; one in a verdict file
    # judged twice put as much into the origin's judge_files_problems.
    out = _copy(tmp_path)
    log = out / LOG
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for metric in ("aAcc", "fAcc", "qAcc"):
        rows[0][metric]["question_id"] = "Q" * 500_000
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    records = json.loads((out / VS).read_text(encoding="utf-8"))
    records[0]["question_id"] = "R" * 500_000
    records.append(dict(records[0]))
    (out / VS).write_text(json.dumps(records), encoding="utf-8")
    done = lmmprobe("score", log, "--benchmark", "hallusionbench", **_offline(tmp_path))
    assert done.returncode == 0, done.stderr[:2000]
    assert len(done.stdout) + len(done.stderr) < 20_000
    assert "no record of the question VD_illusion_0_0_QQQ" in " ".join(done.stdout.split())
    doc = _score(tmp_path, log)
    problem = doc["origin"]["detail"]["judge_files_problems"]
    assert "is judged twice" in problem and len(problem) < 1_000, len(problem)


def test_verdict_files_beside_a_log_in_the_output_folder_are_found(tmp_path: Path) -> None:
    out = _copy(tmp_path)
    moved = out / Path(LOG).name
    (out / LOG).rename(moved)
    metrics = _metrics(_score(tmp_path, moved))
    assert round(100 * metrics["hallusionbench_aacc"], 4) == EXPECTED["aAcc"]


@pytest.mark.parametrize("given", ["out", f"out/{VS}"])
def test_the_output_folder_or_a_verdict_file_stands_for_its_log(tmp_path: Path, given: str) -> None:
    doc = _score(tmp_path, HERE / given)
    assert doc["reader"] == "lmms-eval" and doc["origin"]["path"].endswith(LOG)
    assert round(100 * _metrics(doc)["hallusionbench_qacc"], 4) == EXPECTED["qAcc"]


def test_the_headline_accuracy_takes_the_recorded_verdict_where_the_rule_reads_no_yes_or_no(
    tmp_path: Path,
) -> None:
    # accuracy read every answer against "yes"/"no" as an exact open answer: 0.0 while
    # aAcc was 58.33. The rule now reads each answer's yes or no (9 of 12); the 3 it cannot
    # read ("I cannot tell.", "Not sure without a chart.", "Paris is the capital.") take
    # lmms-eval's recorded verdict, here all "2" or "0": wrong.
    doc = _score(tmp_path, HERE / "out" / LOG)
    metrics = _metrics(doc)
    assert metrics["accuracy"] == pytest.approx(6 / 12)
    assert metrics["unparsed_rate"] == pytest.approx(3 / 12)
    assert doc["judged_headline"] == {"judges": ["lmms-eval (recorded)"], "answers": 3,
                                      "correct": 0, "metrics": ["accuracy", "balanced_accuracy"]}  # fmt: skip
    # Where the recorded judge said "correct" of an answer the rule cannot read, it counts.
    out = _copy(tmp_path)
    records = json.loads((out / VS).read_text(encoding="utf-8"))
    paris = next(r for r in records if r["model_prediction"] == "Paris is the capital.")
    paris["gpt4v_output_gpt_check"] = "1"
    (out / VS).write_text(json.dumps(records, indent=4), encoding="utf-8")
    done = lmmprobe("score", out / LOG, "--benchmark", "hallusionbench", **_offline(tmp_path))
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "accuracy 0.583" in text and "accuracy (rules only) 0.500" in text, done.stdout
    assert ("accuracy, balanced_accuracy judged: 3 answer(s) the rules could not read count as "
            "lmms-eval (recorded) read them (1 right)") in text  # fmt: skip


def test_import_of_the_output_folder_stores_the_recorded_verdicts(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    done = lmmprobe("import", HERE / "out", "--benchmark", "hallusionbench", "--db", db,
                    "-f", "json", **_offline(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert round(100 * _metrics(said)["hallusionbench_facc"], 4) == EXPECTED["fAcc"], said


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=40),
    st.sampled_from(["0", "1", "2", "VD", "VS"]), st.just("x" * 20_000),
)  # fmt: skip
_KEYS = st.sampled_from(["category", "subcategory", "set_id", "figure_id", "question_id",
                         "model_prediction", "gpt4v_output_gpt_check", "gpt_answer"])  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=8), _VALUES), max_size=30),
    tail=st.sampled_from(["", "]", "[" * 5000, "{", "\x00"]),
)
def test_any_verdict_file_is_read_or_its_records_named(
    tmp_path_factory: pytest.TempPathFactory, records: list[Any], tail: str
) -> None:
    folder = tmp_path_factory.mktemp("side")
    path = folder / "hallusion_output_vs_model.json"
    text = json.dumps(records)
    path.write_text(text[:-1] + tail if tail else text, encoding="utf-8")
    read = HallusionSidecars.read([path])
    # Every entry is either a kept verdict or a named problem; nothing raises.
    assert all(line.startswith(str(path)) for line in read.problems)
    assert len(read.records) + read.skipped <= len(records) + 1
    for record in read.records.values():
        assert record.verdict in ("0", "1", "2")
        grade = read.grade(
            {"category": "VS", "subcategory": "s", "set_id": 0, "figure_id": 0, "question_id": 0},
            "",
        )
        assert grade is not None and grade.protocol == "hallusionbench-correct"


def test_verdict_records_hold_no_judged_reply_whole(tmp_path: Path) -> None:
    # Before: every record's model_prediction was held whole until the log was read: memory
    # grew with the verdict file (here 24 replies of 2 MB: about 48 MB kept).
    doc = {"category": "VS", "subcategory": "chart", "set_id": "0", "figure_id": "0"}
    reply = "y" * (2 << 20)
    records = [
        {**doc, "question_id": str(i), "model_prediction": reply + str(i),
         "gpt4v_output_gpt_check": "1"}
        for i in range(24)
    ]  # fmt: skip
    path = tmp_path / "hallusion_output_vs_model.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    del records
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        read = HallusionSidecars.read([path])
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(read.records) == 24
    assert kept < 4 << 20, kept
    # The verdicts still count exactly where the record judged the log's reply.
    grade = read.grade({**doc, "question_id": "3"}, reply + "3")
    assert grade is not None and grade.value == 1.0
    stale = read.grade({**doc, "question_id": "3"}, reply + "4")
    assert stale is not None and stale.value is None and "a stale verdict file" in stale.reason
    assert f"model_prediction {(reply + '3')!r:.60} is not the log's reply" in stale.reason


def test_a_huge_verdict_file_record_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "hallusion_output_vd_model.json"
    path.write_text('[{"model_prediction": "' + "y" * (80 << 20) + '"}]', encoding="utf-8")
    read = HallusionSidecars.read([path])
    assert read.records == {} and len(read.problems) == 1 and str(path) in read.problems[0]


@pytest.mark.parametrize("given", ["out", f"out/{VS}"])
def test_an_output_folder_of_two_models_logs_says_to_give_the_log(
    tmp_path: Path, given: str
) -> None:
    # Before: "no reader recognises this layout" for the folder, and the verdict file was
    # taken for another layout that asked for a copy of the benchmark.
    out = _copy(tmp_path)
    (out / "other-vlm").mkdir()
    (out / "other-vlm" / Path(LOG).name).write_bytes((out / LOG).read_bytes())
    done = lmmprobe(
        "score", tmp_path / given, "--benchmark", "hallusionbench", **_offline(tmp_path)
    )
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert "and 2 samples logs (" in said and "give the log to score itself" in said, said
    assert str(out / LOG) in said and "no reader recognises" not in said
