"""A file that holds its items scores by itself: no local copy, the benchmark by name.

VLMEvalKit's prediction tables carry each item whole (question, option cells, gold letter,
category). With ``--benchmark mmbench`` and no copy of MMBench anywhere (an empty
``$LMMPROBE_DATA_DIR``, the Hub offline), the table still scores: MMBench's definition (its
CircularEval metric, its category breakdown, its judge protocol) over the file's items, and
the same figures as against a copy holding the same items. Issue 36, item 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from datasets import Dataset, Features
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    write_hub_snapshot,
)
from tests.parity.test_vlmevalkit_published import HERE as PUBLISHED
from tests.parity.test_vlmevalkit_published import TABLES as PUBLISHED_TABLES
from tests.parity.test_vlmevalkit_published import _got, _want
from tests.predictions.test_id_schemes import IDS as IDS_FIXTURES
from tests.predictions.test_id_schemes import _copy as _hallusion_copy  # any benchmark's
from tests.predictions.test_score_and_import_cli import (
    FIXTURES,
    TEXTVQA,
    _img,
    _mathvista_copy,
    _mmmu_copy,
)
from tests.predictions.test_vlmevalkit_judged import HERE as VLMEVALKIT
from tests.predictions.test_vlmevalkit_judged import VANILLA
from tests.predictions.test_vlmevalkit_judged import _bench as _mmbench_copy

from lmmprobe.predictions._rows import PANDAS_NA_TEXTS, pandas_missing
from lmmprobe.store import Store

pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def _offline(tmp_path: Path) -> dict[str, str]:
    """No copy of any benchmark: an empty data folder, an empty Hub cache, the Hub offline."""
    (tmp_path / "nodata").mkdir(exist_ok=True)
    return {
        "LMMPROBE_DATA_DIR": str(tmp_path / "nodata"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_CACHE": str(tmp_path / "hf-home" / "hub"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache"),
    }


def _score(tmp_path: Path, table: Path, benchmark: str, *more: str) -> Any:
    return lmmprobe(
        "score", table, "--benchmark", benchmark, "--format", "json", *more,
        **_offline(tmp_path),
    )  # fmt: skip


def _values(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: (v or {}).get("value") for k, v in metrics.items()}


def test_a_vlmevalkit_table_scores_with_no_copy_as_against_a_copy_of_its_items(
    tmp_path: Path,
) -> None:
    table = VLMEVALKIT / VANILLA
    alone = _score(tmp_path, table, "mmbench")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file", doc
    with_copy = _score(tmp_path, table, _mmbench_copy(tmp_path))
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    # The official metric (MMBench's CircularEval, over the judged readings the table
    # records), every other figure, and the category breakdown are the copy's.
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["mmbench_circular"]["value"] == pytest.approx(3 / 14)
    assert {g: _values(m) for g, m in doc["breakdown"]["category"].items()} == {
        g: _values(m) for g, m in copied["breakdown"]["category"].items()
    }


def test_the_table_says_its_items_came_from_the_file(tmp_path: Path) -> None:
    done = lmmprobe("score", VLMEVALKIT / VANILLA, "--benchmark", "mmbench", **_offline(tmp_path))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "44 items read from the file (no local copy of the benchmark" in said, said
    assert "MMB circ." in said


def test_a_row_whose_gold_is_not_one_of_its_options_is_named(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {
            "index": [0, 1],
            "question": ["Which is red?", "Which is blue?"],
            "A": ["apple", "sky"],
            "B": ["leaf", "grass"],
            "answer": ["A", "C"],
            "category": ["color", "color"],
            "prediction": ["A", "B"],
        }
    )
    table = tmp_path / "Model_AI2D_TEST.tsv"
    rows.to_csv(table, sep="\t", index=False)
    done = _score(tmp_path, table, "ai2d")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert f"{table}: row 3: answer: 'C' is not one of the row's option letters AB" in said, said
    # A letter whose column the table has is an option VLMEvalKit lost (its text read as
    # missing); a word that is no option's text is named too.
    rows["answer"] = ["A", "Purple"]
    rows.to_csv(table, sep="\t", index=False)
    done = _score(tmp_path, table, "ai2d")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "row 3: answer: 'Purple' is not one of the row's option letters AB (nor the text" in said
    # Cut when long: a cell of a megabyte was echoed whole, a 1 MB error line (re-test 17).
    rows["answer"] = ["A", "Purple" * 200_000]
    rows.to_csv(table, sep="\t", index=False)
    done = _score(tmp_path, table, "ai2d")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "row 3: answer: 'PurplePurple" in said
    assert "(1,200,002 characters) is not one of the row's option letters AB (nor the text" in said
    assert len(done.stderr) < 2_000


def test_the_missing_value_texts_are_pandas_own() -> None:
    # VLMEvalKit's load reads with pandas' default na_values: the texts are pandas' own.
    from pandas._libs.parsers import STR_NA_VALUES

    assert PANDAS_NA_TEXTS == STR_NA_VALUES
    assert pandas_missing("None") and pandas_missing(float("nan")) and pandas_missing(None)
    assert not pandas_missing("none") and not pandas_missing(" NA") and not pandas_missing(0)


def test_an_option_cell_pandas_reads_as_missing_is_an_unshown_option(tmp_path: Path) -> None:
    # VLMEvalKit read its dataset with pandas' defaults, so MMStar's option "None" was NaN:
    # never shown, never matched, and written empty (row 10); a table holding the text keeps
    # it (row 11); a gold letter on an empty cell names the option the file lost (row 12);
    # a gold that is an option's text names that option (row 13: RealWorldQA's "Uphill").
    rows = pd.DataFrame(
        {
            "index": [10, 11, 12, 13],
            "question": ["How many stumps?", "How many dressers?", "Which light?", "Up or down?"],
            "A": [None, "None", "Green", "Uphill"],
            "B": ["Two", "Three", "Yellow", "Downhill"],
            "C": ["One", "Two", None, None],
            "D": ["Cannot be determined", None, None, None],
            "answer": ["A", "A", "C", "Uphill"],
            "category": ["count"] * 4,
            "prediction": ["C.", "None", "B. Yellow", "A."],
        }
    )
    table = tmp_path / "Model_MMStar.tsv"
    rows.to_csv(table, sep="\t", index=False)
    done = lmmprobe(
        "import", table, "--benchmark", "mmstar", "--db", tmp_path / "runs.db",
        **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Store(tmp_path / "runs.db") as store:
        (run,) = store.list_runs()
        samples = {s.id: s for s in store.get_samples(run["id"])}
    stumps, dressers, light, road = (samples[f"mmstar/{i}"] for i in (10, 11, 12, 13))
    assert stumps.choices == [
        "(option A: its cell is empty in the file)", "Two", "One", "Cannot be determined",
    ]  # fmt: skip
    assert (stumps.answer, stumps.metadata["unshown_options"]) == (0, ["A"])
    assert (dressers.choices, dressers.metadata["unshown_options"]) == (
        ["None", "Three", "Two"], ["A"],
    )  # fmt: skip
    assert light.choices == ["Green", "Yellow", "(option C: its cell is empty in the file)"]
    assert light.answer == 2
    assert (road.choices, road.answer, "unshown_options" in road.metadata) == (
        ["Uphill", "Downhill"], 0, False,
    )  # fmt: skip


def test_a_single_choice_table_scores_accuracy_by_its_category(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {
            "index": [10, 11, 12],
            "question": ["Which is red?", "Which is blue?", "Which floats?"],
            "hint": ["", "Look up.", ""],
            "A": ["apple", "sky", "stone"],
            "B": ["leaf", "grass", "wood"],
            "answer": ["A", "A", "B"],
            "category": ["color", "color", "physics"],
            "prediction": ["A", "The answer is B.", "B"],
        }
    )
    table = tmp_path / "Model_ScienceQA_TEST.tsv"
    rows.to_csv(table, sep="\t", index=False)
    done = _score(tmp_path, table, "scienceqa-img", "--by", "category")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    groups = {g: m["accuracy"]["value"] for g, m in doc["breakdown"]["category"].items()}
    assert groups == {"color": pytest.approx(0.5), "physics": pytest.approx(1.0)}


def test_a_vlmevalkit_pope_table_scores_with_no_copy_as_against_its_copy(tmp_path: Path) -> None:
    # A POPE row answers an item of each split its category lists (POPE_rating explodes it):
    # the ids fixture's first row is asked in two splits.
    table = IDS_FIXTURES / "Model_POPE.tsv"
    alone = _score(tmp_path, table, "pope", "--by", "category")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file" and doc["rows"] == 5, doc
    with_copy = _score(tmp_path, table, _hallusion_copy(tmp_path, "pope"), "--by", "category")
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0 and copied["rows"] == 5
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert {g: _values(m) for g, m in doc["breakdown"]["category"].items()} == {
        g: _values(m) for g, m in copied["breakdown"]["category"].items()
    }


def test_a_pope_table_with_no_copy_counts_each_split_as_pope_rating_does(tmp_path: Path) -> None:
    # A table written as VLMEvalKit's evaluate writes it, and POPE_rating's own output on it
    # (tests/parity/generate/vlmevalkit_published.py): each split counts the rows listing
    # it, and --as-published gives POPE_rating's figures with no copy present.
    name = "Model_POPE_auxmatch.tsv"
    table = PUBLISHED / name
    done = _score(tmp_path, table, "pope", "--by", "category", "--as-published")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc.get("items") == "file"
    rows = pd.read_csv(table, sep="\t")
    splits = rows["category"].str.split(",").explode()
    assert doc["rows"] == len(splits)
    got = {g: m["pope_f1"]["n"] for g, m in doc["breakdown"]["category"].items()}
    assert got == splits.value_counts().to_dict()
    result = PUBLISHED_TABLES[name]["result"]
    assert _got(doc["as_published"]["tables"][0]) == _want(result)
    want = {r[0]: dict(zip(result["columns"][1:], r[1:], strict=True)) for r in result["rows"]}
    # On this table POPE's own reading and VLMEvalKit's extraction agree on every yes: the
    # F1 of each split (lmmprobe's, POPE's evaluate.py) is POPE_rating's.
    assert doc["metrics"]["pope_f1"]["value"] * 100 == pytest.approx(want["Overall"]["Overall"])
    for split, m in doc["breakdown"]["category"].items():
        assert m["pope_f1"]["value"] * 100 == pytest.approx(want[split]["Overall"]), split


def test_a_pope_row_without_its_split_is_named(tmp_path: Path) -> None:
    table = tmp_path / "Model_POPE.tsv"
    table.write_text(
        "index\tquestion\tanswer\tcategory\tprediction\n"
        "0\tIs there a dog?\tYes\tadversarial,random\tYes\n"
        "1\tIs there a cat?\tNo\t\tNo\n"
        "2\tIs there a car?\tNo\trandom,random\tNo\n"
        "3\tIs there a cup?\tMaybe\trandom\tNo\n"
    )
    for row, why in (
        (3, "category: missing"),
        (4, "category: 'random,random' lists a split twice"),
        (5, "answer: expected Yes or No, got 'Maybe'"),
    ):
        kept = table.read_text().splitlines()
        one = tmp_path / f"Model_POPE_{row}.tsv"
        one.write_text("\n".join([kept[0], kept[1], kept[row - 1]]) + "\n")
        done = _score(tmp_path, one, "pope")
        assert done.returncode != 0
        said = " ".join(done.stderr.split())
        assert f"{one}: row 3: {why}" in said, said


def test_a_pope_row_listing_what_is_no_split_of_pope_is_named_not_exploded(
    tmp_path: Path,
) -> None:
    # Before: a category of 300,000 names (2.2 MB) made 144,963 items of one row in 98 s,
    # scored 1.000: the cell cut at 1 MiB and each name taken for a split.
    table = tmp_path / "Model_POPE.tsv"
    listed = ",".join(f"s{i}" for i in range(300_000))
    table.write_text(
        "index\tquestion\tanswer\tcategory\tprediction\n"
        "0\tIs there a dog?\tYes\tadversarial,random\tYes\n"
        f"1\tIs there a cat?\tYes\tpopular,{listed}\tYes\n"
    )
    done = _score(tmp_path, table, "pope")
    assert done.returncode == 2, done.stdout[:500]
    said = " ".join(done.stderr.split())
    assert f"{table}: row 3: category: 's0' is not one of POPE's splits" in said, said[:500]
    assert len(done.stderr) < 1_000


def test_an_item_is_never_made_from_a_field_cut_at_the_reader_bound(tmp_path: Path) -> None:
    # A field past MAX_PREDICTION is kept cut in the record; before, the item was made from
    # the cut text (its question, or a POPE category cut between two splits) without a word.
    table = tmp_path / "Model_POPE.tsv"
    long = "Is there a cat" + "?" * 1_100_000
    table.write_text(
        "index\tquestion\tanswer\tcategory\tprediction\n"
        "0\tIs there a dog?\tYes\tadversarial\tYes\n"
        f"1\t{long}\tYes\tpopular\tYes\n"
    )
    done = _score(tmp_path, table, "pope")
    assert done.returncode == 2, done.stdout[:500]
    said = " ".join(done.stderr.split())
    assert f"{table}: row 3: question: read from a field of {len(long):,} characters" in said


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    category=st.one_of(st.none(), st.text(max_size=300), st.just("random," * 2000)),
    question=st.one_of(st.none(), st.text(max_size=300)),
    answer=st.one_of(st.none(), st.sampled_from(["Yes", "No", "yes."]), st.text(max_size=40)),
    image=st.one_of(st.none(), st.text(max_size=300)),
)
def test_any_pope_row_makes_its_items_or_one_named_error(
    category: str | None, question: str | None, answer: str | None, image: str | None
) -> None:
    from lmmprobe.data.base import DataError
    from lmmprobe.predictions.file_items import item_maker
    from lmmprobe.predictions.imported import ImportedPrediction

    make = item_maker("pope,split=test", "vlmevalkit")
    if make is None:  # a copy lies where a run would read it: nothing to make
        return
    fields = {"category": category, "question": question, "image_path": image}
    pred = ImportedPrediction(row=2, sample_id="7", prediction="Yes", gold=answer, fields=fields)
    try:
        items = make("t.tsv", pred)
    except DataError as exc:
        assert str(exc).startswith("t.tsv: row 2: ")
        return
    assert len({s.id for s in items}) == len(items) >= 1
    assert all(s.images == [] and s.metadata["category"] for s in items)


def test_a_mathvista_output_file_scores_with_no_copy_as_against_its_copy(tmp_path: Path) -> None:
    # MathVista's output records are its dataset's rows plus the response: MathVista's own
    # row reader reads each; the recorded extractions decide, as with the copy.
    out = FIXTURES / "mathvista" / "output_bard.json"
    alone = _score(tmp_path, out, "mathvista")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc.get("items") == "file"
    folder, _ = _mathvista_copy(tmp_path)
    copied = json.loads(_score(tmp_path, out, f"mathvista,path={folder}").stdout)
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    # The breakdowns are by the file's own metadata (its records' task, category, skills).
    records = list(json.loads(out.read_text("utf-8")).values())
    for key in ("task", "category"):
        want: dict[str, int] = {}
        for r in records:
            want[r["metadata"][key]] = want.get(r["metadata"][key], 0) + 1
        got = {g: m["mathvista_accuracy"]["n"] for g, m in doc["breakdown"][key].items()}
        assert got == want, key
    skills = {s for r in records for s in r["metadata"]["skills"]}
    assert set(doc["breakdown"]["skills"]) == skills
    # The file's own figure: the mean of its true_false (MathVista's calculate_score.py).
    truth = [bool(r["true_false"]) for r in records]
    assert doc["metrics"]["mathvista_accuracy"]["value"] == pytest.approx(sum(truth) / len(truth))


def test_an_mmmu_output_folder_scores_with_no_copy_as_against_its_copy(tmp_path: Path) -> None:
    # Each output.json record holds its id, type, answer, all_choices and index2ans: MMMU's
    # own row reader makes the item; MMMU's accuracy and its subject breakdown are the copy's.
    out = FIXTURES / "mmmu" / "llava1.5_13b"
    alone = _score(tmp_path, out, "mmmu")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc.get("items") == "file"
    folder, _ = _mmmu_copy(tmp_path)
    copied = json.loads(_score(tmp_path, out, f"mmmu,path={folder}").stdout)
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    for key in ("mmmu_subject", "discipline"):
        assert {g: _values(m) for g, m in doc["breakdown"][key].items()} == {
            g: _values(m) for g, m in copied["breakdown"][key].items()
        }, key


def test_an_mmmu_parsed_answers_file_holds_no_items_and_says_it_needs_the_copy(
    tmp_path: Path,
) -> None:
    done = _score(tmp_path, FIXTURES / "mmmu" / "llava1.5_13b_val.json", "mmmu")
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "holds an answer, not its item" in said and "hf download lmms-lab/MMMU" in said, said


def test_an_import_with_no_copy_stores_the_files_items_as_a_run(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    done = lmmprobe(
        "import", VLMEVALKIT / VANILLA, "--benchmark", "mmbench", "--model", "m", "--db", db,
        "--format", "json", **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc.get("items") == "file" and doc["rows"] == 44, doc
    circular = doc["metrics"]["mmbench_circular"]
    assert circular["value"] == pytest.approx(3 / 14) and circular["n"] == 14


def test_a_vlmevalkit_hallusionbench_table_scores_with_no_copy_as_against_its_copy(
    tmp_path: Path,
) -> None:
    # The ids fixture (written by VLMEvalKit's dump) without its last row, which the copy
    # of test_id_schemes lacks on purpose.
    written = pd.read_excel(IDS_FIXTURES / "Model_HallusionBench.xlsx")
    table = tmp_path / "Model_HallusionBench.xlsx"
    written.iloc[:4].to_excel(table, index=False, engine="openpyxl")
    alone = _score(tmp_path, table, "hallusionbench")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file", doc
    with_copy = _score(tmp_path, table, _hallusion_copy(tmp_path, "hallusionbench"))
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0 and copied["rows"] == 4
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["hallusionbench_qacc"]["value"] is not None


def test_a_hallusionbench_index_without_its_parts_is_named(tmp_path: Path) -> None:
    table = tmp_path / "Model_HallusionBench.tsv"
    table.write_text(
        "index\tcategory\tl2-category\tquestion\tanswer\tprediction\n"
        "VD_ocr_1_1_0_0\tVD\tVD_ocr\tDoes it say STOP?\tYes\tYes\n"
        "7\tVD\tVD_ocr\tDoes it say GO?\tNo\tNo\n"
    )
    done = _score(tmp_path, table, "hallusionbench")
    assert done.returncode != 0
    assert "row 3: index: '7' has not the parts Hallusion_rating reads" in done.stderr


def test_a_vlmevalkit_mme_table_scores_with_no_copy_as_against_its_copy(tmp_path: Path) -> None:
    # Its category and image_path pair an image's two questions (acc+), as MME_rating does.
    table = IDS_FIXTURES / "Model_MME.tsv"
    alone = _score(tmp_path, table, "mme")
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file", doc
    with_copy = _score(tmp_path, table, _hallusion_copy(tmp_path, "mme"))
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["mme_perception"]["value"] == pytest.approx(200.0)


_TEXTVQA_ANSWERS = {
    34602: ("what colour is the sign?", ["Red"] * 10, "red"),
    34603: ("what colour is the car?", ["blue"] * 2 + ["navy"] * 8, "Blue."),
    34604: ("what is written?", ["yellow"] * 10, "stop"),
}


def _textvqa_answers(tmp_path: Path) -> Path:
    """A TextVQA-style answers file: each question with its ten annotators' answers inline."""
    path = tmp_path / "textvqa_answers.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question_id": qid, "question": q, "answers": a, "text": reply}) + "\n"
            for qid, (q, a, reply) in _TEXTVQA_ANSWERS.items()
        )
    )
    return path


