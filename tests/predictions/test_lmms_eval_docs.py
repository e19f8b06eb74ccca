"""An lmms-eval log that carries its documents scores with no copy: the doc is the item.

lmms-eval logged each document (``doc``, less its images) with ``--log_samples`` until v0.4.
``fixtures/lmms_eval/docs/`` holds logs written by lmms-eval 0.3.0 itself (its README says
how): a POPE-shaped and a TextVQA-shaped task run with lmms-eval's own prompts and per-sample
metrics against lmmprobe's fake OpenAI server. Scored with ``--benchmark`` and no copy, each
doc is read by the benchmark's row reader, and the figures are those against a copy holding
the same items. Logs in the same shape, made from the copies of the id-scheme tests, check the
other benchmarks the same way. Issue 36, item 1.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from datasets import Dataset, Features, Sequence, Value
from datasets import Image as HFImage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    write_hub_snapshot,
)
from tests.data.benchmarks.test_judged_benchmarks import _llava
from tests.data.benchmarks.test_standard_choice import _mmstar_folder, _rwqa_folder
from tests.data.benchmarks.test_standard_open import (
    DOCVQA,
    IMG,
    OKVQA,
    STR,
    VQAV2,
    _ds,
    _vqa_answers,
)
from tests.data.benchmarks.test_standard_open import _gqa as _gqa_folder
from tests.data.benchmarks.test_standard_open import _img as _colour
from tests.predictions.test_file_items import _offline, _score, _values
from tests.predictions.test_id_schemes import _copy as _ids_copy
from tests.predictions.test_id_schemes import _img
from tests.predictions.test_score_and_import_cli import TEXTVQA, _mathvista_copy, _mmmu_copy
from tests.predictions.test_score_and_import_cli import _img as _tv_img
from tests.predictions.test_vlmevalkit_judged import _bench as _mmbench_copy

from lmmprobe.data import DataError
from lmmprobe.predictions.file_items import LOGGED_DOCS, item_maker
from lmmprobe.predictions.imported import ImportedPrediction, ReadOptions
from lmmprobe.predictions.readers.lmms_eval import LmmsEvalSamples

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

DOCS = Path(__file__).parent / "fixtures" / "lmms_eval" / "docs"
POPE_LOG = DOCS / "20261130_230549_samples_pope_local.jsonl"
TEXTVQA_LOG = DOCS / "20261130_230549_samples_textvqa_local.jsonl"
RESULTS = json.loads((DOCS / "20261130_230549_results.json").read_text("utf-8"))["results"]


def _pope_copy(tmp_path: Path) -> str:
    rows = json.loads((DOCS / "pope_local.json").read_text("utf-8"))
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "colour"}
    columns["image"] = [_img(i) for i in range(len(rows))]
    feats = Features({k: (Value("string") if k != "image" else HFImage()) for k in columns})
    folder = write_hub_snapshot(
        tmp_path / "pope", {"test": Dataset.from_dict(columns, features=feats)}
    )
    return f"pope,path={folder}"


def _textvqa_copy(tmp_path: Path) -> str:
    rows = json.loads((DOCS / "textvqa_local.json").read_text("utf-8"))
    columns = {k: [r.get(k) for r in rows] for k in TEXTVQA if k != "image"}
    columns["image"] = [_tv_img(i) for i in range(len(rows))]
    folder = write_hub_snapshot(
        tmp_path / "textvqa",
        {"validation": Dataset.from_dict(columns, features=Features(TEXTVQA))},
    )
    return f"textvqa,path={folder}"


@pytest.mark.parametrize(
    ("log", "name", "copy", "by"),
    [
        (POPE_LOG, "pope", _pope_copy, "category"),
        (TEXTVQA_LOG, "textvqa", _textvqa_copy, None),
    ],
)
def test_a_log_written_by_lmms_eval_with_its_docs_scores_with_no_copy_as_against_a_copy(
    tmp_path: Path, log: Path, name: str, copy: Any, by: str | None
) -> None:
    more = ("--by", by) if by else ()
    alone = _score(tmp_path, log, name, *more)
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file", doc
    with_copy = _score(tmp_path, log, copy(tmp_path), *more)
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0 and copied["rows"] == doc["rows"]
    if name in _COPIES:
        # The target each task logs is its doc's own gold (or, for the VQA tasks, the literal
        # "answer"), never taken for another answer key.
        said = with_copy.stdout + with_copy.stderr
        assert "records another gold" not in said, said
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    if by:
        assert {g: _values(m) for g, m in doc["breakdown"][by].items()} == {
            g: _values(m) for g, m in copied["breakdown"][by].items()
        }


def test_textvqa_from_its_logged_docs_is_lmms_evals_own_figure(tmp_path: Path) -> None:
    # lmms-eval's textvqa exact_match is the ten-annotator VQA accuracy (EvalAI's processor).
    done = _score(tmp_path, TEXTVQA_LOG, "textvqa")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["metrics"]["vqa_accuracy_evalai"]["value"]
    assert got == pytest.approx(RESULTS["textvqa_local"]["exact_match,none"])
    # The literal target lmms-eval logs for TextVQA (its doc_to_target "answer") is not
    # taken for another answer key.
    said = lmmprobe("score", TEXTVQA_LOG, "--benchmark", "textvqa", **_offline(tmp_path))
    assert said.returncode == 0, said.stderr
    assert "records another gold" not in said.stdout


def test_a_log_without_its_docs_says_it_needs_the_copy(tmp_path: Path) -> None:
    # lmms-eval 0.4 and later pop the doc: the log holds answers, not items.
    log = tmp_path / "20261130_samples_pope.jsonl"
    records = [json.loads(line) for line in POPE_LOG.read_text("utf-8").splitlines()]
    log.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "doc"}) + "\n"
                           for r in records))  # fmt: skip
    done = _score(tmp_path, log, "pope")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert f"{log}: row 1: doc: not logged" in said and "hf download lmms-lab/POPE" in said, said


# ------------------------------------------------------------------ the other benchmarks


def _hub_rows(spec: str, split: str) -> list[dict[str, Any]]:
    """The rows of a copy's split, as lmms-eval's dataset loader gives them (GQA's: its
    questions config, ``testdev_balanced_instructions``, the yaml's ``dataset_name``; the
    images config is read by ``gqa_doc_to_visual``, v0.3, never part of the doc)."""
    folder = Path(spec.partition("path=")[2] or spec)
    if spec.startswith("gqa,"):
        folder = folder / "testdev_balanced_instructions"
    if spec.startswith("mmstar,"):
        return pq.read_table(folder / "mmstar.parquet").to_pylist()
    (path,) = [p for p in folder.rglob(f"{split}-*.parquet")]
    return pq.read_table(path).to_pylist()


_TARGET = {
    "chartqa": "answer", "docvqa": "answers", "gqa": "answer", "llava-wild": "gpt_answer",
    "mmstar": "answer", "ocrbench": "answer", "realworldqa": "answer",
}  # fmt: skip
"""The doc field each task's ``doc_to_target`` names (lmms-eval v0.3.0 yamls); OK-VQA's,
VizWiz's and VQAv2's name ``answer``, which their docs lack: ``ConfigurableTask.doc_to_target``
then logs the template itself, the literal ``"answer"``."""


def _gold_reply(row: dict[str, Any], name: str) -> str | None:
    """A reply giving the row's gold (so that the figures are not all zero), where it has one."""
    if name == "hallusionbench":
        return "Yes" if str(row.get("gt_answer")) == "1" else "No"
    for field in ("answer", "answers", "gpt_answer"):
        value = row.get(field)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, dict):  # VQAv2's {answer, answer_id, ...}
            value = value.get("answer")
        if isinstance(value, str) and value:
            return value
    return None


