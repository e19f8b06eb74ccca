"""The prediction readers on files in each tool's real or coded layout, and hostile variants.

Fixtures under ``fixtures/``: an lmms-eval 0.7.3 ``--log_samples`` log made by the real tool
(see ``fixtures/lmms_eval/README.md``), MathVista's ``results/bard/output_bard.json`` (6 of its
1000 records, lupantech/MathVista @ 53d5258) and MMMU's ``example_outputs/llava1.5_13b`` (3
records of 2 subjects and the parsed answers of the same ids, MMMU-Benchmark/MMMU @ bb0b95a).
VLMEvalKit tables are written here as its ``dump`` writes them (pandas, ``QUOTE_ALL``).
"""

from __future__ import annotations

import csv
import json
import sys
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from lmmprobe.data import json_stream
from lmmprobe.data.base import DataError
from lmmprobe.predictions import _stream
from lmmprobe.predictions.imported import READERS, ImportedPrediction, ReadOptions
from lmmprobe.predictions.scoring import (
    detect_reader,
    plan_import,
    score_imported,
    with_tool_reading,
)
from lmmprobe.schema import Sample

FIXTURES = Path(__file__).parent / "fixtures"
LMMS_LOG = FIXTURES / "lmms_eval" / "20261127_105239_samples_mmmu_local.jsonl"
MATHVISTA = FIXTURES / "mathvista" / "output_bard.json"
MMMU_FOLDER = FIXTURES / "mmmu" / "llava1.5_13b"
MMMU_PARSED = FIXTURES / "mmmu" / "llava1.5_13b_val.json"


def _read(path: Path, **fields: str) -> list[ImportedPrediction]:
    _, reader = detect_reader(path)
    return list(reader.read(path, ReadOptions(field_map=fields)))


def test_every_reader_is_registered() -> None:
    assert set(READERS.names()) >= {"lmms-eval", "vlmevalkit", "mmmu", "mathvista", "mapped"}


# --------------------------------------------------------------------------- lmms-eval


def test_lmms_eval_log_made_by_lmms_eval_is_read() -> None:
    name, reader = detect_reader(LMMS_LOG)
    assert name == "lmms-eval"
    rows = list(reader.read(LMMS_LOG, ReadOptions()))
    assert [r.sample_id for r in rows] == [f"validation_Art_{i}" for i in range(1, 8)]
    # The raw response (lmms-eval drops resps when it equals filtered_resps).
    assert [r.prediction for r in rows[:3]] == ["red", "green", "blue"]
    assert rows[0].gold == "A"
    # MMMU's parse_multi_choice_response found no letter in "red" and drew a random one.
    assert rows[0].tool_extraction == "D"
    assert rows[6].tool_extraction == "yellow"


def test_lmms_eval_origin_reads_the_results_file_beside_the_log() -> None:
    _, reader = detect_reader(LMMS_LOG)
    origin = reader.origin(LMMS_LOG, ReadOptions())
    assert origin.tool == "lmms-eval"
    assert origin.detail["task"] == "mmmu_local"
    assert origin.detail["model_name"] == "fake-vlm"
    assert json.loads(origin.detail["results"])["mmmu_acc,none"] == pytest.approx(0.14286)
    assert len(origin.sha256) == 64


def test_lmms_eval_line_without_a_response_names_line_and_field(tmp_path: Path) -> None:
    lines = LMMS_LOG.read_text().splitlines()
    broken = json.loads(lines[2])
    del broken["filtered_resps"]
    log = tmp_path / "x_samples_t.jsonl"
    log.write_text("\n".join([lines[0], lines[1], json.dumps(broken)]) + "\n")
    with pytest.raises(DataError, match=r"x_samples_t\.jsonl:3: filtered_resps: missing"):
        list(READERS.get("lmms-eval").read(log, ReadOptions()))


