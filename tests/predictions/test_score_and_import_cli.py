"""``lmmprobe score FILE --benchmark`` and ``lmmprobe import`` through the console script.

For each benchmark family (choice: MMBench's CircularEval from a VLMEvalKit table; MMMU from
MMMU's own output folder; MathVista from its output JSON; open VQA from a mapped JSONL), the
figures of the file equal those of a lmmprobe run whose model gave the same answers (a scripted
model replying by the ``#tag`` each question holds), on the same local benchmark copy built in
the benchmark's published schema.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    MATHVISTA_META,
    MATHVISTA_META_ROW,
    own_datasets_cache,
    scripted_model,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.api import evaluate

FIXTURES = Path(__file__).parent / "fixtures"
SCRIPT = scripted_model("i27-scripted")
IMG = Image()
STR = Value("string")

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((10 * i % 255, 80, 160)), "path": f"{i}.png"}


def _run_metrics(tmp_path: Path, data: str, replies: dict[str, str]) -> dict[str, Any]:
    SCRIPT.replies.clear()
    SCRIPT.replies.update(replies)
    ev = evaluate(
        models=[SCRIPT.name], data=data, db=str(tmp_path / "run.db"),
        out=str(tmp_path / "run-out"), bootstrap=0,
    )  # fmt: skip
    return {k: v.value for k, v in ev.results.models[SCRIPT.name].metrics.items()}


def _score(tmp_path: Path, file: Path, data: str, *more: str) -> dict[str, Any]:
    done = lmmprobe(
        "score", file, "--benchmark", data, "--format", "json", *more,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _values(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: (v or {}).get("value") for k, v in doc["metrics"].items()}


# --------------------------------------------------------------------------- MMMU


def _mmmu_copy(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An MMMU validation copy holding the fixture's items, and the fixture's responses by tag."""
    records = [
        r
        for subject in sorted((FIXTURES / "mmmu" / "llava1.5_13b").iterdir())
        for r in json.loads((subject / "output.json").read_text())
    ]
    n = len(records)
    tags = [r["id"].removeprefix("validation_") for r in records]
    rows: dict[str, list[Any]] = {
        "id": [r["id"] for r in records],
        "question": [f"<image 1> Which one? #{t}" for t in tags],
        "options": [str(list(r["index2ans"].values())) for r in records],
        "explanation": [""] * n,
        "image_1": [_img(i) for i in range(n)],
        **{f"image_{k}": [None] * n for k in range(2, 8)},
        "img_type": ["['Photos']"] * n,
        "answer": [r["answer"] for r in records],
        "topic_difficulty": ["Easy"] * n,
        "question_type": [r["question_type"] for r in records],
        "subfield": ["x"] * n,
    }
    feats = Features({k: (IMG if k.startswith("image_") else STR) for k in rows})
    folder = write_hub_snapshot(
        tmp_path / "mmmu", {"validation": Dataset.from_dict(rows, features=feats)}
    )
    return folder, {t: r["response"] for t, r in zip(tags, records, strict=True)}


def test_mmmu_output_folder_scores_as_a_run_of_the_same_answers(tmp_path: Path) -> None:
    folder, replies = _mmmu_copy(tmp_path)
    data = f"mmmu,path={folder}"
    run = _run_metrics(tmp_path, data, replies)
    doc = _score(tmp_path, FIXTURES / "mmmu" / "llava1.5_13b", data)
    assert doc["reader"] == "mmmu" and doc["rows"] == 6 and doc["missing"] == 0
    assert doc["golds"] == "benchmark"
    assert _values(doc)["mmmu_accuracy"] == run["mmmu_accuracy"] == pytest.approx(3 / 6)
    # MMMU's subjects and disciplines (its DOMAIN_CAT2SUB_CAT) are the default breakdowns.
    subjects = doc["breakdown"]["mmmu_subject"]
    assert subjects["Art"]["mmmu_accuracy"]["value"] == pytest.approx(1.0)
    assert subjects["Accounting"]["mmmu_accuracy"]["value"] == pytest.approx(0.0)
    disciplines = doc["breakdown"]["discipline"]
    assert list(disciplines) == ["Art and Design", "Business"]
    assert disciplines["Business"]["mmmu_accuracy"]["value"] == pytest.approx(0.0)