def _log_of(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    """A ``--log_samples`` file in lmms-eval 0.3's shape: each doc less every key holding
    ``image`` (``evaluator.py``'s ``saved_doc``), at its position, its ``target`` as the task's
    ``doc_to_target`` gives it; rows without an image (ScienceQA's text-only rows, which
    ScienceQA-IMG does not hold) are not asked. Every other row is answered with its gold."""
    replies = ("A", "Yes", "no", "B", "1", "red")
    lines = []
    for n, row in enumerate(rows):
        if "image" in row and row["image"] is None:
            continue
        saved = {k: v for k, v in row.items() if "image" not in k}
        reply = replies[n % len(replies)]
        if n % 2 == 0:
            reply = _gold_reply(row, name) or reply
        target = row.get(_TARGET[name], "x") if name in _TARGET else "answer"
        lines.append({"doc_id": n, "doc": saved, "target": target, "arguments": [],
                      "resps": [[reply]], "filtered_resps": [reply], "input": "q"})  # fmt: skip
    path = tmp_path / f"20240101_000000_samples_{name}_local.jsonl"
    path.write_text("".join(json.dumps(r, default=str) + "\n" for r in lines), encoding="utf-8")
    return path


def _hub(tmp_path: Path, name: str, split: str, rows: dict[str, list[Any]], feats: Any) -> str:
    folder = write_hub_snapshot(tmp_path / name, {split: _ds(rows, feats)})
    return f"{name},path={folder}"


def _chartqa(tmp_path: Path) -> str:
    rows = {
        "type": ["human_test", "augmented_test", "human_test", "augmented_test"],
        "question": ["Largest bar?", "Value of 2019?", "Colour?", "Share of 2020?"],
        "answer": ["Red", "12", "green", "0.45"], "image": [_colour("red")] * 4,
    }  # fmt: skip
    return _hub(tmp_path, "chartqa", "test", rows, {"type": STR, "question": STR,
                                                    "answer": STR, "image": IMG})  # fmt: skip


def _docvqa(tmp_path: Path) -> str:
    n = 4
    rows = {
        "questionId": ["49153", "24580", "57349", "57350"], "question": ["Logo colour?"] * n,
        "question_types": [["layout"], ["form"], ["layout"], ["table/list"]],
        "image": [_colour("red")] * n, "docId": [14465, 14466, 14467, 14468],
        "ucsf_document_id": ["pybv0228"] * n, "ucsf_document_page_no": ["81"] * n,
        "answers": [["Red"], ["blu", "azure"], ["grape"], ["1999", "in 1999"]],
        "data_split": ["val"] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "docvqa", {"validation": _ds(rows, DOCVQA)}, config="DocVQA"
    )
    return f"docvqa,path={folder}"


def _ocrbench(tmp_path: Path) -> str:
    rows = {
        "dataset": ["IIIT5K", "HME100k", "docVQA", "SROIE"],
        "question": [" what is written? ", "Write the formula.", "Title?", "Company?"],
        "question_type": ["Regular Text Recognition",
                          "Handwritten Mathematical Expression Recognition",
                          "Doc-oriented VQA", "Key Information Extraction"],
        "answer": [["RED"], ["b l u e"], ["greenery"], ["BLACK", "blk"]],
        "image": [_colour("red")] * 4,
    }  # fmt: skip
    feats = {"dataset": STR, "question": STR, "question_type": STR, "answer": Sequence(STR),
             "image": IMG}  # fmt: skip
    return _hub(tmp_path, "ocrbench", "test", rows, feats)


def _okvqa(tmp_path: Path) -> str:
    rows = {
        "question_id": ["2971475", "3195695", "3195696"], "image": [_colour("white")] * 3,
        "question": ["Cloud colour?", "Animal colour?", "How many?"],
        "answers": [["white"] * 10, ["black"] + ["dark"] * 9, ["2"] * 4 + ["two"] * 6],
        "question_type": ["four", "other", "how many"], "answer_type": ["other"] * 3,
    }  # fmt: skip
    return _hub(tmp_path, "okvqa", "val2014", rows, OKVQA)


def _vizwiz(tmp_path: Path) -> str:
    rows = {
        "question_id": [f"VizWiz_val_0000000{i}.jpg" for i in range(3)],
        "image": [_colour("yellow")] * 3, "question": ["what is this?", "what colour?", "which?"],
        "answers": [["unanswerable"] * 10, ["Purple!"] * 3 + ["violet"] * 7, ["soup"] * 10],
        "category": ["unanswerable", "other", "other"],
    }  # fmt: skip
    feats = {"question_id": STR, "image": IMG, "question": STR, "answers": Sequence(STR),
             "category": STR}  # fmt: skip
    return _hub(tmp_path, "vizwiz", "val", rows, feats)


def _vqav2(tmp_path: Path) -> str:
    answers = [
        ["Red"] * 10,
        ["Blue"] * 3 + ["blue"] + ["navy"] * 6,
        ["the green"] * 2 + ["grass"] * 8,
    ]
    rows = {
        "question_type": ["what color"] * 3, "multiple_choice_answer": ["red", "blue", "grass"],
        "answers": [_vqa_answers(a) for a in answers], "image_id": [1, 2, 3],
        "answer_type": ["other"] * 3, "question_id": [262148000, 262148001, 262148002],
        "question": ["What color is the bus?"] * 3, "image": [_colour("red")] * 3,
    }  # fmt: skip
    return _hub(tmp_path, "vqav2", "validation", rows, VQAV2)


_COPIES: dict[str, tuple[Any, str, str | None]] = {
    "chartqa": (_chartqa, "test", "type"),
    "docvqa": (_docvqa, "validation", None),
    "gqa": (lambda t: f"gqa,path={_gqa_folder(t)}", "testdev", None),
    "llava-wild": (lambda t: f"llava-wild,path={_llava(t)}", "train", "category"),
    "mmstar": (lambda t: f"mmstar,path={_mmstar_folder(t)}", "val", "category"),
    "ocrbench": (_ocrbench, "test", "question_type"),
    "okvqa": (_okvqa, "val2014", None),
    "realworldqa": (lambda t: f"realworldqa,path={_rwqa_folder(t)}", "test", None),
    "vizwiz": (_vizwiz, "val", "category"),
    "vqav2": (_vqav2, "validation", None),
}
"""lmmprobe's test copies (those of the benchmark definitions' own tests, or as small in the
published schema), by name: the builder, the split lmms-eval's task reads, a breakdown key."""


def _spec_of(tmp_path: Path, name: str) -> tuple[str, str]:
    if name == "mmmu":
        return f"mmmu,path={_mmmu_copy(tmp_path)[0]}", "validation"
    if name == "mathvista":
        return f"mathvista,path={_mathvista_copy(tmp_path)[0]}", "testmini"
    if name in _COPIES:
        make, split, _by = _COPIES[name]
        return make(tmp_path), split
    return _ids_copy(tmp_path, name), {"hallusionbench": "image"}.get(name, "test")


_OWN_TESTS = ("mmbench", "pope", "textvqa")
"""Logged docs tested on their own: POPE and TextVQA by logs lmms-eval itself wrote, MMBench
by the docs its metric logs."""


@pytest.mark.parametrize("name", [n for n in LOGGED_DOCS if n not in _OWN_TESTS])
def test_logged_docs_of_each_benchmark_score_as_against_the_copy_they_came_from(
    tmp_path: Path, name: str
) -> None:
    spec, split = _spec_of(tmp_path, name)
    by = _COPIES[name][2] if name in _COPIES else None
    more = ("--by", by) if by else ()
    log = _log_of(tmp_path, name, _hub_rows(spec, split))
    alone = _score(tmp_path, log, name, *more)
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc.get("items") == "file", doc
    with_copy = _score(tmp_path, log, spec, *more)
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0 and copied["rows"] == doc["rows"]
    if name in _COPIES:
        # The target each task logs is its doc's own gold (or, for the VQA tasks, the literal
        # "answer"), never taken for another answer key.
        said = with_copy.stdout + with_copy.stderr
        assert "records another gold" not in said, said
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    if by:
        assert {g: _values(m) for g, m in doc["breakdown"][by].items()} == {
            g: _values(m) for g, m in copied["breakdown"][by].items()
        }
    if name not in ("llava-wild", "mmvet"):  # judged only: no figure without a judge
        assert any(v for v in _values(doc["metrics"]).values()), doc["metrics"]
    # Each row is the same item, by id, alone as against the copy.
    assert _imported_ids(tmp_path, log, name, "alone") == _imported_ids(tmp_path, log, spec, "copy")


def _imported_ids(tmp_path: Path, log: Path, data: str, tag: str) -> dict[int, list[str]]:
    """The items each row of `log` joins, by row, as ``import`` stores them."""
    store = tmp_path / f"{tag}.db"
    done = lmmprobe("import", log, "--benchmark", data, "--model", "m", "--db", store,
                    **_offline(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    joined: dict[int, list[str]] = {}
    with sqlite3.connect(store) as db:
        for sample_id, meta in db.execute("SELECT sample_id, metadata FROM score_metadata"):
            joined.setdefault(int(json.loads(meta)["imported_row"]), []).append(sample_id)
    assert joined
    return {k: sorted(v) for k, v in joined.items()}


def test_every_benchmark_with_logged_docs_is_tested_against_a_copy() -> None:
    # A benchmark is in LOGGED_DOCS only once a log built from its copy scores as the copy.
    tested = {"ai2d", "hallusionbench", "mathvista", "mme", "mmmu", "mmvet", "scienceqa-img"}
    assert set(LOGGED_DOCS) == tested | set(_COPIES) | set(_OWN_TESTS)


@pytest.mark.parametrize("name", LOGGED_DOCS)
def test_a_doc_missing_what_its_reader_needs_is_named(name: str) -> None:
    make = item_maker(name, "lmms-eval")
    if make is None:  # a copy lies where a run would read it
        return
    pred = ImportedPrediction(row=3, sample_id="0", prediction="A", fields={"doc_id": 0, "doc": {}})
    with pytest.raises(DataError, match=r"^l\.jsonl: row 3: \S+: "):
        make("l.jsonl", pred)


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=200),
    st.lists(st.text(max_size=30), max_size=12), st.just("x" * 50_000),
)  # fmt: skip


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(LOGGED_DOCS),
    doc=st.dictionaries(
        st.sampled_from(
            [
                "question",
                "answer",
                "answers",
                "options",
                "choices",
                "question_id",
                "id",
                "pid",
                "category",
                "question_type",
                "answer_type",
                "index",
                "gt_answer",
                "query",
                "questionId",
                "dataset",
                "gpt_answer",
                "caption",
            ]
        ),
        _VALUES,
        max_size=10,
    ),
    doc_id=st.one_of(st.none(), st.integers(-5, 10**12), st.text(max_size=5)),
)
def test_any_logged_doc_makes_its_item_or_one_named_error(
    name: str, doc: dict[str, Any], doc_id: Any
) -> None:
    make = item_maker(name, "lmms-eval")
    if make is None:  # a copy lies where a run would read it
        return
    fields = {"doc_id": doc_id, "doc": doc}
    pred = ImportedPrediction(row=2, sample_id="0", prediction="A", fields=fields)
    try:
        (item,) = make("l.jsonl", pred)
    except DataError as exc:
        assert str(exc).startswith("l.jsonl: row 2: ")
        return
    assert item.images == [] and item.benchmark is not None and item.benchmark.name == name