def test_lmms_eval_older_layout_with_doc_and_nested_resps(tmp_path: Path) -> None:
    # evaluator.py before save_results_samples unwrapped lists and popped doc (coded schema):
    # resps one list per request, a numeric per-sample metric.
    record = {
        "doc_id": 0, "doc": {"question_id": 34602, "question": "q"}, "target": "red",
        "arguments": [], "resps": [["<think>hm</think>Red"]], "filtered_resps": ["Red"],
        "doc_hash": "x", "exact_match": 1.0,
    }  # fmt: skip
    log = tmp_path / "20240101_samples_textvqa_val.jsonl"
    log.write_text(json.dumps(record) + "\n")
    (row,) = _read(log)
    assert (row.sample_id, row.prediction, row.tool_extraction, row.tool_verdict) == (
        "34602",
        "<think>hm</think>Red",
        "Red",
        1.0,
    )
    assert READERS.get("lmms-eval").origin(log, ReadOptions()).detail["task"] == "textvqa_val"


def test_lmms_eval_mathvista_judge_extraction_is_a_recorded_judge_reading(tmp_path: Path) -> None:
    # lmms_eval/tasks/mathvista/utils.py mathvista_process_results (@ 75571cf, coded schema):
    # llm_as_judge_eval holds the evaluator's extraction (rules, then its GPT model).
    result = {
        "question_id": "6", "query": "q", "choices": ["6cm", "7cm", "4cm", "5cm"],
        "answer": "6cm", "extraction": "D", "prediction": "5cm", "true_false": False,
        "question_type": "multi_choice", "answer_type": "text", "precision": 0, "metadata": {},
    }  # fmt: skip
    record = {
        "doc_id": 5, "target": "6cm", "filtered_resps": ["The answer is (D)."],
        "doc_hash": "x", "llm_as_judge_eval": result, "submission": result,
    }  # fmt: skip
    log = tmp_path / "20250101_samples_mathvista_testmini.jsonl"
    log.write_text(json.dumps(record) + "\n")
    (row,) = _read(log)
    assert (row.sample_id, row.tool_extraction, row.tool_judged, row.tool_verdict) == (
        "6", "D", True, 0.0,
    )  # fmt: skip
    origin = READERS.get("lmms-eval").origin(log, ReadOptions())
    sample = Sample(id="6", question="q", answer=["6cm"], formulation="open_ended")
    (score,) = score_imported([row], [sample], origin=origin)
    # Without a benchmark's protocol the reading is kept as the tool's own; `score`/`import
    # --benchmark mathvista` file it under mathvista-extract, which mathvista_accuracy reads.
    (kept,) = score.judgements
    assert (kept.judge, kept.protocol, kept.reading) == (
        "lmms-eval (recorded)", "lmms-eval-reading", "D",
    )  # fmt: skip
    judged = with_tool_reading(
        score.model_copy(update={"judgements": []}), row, origin, "mathvista-extract"
    )
    (j,) = judged.judgements
    assert (j.protocol, j.version, j.decided_by, j.reading) == (
        "mathvista-extract", "recorded", "judge", "D",
    )  # fmt: skip


# --------------------------------------------------------------------------- MathVista


def test_mathvista_output_reads_its_extraction_as_a_recorded_judge_answer() -> None:
    name, _ = detect_reader(MATHVISTA)
    assert name == "mathvista"
    rows = _read(MATHVISTA)
    assert [r.sample_id for r in rows] == ["1", "2", "3", "4", "5", "6"]
    two = rows[1]
    assert two.prediction.startswith("Based on the image you sent")
    assert (two.tool_extraction, two.tool_judged, two.tool_verdict, two.gold) == (
        "250",
        True,
        0.0,
        "1000",
    )
    assert rows[2].tool_verdict == 1.0


def test_mathvista_record_with_a_list_response_names_pid_and_field(tmp_path: Path) -> None:
    data = json.loads(MATHVISTA.read_text())
    data["4"]["response"] = ["not", "text"]
    bad = tmp_path / "output_x.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"output_x\.json:#4 \(pid 4\): response: expected text"):
        _read(bad)


# --------------------------------------------------------------------------- MMMU


def test_mmmu_folder_of_subject_outputs() -> None:
    name, reader = detect_reader(MMMU_FOLDER)
    assert name == "mmmu"
    rows = list(reader.read(MMMU_FOLDER, ReadOptions()))
    # Subjects in name order, rows counted across them.
    assert [r.sample_id for r in rows][:4] == [
        "validation_Accounting_1",
        "validation_Accounting_2",
        "validation_Accounting_3",
        "validation_Art_1",
    ]
    assert [r.row for r in rows] == list(range(1, 7))
    assert rows[0].prediction == "D" and rows[0].gold == "B"
    assert reader.origin(MMMU_FOLDER, ReadOptions()).detail["subjects"] == "2"