# --------------------------------------------------------------------------- MathVista


def _mathvista_copy(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    records = list(json.loads((FIXTURES / "mathvista" / "output_bard.json").read_text()).values())
    n = len(records)
    rows = {
        "pid": [r["pid"] for r in records],
        "question": [r["question"] for r in records],
        "image": [r["image"] for r in records],
        "decoded_image": [_img(i) for i in range(n)],
        "choices": [r["choices"] for r in records],
        "unit": [r["unit"] for r in records],
        "precision": [None if r["precision"] is None else float(r["precision"]) for r in records],
        "answer": [r["answer"] for r in records],
        "question_type": [r["question_type"] for r in records],
        "answer_type": [r["answer_type"] for r in records],
        "metadata": [MATHVISTA_META_ROW] * n,
        # The tag first: the scripted model answers by the first #tag of its prompt.
        "query": [f"#p{r['pid']} {r['query']}" for r in records],
    }
    feats = Features({
        "pid": STR, "question": STR, "image": STR, "decoded_image": IMG,
        "choices": Seq(STR), "unit": STR, "precision": Value("float64"), "answer": STR,
        "question_type": STR, "answer_type": STR, "metadata": MATHVISTA_META, "query": STR,
    })  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "mathvista", {"testmini": Dataset.from_dict(rows, features=feats)}
    )
    return folder, {f"p{r['pid']}": r["response"] for r in records}


def test_mathvista_output_scores_its_gpt_extraction_as_calculate_score(tmp_path: Path) -> None:
    folder, replies = _mathvista_copy(tmp_path)
    data = f"mathvista,path={folder}"
    run = _run_metrics(tmp_path, data, replies)
    doc = _score(tmp_path, FIXTURES / "mathvista" / "output_bard.json", data)
    assert doc["reader"] == "mathvista" and doc["rows"] == 6
    # The file's GPT-4 extractions are its recorded judge answers: they decide every item, as
    # in MathVista's calculate_score (the mean of its true_false), where the run without a
    # judge reads the same responses by rule.
    records = json.loads((FIXTURES / "mathvista" / "output_bard.json").read_text()).values()
    true_false = [r["true_false"] for r in records]
    assert _values(doc)["mathvista_accuracy"] == pytest.approx(sum(true_false) / len(true_false))
    assert _values(doc)["accuracy"] == run["accuracy"]
    assert run["mathvista_accuracy"] is not None