def test_a_mapped_answers_file_with_its_annotators_answers_scores_with_no_copy(
    tmp_path: Path,
) -> None:
    answers = _textvqa_answers(tmp_path)
    fields = ("--field", "id=question_id,prediction=text,gold=answers")
    alone = _score(tmp_path, answers, "textvqa", *fields)
    assert alone.returncode == 0, alone.stderr
    doc = json.loads(alone.stdout)
    assert doc["golds"] == "file" and doc.get("items") == "file", doc
    # TextVQA's VQA accuracy over the ten answers, as against a copy holding the same items
    # (not the exact match a file's golds get without a benchmark).
    n = len(_TEXTVQA_ANSWERS)
    rows = {
        "image_id": ["a1", "a2", "a3"], "question_id": list(_TEXTVQA_ANSWERS),
        "question": [q for q, _, _ in _TEXTVQA_ANSWERS.values()],
        "question_tokens": [["what"]] * n, "image": [_img(i) for i in range(n)],
        "image_width": [8] * n, "image_height": [8] * n, "flickr_original_url": ["u"] * n,
        "flickr_300k_url": ["u"] * n, "answers": [a for _, a, _ in _TEXTVQA_ANSWERS.values()],
        "image_classes": [["sign"]] * n, "set_name": ["val"] * n, "ocr_tokens": [["stop"]] * n,
    }  # fmt: skip
    folder = write_hub_snapshot(
        tmp_path / "textvqa", {"validation": Dataset.from_dict(rows, features=Features(TEXTVQA))}
    )
    with_copy = _score(tmp_path, answers, f"textvqa,path={folder}", *fields)
    assert with_copy.returncode == 0, with_copy.stderr
    copied = json.loads(with_copy.stdout)
    assert copied["unjoined"] == 0 and copied["rows"] == n
    assert _values(doc["metrics"]) == _values(copied["metrics"])
    assert doc["metrics"]["vqa_accuracy_evalai"]["value"] == pytest.approx((1 + 0.6 + 0) / 3)