def test_mmmu_parsed_answers_are_both_prediction_and_mmmu_reading() -> None:
    name, _ = detect_reader(MMMU_PARSED)
    assert name == "mmmu"
    rows = _read(MMMU_PARSED)
    assert (rows[0].sample_id, rows[0].prediction, rows[0].tool_extraction) == (
        "validation_Accounting_1",
        "A",
        "A",
    )


# --------------------------------------------------------------------------- VLMEvalKit

MMB_COLUMNS = ["index", "question", "hint", "A", "B", "answer", "category", "l2-category"]


def _vlmeval_table(path: Path, rows: list[dict[str, object]]) -> Path:
    frame = pd.DataFrame(rows)
    # vlmeval/smp/file.py dump_tsv / dump_csv: pandas, QUOTE_ALL, no index column.
    sep = "\t" if path.suffix == ".tsv" else ","
    frame.to_csv(path, sep=sep, index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    return path


def test_vlmevalkit_prediction_and_result_tables(tmp_path: Path) -> None:
    rows = [
        {"index": 1, "question": "q", "hint": "nan", "A": "red", "B": "blue", "answer": "A",
         "category": "color", "l2-category": "perception", "prediction": "A"},
        {"index": 2, "question": "q", "hint": "nan", "A": "red", "B": "blue", "answer": "B",
         "category": "color", "l2-category": "perception", "prediction": "The answer is A"},
    ]  # fmt: skip
    pred = _vlmeval_table(tmp_path / "Model_MMBench_DEV_EN.tsv", rows)
    assert detect_reader(pred)[0] == "vlmevalkit"
    got = _read(pred)
    assert [(r.sample_id, r.prediction, r.gold, r.tool_verdict) for r in got] == [
        ("1", "A", "A", None),
        ("2", "The answer is A", "B", None),
    ]
    judged = [dict(r, GT=r["answer"], hit=h, log="x") for r, h in zip(rows, (1, 0), strict=True)]
    result = _vlmeval_table(tmp_path / "Model_MMBench_DEV_EN_openai_result.csv", judged)
    reader = READERS.get("vlmevalkit")
    assert reader.origin(result, ReadOptions()).detail["judge"] == "openai"
    assert [r.tool_verdict for r in reader.read(result, ReadOptions())] == [1.0, 0.0]


def test_vlmevalkit_row_without_prediction_cell_type_error(tmp_path: Path) -> None:
    table = tmp_path / "M_D.tsv"
    table.write_text("index\tprediction\thit\n1\tA\t1\n2\tB\tmaybe\n")
    with pytest.raises(DataError, match=r"M_D\.tsv:row 3: hit: expected a verdict"):
        _read(table)


def test_vlmevalkit_xlsx_rows_are_read_with_their_cell_types(tmp_path: Path) -> None:
    # VLMEvalKit dumps with pandas' xlsxwriter engine (vlmeval/smp/file.py dump_xlsx) and reads
    # back with pd.read_excel, i.e. openpyxl; xlsxwriter is not in the lock, so the same frame
    # is written here with pandas' openpyxl engine: the same .xlsx cells.
    rows = [
        {"index": 1, "question": "q", "A": "red", "B": "blue", "answer": "A",
         "category": "color", "prediction": "A"},
        {"index": 1000001, "question": "q", "A": "blue", "B": "red", "answer": "B",
         "category": "color", "prediction": "The answer is (B) red, I think."},
        {"index": 3, "question": "q", "A": "1", "B": "2", "answer": "B",
         "category": "count", "prediction": 2},
    ]  # fmt: skip
    book = tmp_path / "Model_MMBench_DEV_EN.xlsx"
    pd.DataFrame(rows).to_excel(book, index=False, engine="openpyxl")
    assert detect_reader(book)[0] == "vlmevalkit"
    got = _read(book)
    assert [(r.row, r.sample_id, r.prediction, r.gold) for r in got] == [
        (2, "1", "A", "A"),
        (3, "1000001", "The answer is (B) red, I think.", "B"),
        (4, "3", "2", "B"),  # a number in a cell is the text a table shows
    ]
    assert got[1].fields["category"] == "color"


@pytest.mark.parametrize("suffix", [".xlsx", ".tsv"])
def test_vlmevalkit_empty_answer_cell_is_the_empty_answer(tmp_path: Path, suffix: str) -> None:
    # A model that replied nothing leaves an empty prediction cell (None from an xlsx, "" from
    # a tsv): read as the empty answer in both, not a failed file.
    rows = [{"index": 1, "question": "q", "A": "red", "B": "blue", "answer": "A", "prediction": "A"},
            {"index": 2, "question": "q", "A": "red", "B": "blue", "answer": "B", "prediction": None}]  # fmt: skip
    table = tmp_path / f"Model_MMBench_DEV_EN{suffix}"
    if suffix == ".xlsx":
        pd.DataFrame(rows).to_excel(table, index=False, engine="openpyxl")
    else:
        _vlmeval_table(table, rows)
    assert [(r.sample_id, r.prediction) for r in _read(table)] == [("1", "A"), ("2", "")]


def test_vlmevalkit_xlsx_without_openpyxl_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = tmp_path / "M_D.xlsx"
    pd.DataFrame([{"index": 1, "prediction": "A"}]).to_excel(book, index=False, engine="openpyxl")
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if not installed: import fails
    with pytest.raises(DataError, match=r"M_D\.xlsx: reading \.xlsx needs openpyxl"):
        list(READERS.get("vlmevalkit").read(book, ReadOptions()))


# --------------------------------------------------------------------------- mapped


def test_mapped_jsonl_json_and_csv_through_a_field_map(tmp_path: Path) -> None:
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(
        json.dumps({"qid": "a", "answer": "cat", "gt": ["cat", "kitty"]})
        + "\n\n"
        + json.dumps({"qid": 7, "answer": 3})
        + "\n"
    )
    got = _read(jsonl, id="qid", prediction="answer", gold="gt")
    assert [(r.sample_id, r.prediction, r.gold) for r in got] == [
        ("a", "cat", ["cat", "kitty"]),
        ("7", "3", None),
    ]
    keyed = tmp_path / "p.json"
    keyed.write_text(json.dumps({"a": "cat", "b": {"answer": "dog"}}))
    got = _read(keyed, prediction="answer")
    assert [(r.sample_id, r.prediction) for r in got] == [("a", "cat"), ("b", "dog")]
    table = tmp_path / "p.csv"
    table.write_text("question_id,pred\nq1,red\n")
    assert _read(table, id="question_id", prediction="pred")[0].prediction == "red"


def test_mapped_nested_field_paths(tmp_path: Path) -> None:
    arr = tmp_path / "p.json"
    arr.write_text(json.dumps([{"doc": {"id": "x"}, "out": {"text": "yes"}}]))
    (row,) = _read(arr, id="doc.id", prediction="out.text")
    assert (row.sample_id, row.prediction) == ("x", "yes")


@pytest.mark.parametrize(
    ("lines", "fields", "message"),
    [
        ([{"id": "a"}], {}, r"p\.jsonl:1: prediction: missing required field"),
        ([{"id": "a", "prediction": {"x": 1}}], {}, r"p\.jsonl:1: prediction: expected text"),
        ([{"prediction": "x"}], {}, r"p\.jsonl:1: id: missing: a row needs an id"),
        ([{"id": "a", "prediction": "x", "verdict": "meh"}], {}, r"p\.jsonl:1: verdict: expected"),
        ([{"id": "a", "prediction": "x"}], {"qid": "id"}, r"--field qid: unknown"),
    ],
)
def test_mapped_hostile_rows_name_file_row_and_field(
    tmp_path: Path, lines: list[dict[str, object]], fields: dict[str, str], message: str
) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(DataError, match=message):
        list(READERS.get("mapped").read(path, ReadOptions(field_map=fields)))


def test_a_broken_json_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "prediction": "x"}\n{"id": "b", \n')
    with pytest.raises(DataError, match=r"p\.jsonl:2: not a JSON value"):
        list(READERS.get("mapped").read(path, ReadOptions()))


# --------------------------------------------------------------------------- joining


def _samples(*ids: str) -> list[Sample]:
    return [Sample(id=i, question=f"q {i}", answer=["x"], formulation="open_ended") for i in ids]


def test_duplicate_ids_are_an_error_naming_both_rows() -> None:
    preds = [ImportedPrediction(row=1, sample_id="a", prediction="x"),
             ImportedPrediction(row=4, sample_id="a", prediction="y")]  # fmt: skip
    with pytest.raises(DataError, match=r"row 4: id: 'a' again \(first at row 1\)"):
        plan_import(preds, _samples("a", "b"), model="m")


def test_unknown_ids_are_listed_and_the_rest_scored() -> None:
    preds = [ImportedPrediction(row=1, sample_id="zzz", prediction="x"),
             ImportedPrediction(row=2, sample_id="b", prediction="y")]  # fmt: skip
    plan = plan_import(preds, _samples("a", "b", "c"), model="m")
    assert [s.id for s in plan.samples] == ["b"]
    assert (plan.unjoined, plan.missing, plan.total) == (1, 2, 3)
    assert "row 1: id: 'zzz' is not a sample" in plan.problems[0]
    with pytest.raises(DataError, match="zzz"):
        plan_import(preds, _samples("a", "b"), model="m", strict=True)


def test_an_id_without_the_benchmark_prefix_joins() -> None:
    preds = [ImportedPrediction(row=1, sample_id="34602", prediction="x")]
    plan = plan_import(preds, _samples("textvqa/34602", "textvqa/34603"), model="m")
    assert [s.id for s in plan.samples] == ["textvqa/34602"]


def test_without_a_benchmark_every_row_needs_its_gold() -> None:
    preds = [ImportedPrediction(row=1, sample_id=None, prediction="x", gold="x"),
             ImportedPrediction(row=2, sample_id=None, prediction="y")]  # fmt: skip
    with pytest.raises(DataError, match="row 2: gold: missing"):
        plan_import(preds, None, model="m")


# --------------------------------------------------------------------------- streaming


def test_json_streaming_across_chunk_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK", 7)  # every value spans chunks
    values = [{"id": str(i), "n": 12345678 + i, "s": 'é " ] } , ' * (i % 3)} for i in range(40)]
    arr = tmp_path / "a.json"
    arr.write_text(json.dumps(values, ensure_ascii=False, indent=1))
    assert [v for _, _, v in _stream.iter_json(arr)] == values
    obj = tmp_path / "o.json"
    obj.write_text(json.dumps({v["id"]: v["n"] for v in values}))
    assert [(k, v) for _, k, v in _stream.iter_json(obj)] == [(v["id"], v["n"]) for v in values]
    truncated = tmp_path / "t.json"
    truncated.write_text(json.dumps(values)[:-40])
    with pytest.raises(DataError, match=r"t\.json:#\d+"):
        list(_stream.iter_json(truncated))


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_large_file_is_read_with_flat_memory(tmp_path: Path, suffix: str) -> None:
    # ~40 MB of predictions: reading them streamed holds one row (and one 1 MiB chunk) at a
    # time, so the peak stays far below the file's size.
    path = tmp_path / f"big{suffix}"
    row = {"id": "", "prediction": "x" * 300, "gold": ["y"] * 20}
    n = 100_000
    with path.open("w") as fh:
        if suffix == ".json":
            fh.write("[")
        for i in range(n):
            row["id"] = str(i)
            sep = "," if suffix == ".json" and i else ""
            fh.write(sep + json.dumps(row) + ("\n" if suffix == ".jsonl" else ""))
        if suffix == ".json":
            fh.write("]")
    size = path.stat().st_size
    reader = READERS.get("mapped")
    tracemalloc.start()
    try:
        count = sum(1 for _ in reader.read(path, ReadOptions()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n
    assert peak < 8 * 2**20 < size / 4


def test_vlmevalkit_split_think_keeps_the_thinking_apart(tmp_path: Path) -> None:
    # SPLIT_THINK: prediction holds what came after </think>, thinking what came before.
    rows = [{"index": 1, "question": "q", "answer": "A", "prediction": "B",
             "thinking": "A looks right... no, (A) is wrong"}]  # fmt: skip
    table = _vlmeval_table(tmp_path / "M_D.tsv", rows)
    preds = _read(table)
    plan = plan_import(preds, _samples("1"), model="m")
    (_, _, response, _) = plan.rows[0]
    assert (response.text, response.reasoning) == ("B", "A looks right... no, (A) is wrong")