def test_imported_recorded_judge_readings_fill_the_judges_section(tmp_path: Path) -> None:
    # MathVista's stored extractions are its GPT-4 judge's readings: the imported run's
    # results, report and terminal name that judge as recorded, count what it decided, and say
    # no judge was called, as a run judged with --judge reports its judges.
    folder, _ = _mathvista_copy(tmp_path)
    source = FIXTURES / "mathvista" / "output_bard.json"
    db = tmp_path / "store.db"
    done = lmmprobe(
        "import", source, "--benchmark", f"mathvista,path={folder}", "--model", "bard",
        "--db", db, HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "judged (mathvista-extract recorded): 0 by rule, 6 by judge, 0 unjudged" in done.stdout
    (run_dir,) = [p for p in tmp_path.iterdir() if (p / "results.json").is_file()]
    results = json.loads((run_dir / "results.json").read_text())
    judge = results["models"]["bard"]["judge"]
    assert judge["judges"] == ["mathvista:gpt-4 (recorded)"]
    assert judge["protocols"] == {"mathvista-extract": "recorded"}
    assert judge["decided"] == {"rule": 0, "judge": 6, "unjudged": 0}
    assert judge["calls"] == {}
    recorded = results["manifest"]["judge"]
    assert recorded["recorded"] is True
    assert (
        recorded["judges"]["mathvista:gpt-4 (recorded)"]["sha256"]
        == (results["manifest"]["origin"]["sha256"])
    )
    md = (run_dir / "results.md").read_text()
    assert "## Judges" in md and "no judge was called" in md
    assert "| bard | 0 | 6 | 0 |" in md
    scored = _score(tmp_path, source, f"mathvista,path={folder}")
    assert scored["judge"]["decided"] == judge["decided"]


# --------------------------------------------------------------------------- MMBench (choice)

MMB_ROWS = {
    "index": ["1", "1000001", "2", "1000002"],
    "question": ["What colour? #a", "What colour? #b", "Which shape? #c", "Which shape? #d"],
    "hint": ["A hint.", "A hint.", "nan", "nan"],
    "answer": ["A", "B", "B", "A"],
    "A": ["red", "blue", "round", "square"],
    "B": ["blue", "red", "square", "round"],
    "C": [None] * 4, "D": [None] * 4,
    "category": ["color", "color", "shape", "shape"],
    "image": [_img(i) for i in range(4)],
    "source": ["s"] * 4, "L2-category": ["perception"] * 4, "comment": [None] * 4,
    "split": ["dev"] * 4,
}  # fmt: skip


@pytest.mark.parametrize("suffix", [".tsv", ".xlsx"])
def test_vlmevalkit_mmbench_table_scores_circular_eval_as_a_run(
    tmp_path: Path, suffix: str
) -> None:
    feats = Features({k: STR for k in MMB_ROWS if k != "image"} | {"image": IMG})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(MMB_ROWS, features=feats)}, config="en"
    )
    replies = {"a": "A", "b": "B", "c": "B", "d": "The answer is B"}
    run = _run_metrics(tmp_path, f"mmbench,path={folder}", replies)
    table = pd.DataFrame(
        {
            "index": [int(i) for i in MMB_ROWS["index"]],
            "question": MMB_ROWS["question"],
            "A": MMB_ROWS["A"], "B": MMB_ROWS["B"], "answer": MMB_ROWS["answer"],
            "category": MMB_ROWS["category"], "l2-category": MMB_ROWS["L2-category"],
            "prediction": [replies[t] for t in "abcd"],
        }
    )  # fmt: skip
    path = tmp_path / f"LLaVA_MMBench_DEV_EN{suffix}"
    if suffix == ".xlsx":  # VLMEvalKit's default PRED_FORMAT (written by pandas)
        table.to_excel(path, index=False, engine="openpyxl")
    else:
        table.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    doc = _score(tmp_path, path, f"mmbench,path={folder}")
    assert doc["reader"] == "vlmevalkit"
    got = _values(doc)
    assert got["mmbench_circular"] == run["mmbench_circular"] == pytest.approx(0.5)
    assert got["accuracy"] == run["accuracy"]


# --------------------------------------------------------------------------- open VQA

TEXTVQA = {
    "image_id": STR, "question_id": Value("int32"), "question": STR,
    "question_tokens": Seq(STR), "image": IMG, "image_width": Value("int32"),
    "image_height": Value("int32"), "flickr_original_url": STR, "flickr_300k_url": STR,
    "answers": Seq(STR), "image_classes": Seq(STR), "set_name": STR, "ocr_tokens": Seq(STR),
}  # fmt: skip


def test_mapped_jsonl_scores_textvqa_as_a_run(tmp_path: Path) -> None:
    n = 3
    rows = {
        "image_id": ["a1", "a2", "a3"], "question_id": [34602, 34603, 34604],
        "question": ["what colour is the sign? #a", "what colour is the car? #b",
                     "what is written? #c"],
        "question_tokens": [["what"]] * n, "image": [_img(i) for i in range(n)],
        "image_width": [8] * n, "image_height": [8] * n, "flickr_original_url": ["u"] * n,
        "flickr_300k_url": ["u"] * n,
        "answers": [["Red"] * 10, ["blue"] * 2 + ["navy"] * 8, ["yellow"] * 10],
        "image_classes": [["sign"]] * n, "set_name": ["val"] * n, "ocr_tokens": [["stop"]] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "textvqa", {"validation": Dataset.from_dict(rows, features=Features(TEXTVQA))}
    )
    replies = {"a": "red", "b": "Blue.", "c": "stop"}
    data = f"textvqa,path={folder}"
    run = _run_metrics(tmp_path, data, replies)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"question_id": qid, "answer": replies[t]}) + "\n"
            for qid, t in zip((34602, 34603, 34604), "abc", strict=True)
        )
    )
    doc = _score(tmp_path, answers, data, "--field", "id=question_id,prediction=answer")
    assert doc["reader"] == "mapped"
    assert _values(doc)["vqa_accuracy_evalai"] == run["vqa_accuracy_evalai"]
    assert run["vqa_accuracy_evalai"] == pytest.approx((1 + 0.6 + 0) / 3)