def test_a_mapped_vqav2_file_scores_its_inline_answers(tmp_path: Path) -> None:
    path = tmp_path / "vqav2.json"
    path.write_text(
        json.dumps(
            [
                {
                    "qid": 1,
                    "question": "What is it?",
                    "gold": ["cat"] * 3 + ["dog"] * 7,
                    "p": "cat",
                },
                {"qid": 2, "question": "How many?", "gold": ["2"] * 10, "p": "two"},
            ]
        )
    )
    done = _score(tmp_path, path, "vqav2", "--field", "id=qid,prediction=p,gold=gold")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc.get("items") == "file"
    # VQAv2's accuracy: 3 of 10 annotators said cat (each subset of 9: 1 or 2/3); "two" is 2.
    assert doc["metrics"]["vqa_accuracy"]["value"] == pytest.approx((0.9 + 1.0) / 2)


def test_a_mapped_row_with_one_gold_answer_is_named_not_scored_as_one_annotator(
    tmp_path: Path,
) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(
        json.dumps({"question_id": 1, "answers": ["a"] * 10, "text": "a"}) + "\n"
        + json.dumps({"question_id": 2, "answers": "b", "text": "b"}) + "\n"
    )  # fmt: skip
    done = _score(
        tmp_path, path, "textvqa", "--field", "id=question_id,prediction=text,gold=answers"
    )
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert (
        f"{path}: row 2: gold: 'b' is one answer; textvqa's VQA accuracy reads the annotators'"
        in (said)
    ), said


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(["textvqa", "vqav2", "vizwiz", "okvqa"]),
    sid=st.one_of(st.none(), st.text(max_size=100)),
    gold=st.one_of(
        st.none(), st.text(max_size=50), st.lists(st.text(max_size=50), max_size=12),
        st.just(["x" * 10_000] * 10),
    ),
    question=st.one_of(st.none(), st.integers(), st.text(max_size=300)),
)  # fmt: skip
def test_any_mapped_vqa_row_makes_its_item_or_one_named_error(
    name: str, sid: str | None, gold: Any, question: Any
) -> None:
    from lmmprobe.data.base import DataError
    from lmmprobe.predictions.file_items import item_maker
    from lmmprobe.predictions.imported import ImportedPrediction

    make = item_maker(name, "mapped")
    if make is None:  # a copy lies where a run would read it: nothing to make
        return
    pred = ImportedPrediction(
        row=4, sample_id=sid, prediction="a", gold=gold, fields={"question": question}
    )
    try:
        (item,) = make("a.jsonl", pred)
    except DataError as exc:
        assert str(exc).startswith("a.jsonl: row 4: ")
        return
    assert item.images == [] and item.answer == gold and item.benchmark is not None