def test_a_hallusionbench_log_of_any_version_carries_its_docs_in_its_metric(
    tmp_path: Path,
) -> None:
    # lmms-eval's hb_process_results (evaluate_hb.py, v0.3.0 to 75571cf) logs the doc less its
    # image, plus model_prediction, under aAcc, fAcc and qAcc: the writer of v0.4 and later
    # pops ``doc``, but the metric still holds it.
    spec, split = _spec_of(tmp_path, "hallusionbench")
    records = []
    for n, row in enumerate(_hub_rows(spec, split)):
        reply = ("Yes", "No")[n % 2]
        sample = {k: v for k, v in row.items() if k != "image"} | {"model_prediction": reply}
        records.append({"doc_id": n, "target": str(row["gt_answer_details"]),
                        "filtered_resps": reply, "input": "q",
                        **{m: sample for m in ("aAcc", "fAcc", "qAcc")}})  # fmt: skip
    log = tmp_path / "20260101_000000_samples_hallusion_bench_image.jsonl"
    log.write_text("".join(json.dumps(r, default=str) + "\n" for r in records), encoding="utf-8")
    alone = _score(tmp_path, log, "hallusionbench")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc.get("items") == "file" and doc["rows"] == len(records), doc
    with_copy = _score(tmp_path, log, spec)
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["hallusionbench_qacc"]["value"] is not None


