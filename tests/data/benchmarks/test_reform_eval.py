"""ReForm-Eval whole (issue 28): 61 datasets in 8 dimensions, read from one clone of
ReForm-Eval-Data in its released layout, run through the console script.

The fixtures are written by the tests in the layout ReForm-Eval's dataset classes read with
``--offline_hf`` (FudanDISC/ReForm-Eval @ df1cfa7b, ``build/*/`` and ``build/configs/*.yaml``):
``huggingface_data/<DATASET>/<file>.json``, images as base64 text.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.data.base import load_source as load_samples
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.data.benchmarks.reform_common import DIMENSIONS
from lmmprobe.data.benchmarks.reform_common import SETS as BENCHMARK_SETS


def _image() -> str:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _write(root: Path, relative: str, doc: object) -> None:
    path = root / "huggingface_data" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A tiny ReForm-Eval-Data clone: datasets of five dimensions, each family's layout."""
    root, img = tmp_path / "ReForm-Eval-Data", _image()
    # Coarse-grained: MEDIC (build/MEDIC/disaster_type_dataset.py reads img, options, gt).
    medic = [{"img": img, "options": ["flood", "fire", "none"], "gt": 1} for _ in range(2)]
    _write(root, "MEDIC/disaster-type-selection-sampled.json",
           {"dataset_name": "MEDIC", "data": medic})  # fmt: skip
    # Spatial: CLEVR (question_id, image, question, answer, answer_options).
    clevr = [{"question_id": f"c{i}", "image": img, "question": "Is the cube left?",
              "answer": 0, "answer_options": ["yes", "no"]} for i in range(2)]  # fmt: skip
    _write(root, "CLEVR/clevr_core_multiple_choice.json",
           {"dataset_name": "CLEVR", "instructs": ["x"], "data": clevr})  # fmt: skip
    # Scene text: IC15 (question list, answer_txt).
    ic15 = [{"question_id": "t0", "image": img, "question": ["What is written?"],
             "answer_txt": "STOP"}]  # fmt: skip
    _write(root, "IC15/ic15_core_open_ended.json",
           {"version": "v1", "split": "test", "data": ic15})  # fmt: skip
    # Visual description: MSCOCO captions (img, annos).
    caps = [{"img": img, "annos": ["a red square", "red"]}]
    _write(root, "MSCOCO/captions-sampled.json", {"dataset_name": "mscoco", "data": caps})
    # Multi-turn dialogue: VisDial (questions, answers, dialogs of rounds by index).
    visdial = {"version": "v1.2", "split": "val2018", "data": {
        "questions": ["what color is it", "is it big"], "answers": ["red", "no", "blue", "yes"],
        "dialogs": [{"image_id": 7, "image_base64": img, "dialog": [
            {"question": 0, "answer": 0, "answer_options": [2, 0]},
            {"question": 1, "answer": 1, "answer_options": [1, 3]}]}]}}  # fmt: skip
    _write(root, "VisDial/Visdial_1.0_val_v1.2.json", visdial)
    return root


def test_every_dataset_and_dimension_is_registered() -> None:
    suite = BENCHMARKS.get("reform-eval")
    assert len(suite.members) == 61 and len(set(suite.members)) == 61
    dims = {BENCHMARKS.get(m).reform for m in suite.members}
    assert dims == set(DIMENSIONS.values()) and len(dims) == 8
    sizes = {d: len(BENCHMARKS.get(f"reform-eval-{d}").members) for d in DIMENSIONS}
    # The README's "Data Usage" lists: 9 + 10 + 15 + 3 + 6 + 4 + 2 + 12 = 61.
    assert sizes == {"coarse": 9, "fine": 10, "scene-text": 15, "spatial": 3,
                     "cross-modal": 6, "description": 4, "dialogue": 2, "reasoning": 12}  # fmt: skip


