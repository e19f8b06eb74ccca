"""``--data openvlm`` / ``openvlm-main``: the leaderboard's set as one name, its average (issue 37, 3).

The sets run on fixtures of two members in their published schema (AI2D and MME, written as
the Hub lays them out) with a scripted model, end to end through `lmmprobe.api.evaluate` and
through the console script. Each column must be computed from its own benchmark's rows only,
in the leaderboard's unit; with columns missing the run reports a partial average under its own
name and says which columns are missing; with every column present, the leaderboard's average.
The average's parity with the leaderboard's own code is tests/parity/test_openvlm_leaderboard.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.benchmarks import BENCHMARKS
from lmmprobe.metrics.builtin import leaderboard as builtin
from lmmprobe.metrics.leaderboard import OPENVLM_COLUMNS, OPENVLM_DEFAULT, OPENVLM_MAIN
from lmmprobe.schema import FormulateConfig

SCRIPT = scripted_model("openvlm-scripted")
MODEL = SCRIPT.name

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((10 * i % 255, 80, 160)), "path": f"{i}.png"}


def _copies(root: Path) -> Path:
    """FOLDER/ai2d (2 questions) and FOLDER/mme (6), as ``path=FOLDER`` of a set reads them."""
    ai2d = {
        "question": ["What eats grass? #a", "What is the sun? #b"],
        "options": [["deer", "hawk", "fox", "owl"], ["star", "planet"]],
        "answer": ["0", "0"],
        "image": [_img(1), _img(2)],
    }
    feats = Features({"question": Value("string"), "options": Seq(Value("string")),
                      "answer": Value("string"), "image": Image()})  # fmt: skip
    write_hub_snapshot(root / "ai2d", {"test": Dataset.from_dict(ai2d, features=feats)})
    mme = {
        "question_id": ["existence/1.png", "existence/1.png", "existence/2.png", "existence/2.png",
                        "code_reasoning/1.png", "code_reasoning/1.png"],
        "image": [_img(i) for i in range(6)],
        "question": [f"Is it {t}? Please answer yes or no. #{t}" for t in "cdefgh"],
        "answer": ["Yes", "No", "Yes", "No", "Yes", "No"],
        "category": ["existence"] * 4 + ["code_reasoning"] * 2,
    }  # fmt: skip
    feats = Features({k: (Image() if k == "image" else Value("string")) for k in mme})
    write_hub_snapshot(root / "mme", {"test": Dataset.from_dict(mme, features=feats)})
    return root


# AI2D: 2 of 2 right (100%). MME: existence 3/4 right and 1/2 images wholly right (75 + 50),
# code_reasoning 1/2 and 0/1 (50 + 0): perception 125, cognition 50, the total 175 points.
REPLIES = {"a": "A", "b": "A", "c": "Yes", "d": "No, there is not.", "e": "yes", "f": "Yes",
           "g": "maybe", "h": "no"}  # fmt: skip


def _run(tmp_path: Path, data: str) -> Any:
    SCRIPT.replies.clear()
    SCRIPT.replies.update(REPLIES)
    ev = evaluate(models=[MODEL], data=data, db=str(tmp_path / "db"), bootstrap=0,
                  out=str(tmp_path / "out"))  # fmt: skip
    return ev.results


def test_the_sets_are_registered_by_name_with_the_leaderboards_columns() -> None:
    default, main = BENCHMARKS.get("openvlm"), BENCHMARKS.get("openvlm-main")
    assert default.members == (
        "mmbench-v11-en", "mmbench-v11-cn", "mmstar", "mmmu", "mathvista", "ocrbench", "ai2d",
        "hallusionbench", "mmvet",
    )  # fmt: skip
    assert {"mme", "llava-wild", "seedbench", "pope"} <= set(main.members)
    assert default.metric == main.metric == "openvlm_avg"
    assert "leaderboard" in default.groups


def test_each_column_from_its_own_rows_and_a_partial_average_named_as_such(
    tmp_path: Path,
) -> None:
    results = _run(tmp_path, f"openvlm-main,path={_copies(tmp_path / 'copies')}")
    m = results.models[MODEL].metrics
    # Each column from its benchmark's rows alone: AI2D's accuracy is not the run's, which
    # mixes in MME's yes/no answers.
    assert m["openvlm_ai2d"].value == 100.0
    assert m["accuracy"].value != 1.0
    assert m["openvlm_mme"].value == 175.0  # MME's total: perception + cognition, points
    # 16 of 18 columns missing: no leaderboard average, a partial one under its own name.
    assert "openvlm_avg" not in m
    expected = round(np.mean([175.0 / 28, 100.0]), 1)  # MAIN_FIELDS order: MME before AI2D
    assert m["openvlm_avg_partial"].value == expected == 53.1
    notes = " ".join(results.notes)
    assert "16 of the 18 openvlm-main columns are missing" in notes
    assert "MMBench_V11 (mmbench-v11-en, mmbench-v11-cn)" in notes
    assert "not the leaderboard's Avg Score" in notes
    # Only the whole run: no --by group carries them.
    assert all("openvlm_mme" not in g for b in results.models[MODEL].breakdown.values()
               for g in b.values())  # fmt: skip


def test_with_every_column_present_the_average_is_the_leaderboards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A set of the two columns the fixtures give: every column present.
    monkeypatch.setitem(builtin.LEADERBOARD_SETS, "openvlm-main", ("MME", "AI2D"))
    results = _run(tmp_path, f"openvlm-main,path={_copies(tmp_path / 'copies')}")
    m = results.models[MODEL].metrics
    assert m["openvlm_avg"].value == round(np.mean([175.0 / 28, 100.0]), 1)
    assert "openvlm_avg_partial" not in m
    assert not any("missing" in n for n in results.notes)


def test_each_row_of_a_set_is_read_by_its_own_benchmarks_matcher(tmp_path: Path) -> None:
    # "Certainly yes." is yes to lmmprobe's matcher, but MME's rule reads its first four
    # characters ("cert") as neither: wrong. A set's run reads each row with its benchmark's
    # matcher (``benchmark``), so MME's column is MME's reading (175 points), not 250.
    SCRIPT.replies.clear()
    SCRIPT.replies.update({**REPLIES, "g": "Certainly yes."})
    data = f"openvlm-main,path={_copies(tmp_path / 'copies')}"
    ev = evaluate(models=[MODEL], data=data, db=str(tmp_path / "db"), bootstrap=0,
                  out=str(tmp_path / "out"))  # fmt: skip
    assert ev.results.models[MODEL].metrics["openvlm_mme"].value == 175.0
    assert ev.results.models[MODEL].metrics["openvlm_ai2d"].value == 100.0
    # A FormulateConfig object naming `benchmark` is its dict form (re-test 16 #15: its
    # empty map read every row with lmmprobe's matcher, so MME's column was not given).
    as_object = evaluate(models=[MODEL], data=data, db=str(tmp_path / "db3"), bootstrap=0,
                         out=str(tmp_path / "out3"),
                         formulate=FormulateConfig(matcher="benchmark"))  # fmt: skip
    assert as_object.results.models[MODEL].metrics["openvlm_mme"].value == 175.0
    # Read with lmmprobe's matcher throughout, MME's figure is not MME's: not given.
    forced = evaluate(models=[MODEL], data=data, db=str(tmp_path / "db2"), bootstrap=0,
                      out=str(tmp_path / "out2"), formulate={"matcher": "lmmprobe"})  # fmt: skip
    assert "openvlm_mme" not in forced.results.models[MODEL].metrics


def test_the_default_set_names_its_judged_columns_and_other_runs_get_no_columns(
    tmp_path: Path,
) -> None:
    results = _run(tmp_path, f"openvlm,path={_copies(tmp_path / 'copies')}")
    m = results.models[MODEL].metrics
    assert m["openvlm_ai2d"].value == 100.0
    assert "openvlm_mme" not in m  # not a column of the default set
    assert m["openvlm_avg_partial"].value == 100.0
    assert any("7 of the 8 openvlm columns are missing" in n for n in results.notes)
    plain = _run(tmp_path / "plain", f"ai2d,path={tmp_path / 'copies' / 'ai2d'}")
    assert not any(k.startswith("openvlm_") for k in plain.models[MODEL].metrics)
    assert not plain.notes


def test_every_column_names_a_registered_metric() -> None:
    from lmmprobe.metrics.run_metric import RUN_METRICS

    for field in OPENVLM_MAIN:
        for metric in OPENVLM_COLUMNS[field].metrics:
            assert metric in RUN_METRICS, (field, metric)
    assert set(OPENVLM_DEFAULT) <= set(OPENVLM_MAIN)


def test_the_console_script_shows_the_partial_average_and_what_is_missing(
    tmp_path: Path,
) -> None:
    copies = _copies(tmp_path / "copies")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMMPROBE_")}
    proc = lmmprobe(
        "run", "--data", f"openvlm,path={copies}", "-m", "first", "--bootstrap", "0",
        "--db", tmp_path / "db", "--out", tmp_path / "out", columns=80, HF_HUB_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "cache"), **{k: env[k] for k in ("PATH",) if k in env},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "partial avg" in text
    assert "7 of the 8 openvlm columns are missing" in text
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    metrics = results["models"]["first"]["metrics"]
    assert metrics["openvlm_ai2d"]["value"] == 100.0  # `first` answers A, AI2D's gold here
    assert metrics["openvlm_avg_partial"]["value"] == 100.0
    assert "openvlm_avg" not in metrics


# --------------------------------------------------------------------------- a folder of tables

MMSTAR_QUESTIONS = [
    "Where is the cup? #m\nOptions: A: on the table, B: under the chair, C: in the sink, D: on "
    "the shelf",
    "Count? #n\nOptions: A: 1, B: 2, C: 3, D: 4",
]


def _mmstar_copy(root: Path) -> None:
    rows = {
        "index": [0, 1],
        "question": MMSTAR_QUESTIONS,
        "image": [_img(1), _img(2)],
        "answer": ["C", "D"],
        "category": ["coarse perception", "math"],
        "l2_category": ["image scene and topic", "numeric commonsense and calculation"],
        "meta_info": [{"source": "SEEDBench", "split": "val", "image_path": "1.jpg"}] * 2,
    }
    feats = Features({
        "index": Value("int64"), "question": Value("string"), "image": Image(),
        "answer": Value("string"), "category": Value("string"),
        "l2_category": Value("string"),
        "meta_info": {"source": Value("string"), "split": Value("string"),
                      "image_path": Value("string")},
    })  # fmt: skip
    folder = root / "mmstar"
    folder.mkdir(parents=True)
    Dataset.from_dict(rows, features=feats).to_parquet(str(folder / "mmstar.parquet"))
    card = (
        "---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n"
        "    path: mmstar.parquet\n---\n"
    )
    (folder / "README.md").write_text(card, encoding="utf-8")


def test_a_folder_of_vlmevalkit_tables_gives_the_runs_columns_and_average(
    tmp_path: Path,
) -> None:
    copies = _copies(tmp_path / "copies")
    _mmstar_copy(copies)
    replies = {**REPLIES, "a": "A", "b": "B", "m": "C", "n": "A"}  # AI2D 1/2, MMStar 1/2
    SCRIPT.replies.clear()
    SCRIPT.replies.update(replies)
    run = evaluate(models=[MODEL], data=f"openvlm,path={copies}", db=str(tmp_path / "db"),
                   bootstrap=0, out=str(tmp_path / "out")).results.models[MODEL].metrics  # fmt: skip
    # The same answers as VLMEvalKit writes them: MODEL_DATASET.xlsx, one per benchmark.
    folder = tmp_path / "vlmevalkit"
    folder.mkdir()
    pd = pytest.importorskip("pandas")
    pd.DataFrame({
        "index": [0, 1], "question": ["What eats grass? #a", "What is the sun? #b"],
        "A": ["deer", "star"], "B": ["hawk", "planet"], "C": ["fox", None], "D": ["owl", None],
        "answer": ["A", "A"], "prediction": ["A", "B"],
    }).to_excel(folder / "LLaVA_AI2D_TEST.xlsx", index=False)  # fmt: skip
    # Every option is in the table, as VLMEvalKit writes it: AI2D's rows join by their
    # question, options and gold (lmmprobe.predictions.id_schemes).
    pd.DataFrame({
        "index": [0, 1], "question": MMSTAR_QUESTIONS, "answer": ["C", "D"],
        "prediction": ["C", "A"],
    }).to_csv(folder / "LLaVA_MMStar.tsv", sep="\t", index=False)  # fmt: skip
    # VLMEvalKit's score sidecar beside it is not a prediction file of MMStar.
    (folder / "LLaVA_MMStar_acc.csv").write_text("split,Overall\nnone,50.0\n", encoding="utf-8")
    proc = lmmprobe(
        "score", folder, "--benchmark", f"openvlm,path={copies}", "--format", "json",
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-cache"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["files"] == {
        "mmstar": str(folder / "LLaVA_MMStar.tsv"),
        "ai2d": str(folder / "LLaVA_AI2D_TEST.xlsx"),
    }
    got = doc["metrics"]
    want = {k: v.value for k, v in run.items() if k.startswith("openvlm_")}
    assert (
        got == want == {"openvlm_mmstar": 50.0, "openvlm_ai2d": 50.0, "openvlm_avg_partial": 50.0}
    )
    assert doc["partial"] and "not openvlm's" in doc["label"]
    assert (
        "no file mmbench-v11-en.EXT or *_MMBench_TEST_EN_V11.EXT"
        in doc["missing"]["MMBench_V11"][0]
    )
    table = lmmprobe(
        "score", folder, "--benchmark", f"openvlm,path={copies}", columns=80,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-cache"),
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.split())
    assert "partial avg (not openvlm's: 2 of 8 columns): 50.0" in text
    assert "missing MMVet (mmvet)" in text


def test_a_folder_with_two_files_for_one_benchmark_is_refused_naming_both(tmp_path: Path) -> None:
    folder = tmp_path / "preds"
    folder.mkdir()
    for name in ("a_MMStar.tsv", "b_MMStar.xlsx"):
        (folder / name).write_text("index\tprediction\n0\tA\n", encoding="utf-8")
    proc = lmmprobe("score", folder, "--benchmark", "openvlm", HF_HUB_OFFLINE="1")
    assert proc.returncode != 0
    err = " ".join(proc.stderr.split())
    assert "2 files for mmstar (MMStar): a_MMStar.tsv, b_MMStar.xlsx" in err


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_folder_of_which_nothing_can_be_scored_fails(tmp_path: Path, fmt: str) -> None:
    # Re-test 13 #6: every column "-" and "no column has a figure", yet exit 0 (CI passed).
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "M_OCRBench.xlsx").write_text("not a spreadsheet\n", encoding="utf-8")
    proc = lmmprobe(
        "score", folder, "--benchmark", f"openvlm,path={tmp_path / 'copies'}", "--format", fmt,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cache"),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: nothing in {folder} could be scored as openvlm: no column has a figure "
        "(each one's reason is above)"
    ]
    if fmt == "json":  # the document still says why each column is missing
        doc = json.loads(proc.stdout)
        assert doc["average"] is None and "not a readable .xlsx" in doc["missing"]["OCRBench"][0]


def test_a_member_file_that_is_no_regular_file_is_named_as_such(tmp_path: Path) -> None:
    # Re-test 13 left it: a FIFO or a link to a device was "no file ... in FOLDER", which sent
    # the user looking for a file that is there.
    folder = tmp_path / "preds"
    folder.mkdir()
    os.mkfifo(folder / "M_MMStar.tsv")
    (folder / "M_OCRBench.xlsx").symlink_to("/dev/zero")
    proc = lmmprobe("score", folder, "--benchmark", "openvlm", columns=1000, HF_HUB_OFFLINE="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert f"missing MMStar (mmstar): {folder / 'M_MMStar.tsv'}: a FIFO, not a regular file" in said
    assert "missing OCRBench (ocrbench): " in said
    assert f"{folder / 'M_OCRBench.xlsx'}: a character device, not a regular file" in said


def test_a_tool_version_for_a_leaderboard_folder_is_refused_not_ignored(tmp_path: Path) -> None:
    folder = tmp_path / "preds"
    folder.mkdir()
    proc = lmmprobe(
        "score", folder, "--benchmark", "openvlm", "--tool-version", "2024-01-08",
        HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a folder scored as a leaderboard set takes --benchmark and --format only" in (
        " ".join(proc.stderr.split())
    )


def test_a_sets_official_figures_need_their_benchmarks_matcher_in_the_run(tmp_path: Path) -> None:
    # Under --matcher benchmark each row is read by the matcher `formulate.matchers` names for
    # its benchmark. A spec naming none for MME (an empty map, or another matcher) read MME's
    # rows with lmmprobe's matcher, yet MME's figure was given as MME's reading (250 where
    # MME's rule gives 175): not given now, as under --matcher lmmprobe.
    SCRIPT.replies.clear()
    SCRIPT.replies.update({**REPLIES, "g": "Certainly yes."})
    data = f"openvlm-main,path={_copies(tmp_path / 'copies')}"
    for n, matchers in enumerate(({}, {"mme": "lmmprobe"})):
        ev = evaluate(models=[MODEL], data=data, db=str(tmp_path / f"db{n}"), bootstrap=0,
                      out=str(tmp_path / f"out{n}"),
                      formulate={"matcher": "benchmark", "matchers": matchers})  # fmt: skip
        assert "openvlm_mme" not in ev.results.models[MODEL].metrics, matchers