def test_an_mmbench_log_of_any_version_carries_its_docs_in_its_metric(tmp_path: Path) -> None:
    # lmms-eval's mmbench_process_results (tasks/mmbench/en_utils.py, v0.3.0 to 75571cf) logs
    # under gpt_eval_score the doc's index, question, answer, hint, source, split, category,
    # L2-category and options A-E ("nan" where it has none), plus the prediction.
    spec = _mmbench_copy(tmp_path)
    records = []
    for n, row in enumerate(_hub_rows(spec, "dev")):
        reply = ("A", "B", "The answer is C")[n % 3]
        logged = {k: row[k] for k in ("index", "question", "answer")} | {"prediction": reply}
        logged |= {k: row[k] for k in ("hint", "source", "split", "category", "L2-category")}
        logged |= {c: row.get(c) if row.get(c) is not None else "nan" for c in "ABCDE"}
        records.append({"doc_id": n, "target": row["answer"], "filtered_resps": reply,
                        "gpt_eval_score": logged, "submission": logged})  # fmt: skip
    log = tmp_path / "20260101_000000_samples_mmbench_en_dev.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    alone = _score(tmp_path, log, "mmbench")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc.get("items") == "file" and doc["rows"] == len(records), doc
    with_copy = _score(tmp_path, log, spec)
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["mmbench_circular"]["value"] is not None