def test_a_recorded_auxmatch_reading_decides_mme_headline_where_its_rule_reads_none(
    tmp_path: Path,
) -> None:
    # Issue 36, item 3: an _auxmatch table's `extracted` is VLMEvalKit's reading, its `score`
    # its verdict. MME's rule reads "yes"/"no" in an answer's first four characters: rows 1
    # and 2 it cannot read, and VLMEvalKit's judge did (its rule, YOrN_Extraction, reads
    # Unknown there, so `extracted` came from its judge): their verdicts decide the headline,
    # named as judged, with coverage. Row 3 VLMEvalKit's rule read ("I think no."): a rule's
    # reading, which decides nothing. MME's own scores stay MME's rule's.
    rows = pd.DataFrame(
        {
            "index": [0, 1, 2, 3],
            "category": ["existence"] * 4,
            "image_path": ["a.jpg", "a.jpg", "b.jpg", "b.jpg"],
            "question": ["Is there a dog?", "Is there a cat?", "Is there a car?", "A bus?"],
            "answer": ["Yes", "No", "Yes", "No"],
            "prediction": ["Yes", "Absolutely, one.", "Certainly, a red one.", "I think no."],
            "extracted": ["Yes", "Yes", "Yes", "No"],
        }
    )
    rows["score"] = rows["answer"] == rows["extracted"]
    table = tmp_path / "Model_MME_auxmatch.xlsx"
    rows.to_excel(table, index=False)
    done = _score(tmp_path, table, "mme", "--audit")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    metrics = doc["metrics"]
    assert doc["judged_headline"] == {
        "judges": ["vlmevalkit (recorded)"],
        "answers": 2,
        "correct": 1,
        "metrics": ["accuracy", "balanced_accuracy"],
    }
    assert metrics["accuracy"]["value"] == pytest.approx(2 / 4)
    assert metrics["accuracy_rules_only"]["value"] == pytest.approx(1 / 4)
    assert metrics["judge_coverage"]["value"] == pytest.approx(1.0)
    # MME's perception score: its rule's reading alone (acc 1/4 + acc+ 0/2, x 100).
    assert metrics["mme_perception"]["value"] == pytest.approx(25.0)
    # The audit pairs VLMEvalKit's score on every row against MME's official reading: it
    # counted row 2 right by its judge and row 3 by its rule, MME's rule read neither.
    audit = doc["audit"]
    assert (audit["n"], audit["accuracy_b"]) == (4, 3 / 4)
    assert {i["sample_id"]: i["cause"] for i in audit["items"]} == {
        "2": "judge",
        "3": "extraction",
    }