# --------------------------------------------------------------------------- import


def test_import_stores_a_run_that_runs_and_report_show_with_its_origin(tmp_path: Path) -> None:
    folder, _ = _mmmu_copy(tmp_path)
    db = tmp_path / "store.db"
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache")}
    source = FIXTURES / "mmmu" / "llava1.5_13b"
    done = lmmprobe(
        "import", source, "--benchmark", f"mmmu,path={folder}", "--model", "llava-1.5-13b",
        "--db", db, "--format", "json", **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)
    assert imported["origin"]["tool"] == "mmmu"
    run_id = imported["run_id"]
    listed = lmmprobe("runs", "--db", db, "--format", "json", **env)
    (row,) = json.loads(listed.stdout)
    assert row["id"] == run_id and row["models"] == ["llava-1.5-13b"]
    assert row["origin"]["sha256"] == imported["origin"]["sha256"]
    assert row["setting"][0].startswith("imported from mmmu (sha256 ")
    results = json.loads((tmp_path / run_id / "results.json").read_text())
    assert results["manifest"]["origin"]["path"] == str(source)
    assert results["models"]["llava-1.5-13b"]["metrics"]["mmmu_accuracy"]["value"] == pytest.approx(
        0.5
    )
    # MMMU's output records no judge reading: no judges section.
    assert results["models"]["llava-1.5-13b"].get("judge") is None
    assert "judge" not in results["manifest"]
    md = lmmprobe("report", run_id, "--db", db, "--format", "md", **env)
    assert md.returncode == 0, md.stderr
    assert "imported from mmmu" in md.stdout
    assert "## Judges" not in md.stdout


def test_score_of_an_unrecognised_file_says_how_to_map_it(tmp_path: Path) -> None:
    odd = tmp_path / "x.txt"
    odd.write_text("hello")
    done = lmmprobe("score", odd, "--benchmark", "mmmu")
    assert done.returncode == 2
    assert "no reader recognises this layout" in done.stderr