MATHVISTA_LOG = DOCS / "20261130_190000_samples_mathvista_testmini_format.jsonl"
MATHVISTA_EXPECTED = json.loads((DOCS / "mathvista_expected.json").read_text("utf-8"))
"""A MathVista log lmms-eval's own code wrote (@ 75571cf: ``mathvista_process_results`` on
eight generated docs and replies, its writer ``save_results_samples``, which drops ``doc``),
and the figure its ``mathvista_aggregate_results`` gives on it
(``tests/predictions/generate/lmms_eval_mathvista.py``)."""


def test_a_mathvista_log_without_its_docs_scores_with_no_copy_as_lmms_eval_scored_it(
    tmp_path: Path,
) -> None:
    # v0.4 on, the log holds no doc; MathVista's per-sample metric holds all of it a figure
    # reads (pid, query, choices, answer, types, precision, metadata) and its recorded reading.
    done = _score(tmp_path, MATHVISTA_LOG, "mathvista", "--as-published")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["items"] == "file" and doc["rows"] == 8, doc
    (table,) = doc["as_published"]["tables"]
    assert table["rows"] == [{"key": "average", "accuracy": MATHVISTA_EXPECTED["llm_as_judge_eval"],
                              "correct": 4, "total": 8}]  # fmt: skip
    assert MATHVISTA_EXPECTED["llm_as_judge_eval"] == 50.0
    # lmmprobe's strict figure reads the recorded extractions (the judge's, recorded) with
    # MathVista's normalization: it parts from lmms-eval's only on pid 5, a float answer
    # lmms-eval logs false (round(2.5, 1.0) raises in its normalize_extracted_answer).
    logged = MATHVISTA_EXPECTED["true_false"]
    assert logged[4] is False
    metrics = doc["metrics"]
    assert metrics["mathvista_accuracy"]["value"] == pytest.approx((sum(logged) + 1) / 8)
    assert metrics["mathvista_accuracy"]["n"] == 8
    # Pid 3: the judge's call failed, its extraction is empty: unjudged, counted not correct.
    assert metrics["judge_coverage"]["value"] == pytest.approx(7 / 8)
    assert doc["judge"]["decided"] == {"rule": 0, "judge": 7, "unjudged": 1}
    # The audit names that item, and the cause.
    audited = _score(tmp_path, MATHVISTA_LOG, "mathvista", "--audit", "--format", "table")
    assert audited.returncode == 0, audited.stderr
    said = " ".join(audited.stdout.split())
    assert "lmmprobe 62.50 vs lmms-eval 50.00 on 8 paired items" in said, said
    assert "normalization (same reading, another verdict): 1 item" in said, said


