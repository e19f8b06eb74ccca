"""HEMM's 30 datasets by name: HEMM's files read, HEMM's prompts asked, BARTScore, holistic analysis.

Every dataset's fixture is written in the layout HEMM's loader reads (test_hemm_fixtures.py),
loaded through ``--data hemm-NAME,path=FOLDER``, and its first sample's prompt compared with
what HEMM's own prompt code printed for the same inputs (tests/parity/data/hemm_prompts.json,
made by tests/parity/generate/hemm_prompts.py). The suite then runs end to end with two models
and BARTScore from the tiny BART checkpoint committed for the metric parity tests, and the
holistic analysis groups the results by HEMM's dimensions.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import logging
import pickle
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage
from tests.data.benchmarks.test_hemm_fixtures import (
    BUILDERS,
    DECIMER_ROWS,
    ENRICO_ROWS,
    build,
    build_all,
    parity_cases,
)

from lmmprobe.api import evaluate
from lmmprobe.data import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.formulate.prompt import formulate
from lmmprobe.holistic import dimension_means, load_catalog, normalize_scores
from lmmprobe.metrics.builtin import hemm_bart
from lmmprobe.metrics.generation import bart_identity_scores, hemm_bart_scores
from lmmprobe.metrics.run_metric import compute_metrics
from lmmprobe.report import build_tables, load_report_data
from lmmprobe.schema import YES_NO_READING, RunSpec, Score
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

TINY_BART = Path(__file__).resolve().parents[2] / "parity" / "data" / "hemm_metrics_tiny_bart"
IMAGE_GENERATION = ("hemm-lncoco", "hemm-magicbrush")
# The datasets whose every gold is yes or no: their accuracy reads the answer's yes or no.
YES_NO = ("hemm-hatefulmemes", "hemm-irfl", "hemm-nycartoon", "hemm-winoground")
TEXT = sorted(set(BUILDERS) - set(IMAGE_GENERATION))
HAS_CV2 = importlib.util.find_spec("cv2") is not None


@pytest.fixture(autouse=True)
def _offline(data_dir: Path) -> None:
    """No hub and an empty data folder: every copy comes from the fixtures."""


def _load(name: str, folder: Path) -> list:
    return load_source(f"{name},path={folder}", strict=True).samples


def test_thirty_datasets_and_the_suite_are_registered_with_their_catalog_tasks() -> None:
    catalog = load_catalog()
    hemm = [BENCHMARKS.get(n) for n in BENCHMARKS.names() if n.startswith("hemm-")]
    assert len(hemm) == 30
    assert {b.hemm for b in hemm} == set(catalog.tasks("hemm"))
    for b in hemm:
        assert catalog.get(b.hemm) is not None and b.fetch and b.citation
        assert b.schema_confirmed.startswith("HEMM's loader pliang279/HEMM hemm/data/"), b.name
        # The image-generation datasets have no run metric (HEMM's CLIP-I scores an image).
        assert b.metric == (None if b.name in IMAGE_GENERATION else "hemm_bart_score")
        assert "612fc2ac433082a231f6d4f52785cf27bfef06eb" in b.prompt.source
    suite = BENCHMARKS.get("hemm")
    assert set(suite.members) == {b.name for b in hemm}
    assert {b.name for b in hemm if b.needs} == set(IMAGE_GENERATION)


@pytest.mark.parametrize("name", TEXT)
def test_loader_reads_hemm_layout_and_asks_hemms_prompt(name: str, tmp_path: Path) -> None:
    if name == "hemm-vcr" and not HAS_CV2:
        pytest.skip("hemm-vcr draws boxes with OpenCV (test_vcr_without_opencv_says_so)")
    expect = build(name, tmp_path / name)
    samples = _load(name, tmp_path / name)
    assert len(samples) == expect.count
    first = samples[0]
    if expect.refs:
        assert first.answer == expect.refs
    if expect.ids:
        assert [s.id for s in samples] == [f"{name}/{i}" for i in expect.ids]
    # The whole user message of the request lmmprobe sends: HEMM's text, byte for byte.
    assert formulate(first).prompt == parity_cases()[name]["prompt"]
    b = BENCHMARKS.get(name)
    for s in samples:
        assert len(s.images) == 1 and s.formulation == "open_ended"
        assert s.metadata["task"] == b.hemm and s.benchmark is not None
        assert s.benchmark.metric == "hemm_bart_score" and s.benchmark.name == name
        # Only the yes/no datasets are read for a yes or no, every one of their items.
        if name in YES_NO:
            assert s.metadata[YES_NO_READING] is True and s.answer in (["yes"], ["no"])
        else:
            assert YES_NO_READING not in s.row_metadata


@pytest.mark.parametrize("name", IMAGE_GENERATION)
def test_image_generation_datasets_are_listed_but_refuse_to_run(name: str, tmp_path: Path) -> None:
    build(name, tmp_path / name)
    with pytest.raises(DataError, match="needs an image-generation backend"):
        _load(name, tmp_path / name)


@pytest.mark.parametrize("name", ["hemm-magicbrush", "hemm-lncoco"])
def test_image_generation_prompts_are_hemms(name: str) -> None:
    case = parity_cases()[name]
    (value,) = case["inputs"].values()
    assert BENCHMARKS.get(name).prompt.template.format(question=value) == case["prompt"]


def test_vcr_without_opencv_says_what_to_install(tmp_path: Path) -> None:
    if HAS_CV2:
        pytest.skip("OpenCV is installed")
    build("hemm-vcr", tmp_path / "vcr")
    with pytest.raises(DataError, match="pip install opencv-python-headless"):
        _load("hemm-vcr", tmp_path / "vcr")


def test_decimer_and_enrico_ask_hemms_seeded_tenth(tmp_path: Path) -> None:
    # HEMM: random.seed(0); random.shuffle(rows[1:]); rows[-len // 10:] (12 rows: the last 2).
    for name, rows, sep in (
        ("hemm-decimer", DECIMER_ROWS, "\t"),
        ("hemm-enrico", ENRICO_ROWS, ","),
    ):
        build(name, tmp_path / name)
        lines = [r + "\n" for r in rows]
        random.seed(0)
        random.shuffle(lines)
        want = [line.strip().split(sep) for line in lines[-len(lines) // 10 :]]
        got = _load(name, tmp_path / name)
        assert [(s.id.split("/", 1)[1], s.answer[0]) for s in got] == [tuple(w) for w in want]


def test_nlvr2_scores_the_letters_of_the_output(tmp_path: Path) -> None:
    build("hemm-nlvr2", tmp_path / "n")
    (sample,) = _load("hemm-nlvr2", tmp_path / "n")
    assert sample.metadata["hemm_prediction_filter"] == "alpha"
    # Both images side by side at their mean size: 12x10 each -> 24x10.
    data = base64.b64decode(sample.images[0].data_b64 or "")
    with PILImage.open(io.BytesIO(data)) as im:
        assert im.size == (24, 10)


def test_pathvqa_pickle_with_code_is_refused(tmp_path: Path) -> None:
    build("hemm-pathvqa", tmp_path / "p")
    bad = tmp_path / "p/pathvqa_images/pvqa/qas/test/test_qa.pkl"
    bad.write_bytes(pickle.dumps([{"image": "test_0000", "question": Path("x"), "answer": "y"}]))
    with pytest.raises(DataError, match="refused to load"):
        _load("hemm-pathvqa", tmp_path / "p")


def test_memotion_xlsx_without_openpyxl_names_the_install(tmp_path: Path) -> None:
    if importlib.util.find_spec("openpyxl") is not None:
        pytest.skip("openpyxl is installed")
    build("hemm-memotion", tmp_path / "m")
    # Enough of a workbook for pandas to pick the openpyxl engine.
    with zipfile.ZipFile(
        tmp_path / "m/memotion-dataset-7k/memotion_dataset_7k/labels.xlsx", "w"
    ) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(DataError, match="pip install openpyxl"):
        _load("hemm-memotion", tmp_path / "m")


def test_missing_file_names_it_and_the_fetch_command(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="vqa_questions/OpenEnded_abstract_v002_val2015"):
        _load("hemm-vqa", tmp_path / "empty")
    with pytest.raises(DataError, match=r"s3\.amazonaws\.com/cvmlp/vqa/abstract_v002"):
        load_source("hemm-vqa", strict=True)  # no copy anywhere, hub off


def test_bart_metric_is_skipped_with_what_to_set_when_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("LMMPROBE_BART_MODEL", raising=False)
    monkeypatch.setattr(hemm_bart, "_warned", set())  # the warning is given once per process
    build("hemm-gqa", tmp_path / "g")
    (sample,) = _load("hemm-gqa", tmp_path / "g")
    row = Score(
        model="m", sample_id=sample.id, repeat=0, key="k", stage="match",
        prediction_text="right", correct=True, gold=sample.answer, gold_text="right",
        metadata=sample.row_metadata,
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        got = compute_metrics([row], RunSpec(bootstrap=0))
    assert "hemm_bart_score" not in got
    assert "LMMPROBE_BART_MODEL" in caplog.text and "bart-large-cnn" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        compute_metrics([row], RunSpec(bootstrap=0), group="task=GQA")
    assert "LMMPROBE_BART_MODEL" not in caplog.text  # said once, not once per group


def test_hemm_suite_runs_end_to_end_and_the_holistic_analysis_groups_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BARTScore is skipped here (no model folder): the slow part has its own test below.
    monkeypatch.delenv("LMMPROBE_BART_MODEL", raising=False)
    folder = tmp_path / "hemm"
    expects = build_all(folder)
    # Without OpenCV hemm-vcr is a load problem; the other 27 text datasets run.
    ran = [n for n in TEXT if HAS_CV2 or n != "hemm-vcr"]
    db = tmp_path / "db.sqlite"
    with FakeOpenAIServer() as server:
        ev = evaluate(
            data=f"hemm,path={folder}",
            models=["first", f"openai:fake-vlm@{server.base_url}"],
            by=["task"],
            bootstrap=0,
            db=str(db),
            out=str(tmp_path / "out"),
        )
    problems = " | ".join(str(p) for p in ev.outcome.load.problems)
    for name in IMAGE_GENERATION:
        assert f"{name}: benchmark {name} needs an image-generation backend" in problems
    asked = {s.benchmark.name for s in ev.outcome.load.samples if s.benchmark is not None}
    assert asked == set(ran)
    assert len(ev.outcome.load.samples) == sum(expects[n].count for n in ran)
    catalog = load_catalog()
    for model in ev.results.models.values():
        assert {catalog.get(t).name for t in model.breakdown["task"]} == {
            BENCHMARKS.get(n).hemm for n in ran
        }
    # The report's holistic analysis finds every task in HEMM's catalog.
    tables = build_tables(load_report_data([ev.outcome.run_id], db=db), definitions="hemm")
    note = tables.dimensions_note or ""
    assert "not in the HEMM catalog" not in note
    # HEMM scores these tasks with BARTScore; without the BART model they are left out and the
    # report says why, never normalizing exact-match accuracy in its place.
    assert "BART model is not available" in note and "LMMPROBE_BART_MODEL" in note
    for task in {BENCHMARKS.get(n).hemm for n in ran}:
        assert str(task) in note
    assert tables.normalized == {}


def test_bartscore_per_task_is_hemms_and_feeds_the_holistic_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LMMPROBE_BART_MODEL", str(TINY_BART))
    folder = tmp_path / "hemm"
    for name in ("hemm-okvqa", "hemm-nlvr2"):
        build(name, folder / name)
    runs = {}
    with FakeOpenAIServer() as server:
        for name in ("hemm-okvqa", "hemm-nlvr2"):
            runs[name] = evaluate(
                data=f"{name},path={folder / name}",
                models=["first", f"openai:fake-vlm@{server.base_url}"],
                bootstrap=0,
                db=str(tmp_path / "db.sqlite"),
                out=str(tmp_path / name),
            )
    raw: dict[str, dict[str, float]] = {}
    for name, ev in runs.items():
        task = BENCHMARKS.get(name).hemm
        for outcome in ev.outcome.models:
            value = ev.results.models[outcome.spec].metrics["hemm_bart_score"].value
            raw.setdefault(outcome.spec, {})[task] = value
            # HEMM's BartScoreMetric on the stored outputs, recomputed directly: OK-VQA's
            # reference lists (best of several), NLVR2's letters-only outputs.
            with Store(tmp_path / "db.sqlite") as store:  # a run keeps no Scores in memory
                rows = store.model_scores(ev.run_id, outcome.spec)
            if name == "hemm-nlvr2":
                preds = [
                    "".join(filter(str.isalpha, (s.prediction_text or "").lower())) for s in rows
                ]
            else:
                preds = [s.prediction_text or "" for s in rows]
            refs = (
                [list(s.gold) for s in rows] if name == "hemm-okvqa" else [s.gold[0] for s in rows]
            )
            assert value == float(np.mean(hemm_bart_scores(preds, refs, TINY_BART)))
    # HEMM's analysis: normalized by the identity score per task, then means per dimension.
    maxima = {}
    for name, ev in runs.items():
        refs = [s.answer[0] for s in ev.outcome.load.samples]
        maxima[BENCHMARKS.get(name).hemm] = float(np.mean(bart_identity_scores(refs, TINY_BART)))
    normalized = normalize_scores(raw, maxima, definitions="hemm")
    # The report's holistic analysis computes the same: BARTScore per task, normalized by the
    # identity score of the (lowercased) references.
    for name, ev in runs.items():
        task = BENCHMARKS.get(name).hemm
        refs = [s.answer[0].strip().lower() for s in ev.outcome.load.samples]
        ceiling = float(np.mean(bart_identity_scores(refs, TINY_BART)))
        alone = {m: {task: per[task]} for m, per in raw.items()}
        tables = build_tables(
            load_report_data([ev.outcome.run_id], db=tmp_path / "db.sqlite"), definitions="hemm"
        )
        assert tables.normalized == normalize_scores(alone, {task: ceiling}, definitions="hemm")
    rows = dimension_means(normalized, load_catalog(), n_boot=0, definitions="hemm")
    knowledge = {r.category for r in rows if r.dimension == "knowledge" and r.model == "all"}
    assert knowledge == {"yes", "no"}  # OK-VQA needs outside knowledge, NLVR2 does not