def test_golds_in_the_file_score_without_a_benchmark(tmp_path: Path) -> None:
    answers = tmp_path / "a.jsonl"
    rows = [
        {"answer": "Cat", "gt": ["cat", "kitty"]},  # right after normalization
        {"answer": "dog", "gt": "wolf"},
        {"answer": "x", "gt": "x"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = lmmprobe("score", answers, "--field", "prediction=answer,gold=gt", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 3
    assert _values(doc)["accuracy"] == pytest.approx(2 / 3)


def test_golds_in_the_file_give_no_benchmark_counts_in_json(tmp_path: Path) -> None:
    # Issue 34 (noticed): `score --format json` in gold-only mode carried benchmark_samples,
    # missing and unjoined, counts of a join to a benchmark that never happened.
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"qid": "a", "answer": "cat", "ref": "cat"},
        {"qid": "b", "answer": "dog", "ref": "cow"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = "id=qid,prediction=answer,gold=ref"
    done = lmmprobe("score", answers, "--field", fields, "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["golds"] == "file" and doc["rows"] == 2
    assert not {"benchmark_samples", "missing", "unjoined"} & doc.keys(), sorted(doc)
    # The run an import records says the same in its manifest.
    db = tmp_path / "store.db"
    imported = lmmprobe("import", answers, "--field", fields, "--db", db, "--format", "json")
    assert imported.returncode == 0, imported.stderr
    assert not {"benchmark_samples", "missing", "unjoined"} & json.loads(imported.stdout).keys()
    with sqlite3.connect(db) as conn:
        (stored,) = conn.execute("SELECT manifest FROM runs").fetchone()
    manifest = json.loads(stored)
    assert manifest["origin"]["golds"] == "file"
    assert "benchmark_samples" not in manifest["origin"]


def test_golds_in_the_file_name_no_benchmark_in_the_terminal(tmp_path: Path) -> None:
    # The walkthrough: `score answers.jsonl --field id=qid,prediction=answer,gold=ref` ended
    # "... 0 rows not in the benchmark" where there is no benchmark.
    answers = tmp_path / "answers.jsonl"
    rows = [
        {"qid": "a", "answer": "cat", "ref": "cat"},
        {"qid": "b", "answer": "dog", "ref": "cow"},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = lmmprobe("score", answers, "--field", "id=qid,prediction=answer,gold=ref")
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "2 predictions scored against the golds the file gives" in out, out
    assert "benchmark" not in out


def test_list_readers_and_a_forced_reader(tmp_path: Path) -> None:
    listed = lmmprobe("list", "readers")
    for name in ("lmms-eval", "vlmevalkit", "mmmu", "mathvista", "mapped"):
        assert name in listed.stdout
    # A MathVista file forced through the mapped reader: a top-level object read as {id: row}.
    done = lmmprobe(
        "score", FIXTURES / "mathvista" / "output_bard.json", "--reader", "mapped",
        "--field", "prediction=response,gold=answer", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reader"] == "mapped"
    unknown = lmmprobe("score", answers_missing := tmp_path / "none.json", "--reader", "mapped")
    assert unknown.returncode == 2 and f"{answers_missing}: no such file" in unknown.stderr


def test_import_of_a_file_that_breaks_off_in_its_first_chunk_records_no_run(
    tmp_path: Path,
) -> None:
    # The import stores rows as it joins them (a chunk at a time): a file that breaks off
    # half-way (here a duplicate id) is refused, naming both rows. Broken off before its first
    # chunk was stored, nothing of it is kept, so no run is recorded (re-test 20b #6); one that
    # breaks off in a later chunk leaves a failed run holding the rows stored
    # (tests/predictions/test_import_chunks.py).
    answers = tmp_path / "a.jsonl"
    rows = [{"id": f"q{i}", "answer": "x", "gt": "x"} for i in range(5)] + [
        {"id": "q1", "answer": "y", "gt": "x"}
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "store.db"
    done = lmmprobe(
        "import", answers, "--field", "id=id,prediction=answer,gold=gt", "--model", "m",
        "--db", db,
    )  # fmt: skip
    assert done.returncode == 2
    assert "row 6: id: 'q1' again (first at row 2)" in done.stderr
    listed = lmmprobe("runs", "--db", db, "--format", "json")
    assert json.loads(listed.stdout) == []


@pytest.mark.parametrize(
    ("model", "secret"),
    [
        ("sk-proj-abcdefghijklmnopqrstuv12", "abcdefghijklmnopqrstuv12"),
        ("mine,api_key=hunter2hunter2", "hunter2hunter2"),
        ("openai:m@http://u:pw12345678@h/v1", "pw12345678"),
    ],
)
def test_import_never_prints_a_key_given_in_its_model_name(
    tmp_path: Path, model: str, secret: str
) -> None:
    # Every file was redacted, but the terminal's last line and the title echoed --model raw.
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": "q1", "answer": "cat", "gt": "cat"}) + "\n")
    fields = "id=id,prediction=answer,gold=gt"
    for fmt in ("table", "json"):
        done = lmmprobe(
            "import", answers, "--field", fields, "--model", model, "--db", tmp_path / "db",
            "--format", fmt,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert secret not in done.stdout + done.stderr
        assert "[redacted]" in done.stdout, done.stdout


@pytest.mark.parametrize("command", ["score", "import"])
def test_a_ground_truth_with_a_benchmark_is_refused_by_score_and_import(
    tmp_path: Path, command: str
) -> None:
    # Before: `import` took both and joined Dysca's rows to the benchmark ("id '1' is not a
    # sample of demo", or silently where ids matched); `score` refused it.
    gt, out = tmp_path / "gt.json", tmp_path / "out.json"
    gt.write_text(json.dumps([{"instruction": "Question: Is it?\nChoices:\n(A) True\n(B) False\n",
                               "question_type": "true or false", "question_majority": "x",
                               "answer": "True"}]))  # fmt: skip
    out.write_text(json.dumps([{"answer": "(A)"}]))
    more = ("--db", str(tmp_path / "db")) if command == "import" else ()
    done = lmmprobe(command, out, "--ground-truth", gt, "--benchmark", "demo", *more)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--ground-truth applies to Dysca's outputs (--reader dysca), not --benchmark" in (
        " ".join(done.stderr.split())
    )