def test_the_question_of_a_mathvista_log_is_derived_from_its_query() -> None:
    make = item_maker("mathvista", "lmms-eval")
    if make is None:
        pytest.skip("a copy of mathvista lies where a run would read it")
    preds = list(LmmsEvalSamples().read(MATHVISTA_LOG, ReadOptions()))
    for pred, want in zip(preds, MATHVISTA_EXPECTED["docs"], strict=True):
        (item,) = make(str(MATHVISTA_LOG), pred)
        assert item.id == f"mathvista/{want['pid']}"
        # The unit stays in the question, as the query asks it; the unit field is left empty.
        unit = f" (Unit: {want['unit']})" if want["unit"] else ""
        assert item.question == want["question"] + unit
        assert item.metadata["unit"] == ""
    assert [p.gold for p in preds] == ["4", "blue", "green", "7", "2.5", "12", "[1, 2]", "1.25"]


def test_a_mathvista_query_without_its_question_is_named(tmp_path: Path) -> None:
    make = item_maker("mathvista", "lmms-eval")
    if make is None:
        pytest.skip("a copy of mathvista lies where a run would read it")
    row = json.loads(MATHVISTA_LOG.read_text("utf-8").splitlines()[0])
    for name in ("llm_as_judge_eval", "submission"):
        row[name]["query"] = "What is it?"
    (pred,) = _read_rows(tmp_path, [row])
    with pytest.raises(DataError, match=r"^l\.jsonl: row 1: question: "):
        make("l.jsonl", pred)