_CELL = st.one_of(st.none(), st.text(max_size=30), st.sampled_from(["None", "NA", "", "nan"]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.one_of(st.sampled_from(["0", "12", "-1", "x"]), st.text(max_size=8)),
    answer=st.one_of(
        st.sampled_from(["['CENTRE']", "['a', 'b']", "[1]", "[]", "__import__('os')", "[[[["]),
        st.text(max_size=40),
        st.just("[" * 5000),
    ),
    category=_CELL,
)
def test_any_ocrbench_row_makes_its_item_or_one_named_error(
    index: str, answer: str, category: str | None
) -> None:
    from lmmprobe.data.base import DataError
    from lmmprobe.predictions.file_items import item_maker
    from lmmprobe.predictions.imported import ImportedPrediction

    make = item_maker("ocrbench", "vlmevalkit")
    if make is None:  # a copy lies where a run would read it: nothing to make
        return
    fields = {"question": "what is written?", "category": category}
    pred = ImportedPrediction(row=2, sample_id=index, prediction="x", gold=answer, fields=fields)
    try:
        (item,) = make("t.xlsx", pred)
    except DataError as exc:
        assert str(exc).startswith("t.xlsx: row 2: ")
        return
    assert item.id == f"ocrbench/test-{int(index)}" and item.answer


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cells=st.lists(_CELL, min_size=0, max_size=6), gold=_CELL)
def test_any_choice_row_makes_its_item_or_one_named_error(
    cells: list[str | None], gold: str | None
) -> None:
    from lmmprobe.data.base import DataError
    from lmmprobe.predictions.file_items import item_maker
    from lmmprobe.predictions.imported import ImportedPrediction

    make = item_maker("mmstar", "vlmevalkit")
    if make is None:
        return
    fields: dict[str, Any] = {"question": "Which?"} | dict(zip("ABCDEF", cells, strict=False))
    pred = ImportedPrediction(row=2, sample_id="5", prediction="A", gold=gold, fields=fields)
    try:
        (item,) = make("t.xlsx", pred)
    except DataError as exc:
        assert str(exc).startswith("t.xlsx: row 2: ")
        return
    assert item.choices is not None and 2 <= len(item.choices) <= len(cells)
    assert isinstance(item.answer, int) and item.answer < len(item.choices)


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("extracted", "Perhaps" * 50, "extracted: 'PerhapsPerhaps"),
        ("score", "maybe", "score: expected a verdict"),
        ("score", 0.5, "score: expected true or false, got '0.5'"),
    ],
)
def test_an_auxmatch_cell_that_is_no_reading_or_verdict_is_named(
    column: str, value: object, said: str, tmp_path: Path
) -> None:
    rows = pd.DataFrame(
        {
            "index": [0, 1],
            "category": ["existence"] * 2,
            "image_path": ["a.jpg"] * 2,
            "question": ["Is there a dog?", "Is there a cat?"],
            "answer": ["Yes", "No"],
            "prediction": ["Yes", "No"],
            "extracted": ["Yes", "No"],
            "score": [True, True],
        }
    ).astype(object)
    rows.loc[1, column] = value
    table = tmp_path / "Model_MME_auxmatch.tsv"
    rows.to_csv(table, sep="\t", index=False)
    done = _score(tmp_path, table, "mme")
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert f"{table}:row 3: {said}" in message, message