def test_families_read_the_released_layout(clone: Path) -> None:
    medic = load_samples(f"reform-eval-medic,path={clone}").samples
    assert [s.answer for s in medic] == [1, 1]
    assert medic[0].question == "What disaster happens in the image? Please select one option."
    assert medic[0].choices == ["flood", "fire", "none"]
    assert medic[0].metadata["dimension"] == "Coarse-Grained Perception"
    ocr = load_samples(f"reform-eval-ic15,path={clone}").samples
    assert ocr[0].formulation == "ocr" and ocr[0].answer == ["STOP"]
    cap = load_samples(f"reform-eval-mscoco-caption,path={clone}").samples
    assert cap[0].formulation == "caption" and cap[0].answer == ["a red square", "red"]
    dialog = load_samples(f"reform-eval-visdial,path={clone}").samples
    # Capitalized, '?' added, options by index, gold = position of the answer in the options.
    assert [(s.question, s.choices, s.answer) for s in dialog] == [
        ("What color is it?", ["Blue", "Red"], 1),
        ("Is it big?", ["No", "Yes"], 0),
    ]
    assert [s.metadata["round"] for s in dialog] == [0, 1]
    assert len({s.metadata["dialogue_id"] for s in dialog}) == 1


def test_the_suite_runs_from_one_clone_and_breaks_down_by_dimension(
    clone: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = lmmprobe(
        "run", "--data", f"reform-eval,path={clone}", "-m", "first", "--matcher", "reform",
        "--by", "dimension,dataset", "-q", "--db", tmp_path / "db", "--out", out,
        HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    text = json.dumps(results)
    for dimension in ("Coarse-Grained Perception", "Spatial Understanding",
                      "Scene Text Perception", "Visual Description", "Multi-Turn Dialogue"):  # fmt: skip
        assert dimension in text, dimension
    for dataset in ("MEDIC", "CLEVR", "IC15", "MSCOCO", "VisDial"):
        assert dataset in text, dataset
    # The report: the subtask table dimension by dimension, and each dimension's mean.
    md = tmp_path / "r.md"
    rep = lmmprobe("report", results["run_id"], "--db", tmp_path / "db", "-f", "md", "-o", md)
    assert rep.returncode == 0, rep.stderr
    page = md.read_text(encoding="utf-8")
    table = page.split("## Accuracy per dimension", 1)[1]
    header = table.split("\n")[2]
    # One column per dimension run; captions have no right/wrong verdict (CIDEr is their
    # score, in the run's results), so Visual Description's accuracy is a dash.
    assert sorted(c.strip() for c in header.strip("|").split("|")[1:]) == [
        "Coarse-Grained Perception", "Multi-Turn Dialogue", "Scene Text Perception",
        "Spatial Understanding", "Visual Description",
    ], header  # fmt: skip
    assert "Coarse-Grained Perception: MEDIC" in page
    js = tmp_path / "r.json"
    assert lmmprobe("report", results["run_id"], "--db", tmp_path / "db", "-f", "json",
                    "-o", js).returncode == 0  # fmt: skip
    dims = json.loads(js.read_text(encoding="utf-8"))["dimension_accuracy"]
    (per,) = dims.values()
    # "first" answers (A) to everything: MEDIC's gold is the second option, CLEVR's the first.
    assert per["Coarse-Grained Perception"] == 0.0
    assert per["Spatial Understanding"] == 100.0
    # VisDial: round 0's gold is the second option, round 1's the first.
    assert per["Multi-Turn Dialogue"] == 50.0
    page = tmp_path / "r.html"
    html = lmmprobe("report", results["run_id"], "--db", tmp_path / "db", "-o", page)
    assert html.returncode == 0, html.stderr
    text = page.read_text(encoding="utf-8")
    section = text.split('<section id="subtask-dimensions">', 1)[1].split("</section>", 1)[0]
    assert "<th>Multi-Turn Dialogue</th>" in section and ">50.0<" in section


def test_generation_and_likelihood_runs_report_instability_per_dimension(
    clone: Path, tmp_path: Path
) -> None:
    # ReForm-Eval's tables: accuracy and instability per dimension, generation and likelihood.
    db, ids = tmp_path / "db", []
    for method in ("generate", "likelihood"):
        out = tmp_path / method
        done = lmmprobe(
            "run", "--data", f"reform-eval,path={clone}", "-m", "random", "--matcher", "reform",
            "--method", method, "--repeats", "5", "-q", "--db", db, "--out", out,
            HF_HUB_OFFLINE="1",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        ids.append(json.loads((out / "results.json").read_text(encoding="utf-8"))["run_id"])
        # Each repeat asks MEDIC's next wording (ReForm-Eval's duplicates); likelihood runs ask
        # its likelihood list with no options shown.
        rows = tmp_path / f"{method}.jsonl"
        assert lmmprobe("export", ids[-1], "--db", db, "-o", rows).returncode == 0
        asked = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
        medic = [r for r in asked if r["sample_id"] == asked_id(asked, "reform-eval-medic")]
        prompts = [r["prompt"] for r in sorted(medic, key=lambda r: r["repeat"])]
        BENCHMARKS.names()  # the definitions register (and fill SETS) when first read
        wordings = BENCHMARK_SETS["reform-eval-medic"]
        listed = wordings.questions if method == "generate" else wordings.likelihood_questions
        assert [p.split(" Options:")[0] for p in prompts] == list(listed)
        assert all(("Options:" in p) == (method == "generate") for p in prompts)
        assert all("reform_wordings" not in r["metadata"] for r in asked)
    md = tmp_path / "r.md"
    rep = lmmprobe("report", *ids, "--db", db, "-f", "md", "-o", md)
    assert rep.returncode == 0, rep.stderr
    page = md.read_text(encoding="utf-8")
    table = page.split("## Instability per dimension", 1)[1].split("###", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| random")]
    assert len(rows) == 2 and any("likelihood" in r for r in rows), table
    # Single-choice dimensions only: OCR and captions have no options to be unstable over.
    header = table.split("\n")[2]
    assert "Spatial Understanding" in header and "Multi-Turn Dialogue" in header
    js = tmp_path / "r.json"
    assert lmmprobe("report", *ids, "--db", db, "-f", "json", "-o", js).returncode == 0
    report = json.loads(js.read_text(encoding="utf-8"))
    for label, per in report["subtask_instability"].items():
        assert set(per) == {"MEDIC", "CLEVR", "VisDial"}, label
        # Entropy of at most 5 picks among 2 or 3 options: between 0 and ln 3.
        assert all(0 <= v <= 1.0987 for v in per.values()), per
    assert len(report["dimension_instability"]) == 2


def asked_id(rows: list[dict[str, object]], dataset: str) -> object:
    """The first sample id of `dataset` among exported rows."""
    return next(r["sample_id"] for r in rows if str(r["sample_id"]).startswith(dataset + "/"))


def test_a_bad_item_names_file_row_and_field(clone: Path) -> None:
    _write(clone, "MEDIC/disaster-type-selection-sampled.json",
           {"dataset_name": "MEDIC", "data": [{"img": _image(), "options": ["a", "b"], "gt": 5}]})  # fmt: skip
    got = load_samples(f"reform-eval-medic,path={clone}")
    assert not got.samples
    line = str(got.problems[0])
    assert (
        "disaster-type-selection-sampled.json" in line and "gt" in line and "out of range" in line
    )


def test_data_show_describes_the_suite() -> None:
    done = lmmprobe("data", "show", "reform-eval")
    assert done.returncode == 0, done.stderr
    assert "61" in done.stdout and "Aweminus/ReForm-Eval-Data" in done.stdout


def test_one_clone_in_the_data_dir_serves_every_member(clone: Path, tmp_path: Path) -> None:
    # $LMMPROBE_DATA_DIR/reform-eval is the clone (Benchmark.copy), for each dataset and suite;
    # ReForm-Eval's own layout (the clone inside its repository) is found one level down.
    data_dir = tmp_path / "data"
    (data_dir / "reform-eval").mkdir(parents=True)
    clone.rename(data_dir / "reform-eval" / "ReForm-Eval-Data")
    done = lmmprobe("data", "show", "reform-eval-medic", LMMPROBE_DATA_DIR=str(data_dir))
    assert done.returncode == 0, done.stderr
    assert '--local-dir "$LMMPROBE_DATA_DIR/reform-eval"' in done.stdout.replace("\n", "")
    out = tmp_path / "out"
    run = lmmprobe(
        "run", "--data", "reform-eval-dialogue", "-m", "first", "-q", "--db", tmp_path / "db",
        "--out", out, LMMPROBE_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # VisDial's two rounds were asked; VQA-MT's file is not in the clone: a problem naming it.
    assert results["models"]["first"]["counts"]["rows"] == 2
    (problem,) = results["data"]["problems"]
    assert "reform-eval-vqa-mt" in problem and "VQA_MultiTurn_v1.0.json: file not found" in problem