def _read_rows(tmp_path: Path, rows: list[dict[str, Any]]) -> list[ImportedPrediction]:
    path = tmp_path / "20260101_samples_mathvista_testmini.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return list(LmmsEvalSamples().read(path, ReadOptions()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=st.one_of(
        _VALUES,
        st.builds(
            lambda a, b: f"{a}\nQuestion: {b}\nChoices:\n(A) x",
            st.text(max_size=40),
            st.text(max_size=40),
        ),
        st.just("Hint: h\nQuestion: " + "\nChoices:\n" * 20_000),
    ),
    choices=_VALUES,
    metadata=st.one_of(_VALUES, st.dictionaries(st.sampled_from(["skills", "task"]), _VALUES)),
    kinds=st.tuples(_VALUES, _VALUES, _VALUES),
)
def test_any_logged_mathvista_entry_makes_its_item_or_one_named_error(
    query: Any, choices: Any, metadata: Any, kinds: tuple[Any, Any, Any]
) -> None:
    make = item_maker("mathvista", "lmms-eval")
    if make is None:
        return  # a copy lies where a run would read it
    row = json.loads(MATHVISTA_LOG.read_text("utf-8").splitlines()[0])
    entry = row["llm_as_judge_eval"] | {"query": query, "choices": choices, "metadata": metadata}
    entry |= dict(zip(("question_type", "answer_type", "answer"), kinds, strict=True))
    row |= {"llm_as_judge_eval": entry, "submission": entry}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            (pred,) = _read_rows(Path(tmp), [row])
            (item,) = make("l.jsonl", pred)
        except DataError as exc:
            assert str(exc).count("\n") <= 1 and ": " in str(exc)
            return
    assert item.benchmark is not None and item.benchmark.name == "mathvista"
    assert isinstance(item.question, str) and len(item.question) <= len(str(query))
