"""Every id scheme joins: VLMEvalKit's ``index`` and lmms-eval's ``doc_id`` find their items.

The VLMEvalKit tables in ``fixtures/vlmevalkit/ids`` were written by VLMEvalKit's own ``dump``
(``generate.py`` there says how); the local copies are the same items in the hub layouts
lmmprobe loads. Each table is scored through the console against its copy, and the rows'
joined items are read back from an import's stored rows. A row no item answers is named, one
line each (file, row, id), never dropped unsaid. Issue 36, item 2.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Value
from datasets import Image as HFImage
from datasets import Sequence as Seq
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import Workbook
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.predictions.id_schemes import (
    SCHEMES,
    IdScheme,
    MissingField,
    row_values,
    scheme_for,
)

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

IDS = Path(__file__).parent / "fixtures" / "vlmevalkit" / "ids"
COPIES: dict[str, list[dict[str, Any]]] = json.loads((IDS / "copies.json").read_text("utf-8"))
EXPECTED: dict[str, dict[str, list[str]]] = json.loads((IDS / "expected.json").read_text("utf-8"))[
    "rows"
]
TABLES = {
    "hallusionbench": "Model_HallusionBench.xlsx",
    "mme": "Model_MME.tsv",
    "pope": "Model_POPE.tsv",
    "mmvet": "Model_MMVet.tsv",
    "scienceqa-img": "Model_ScienceQA_TEST.tsv",
    "ai2d": "Model_AI2D_TEST.tsv",
}
IMAGE = HFImage()


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((10 * i % 255, 80, 160)), "path": f"{i}.png"}


def _copy(tmp_path: Path, name: str) -> str:
    """The benchmark's local copy holding the fixture's items (hub layout), as a data spec."""
    rows = [dict(r) for r in COPIES[name]]
    config = None
    split = {"hallusionbench": "image"}.get(name, "test")
    if name == "scienceqa-img":
        # A row without an image comes first: not an item (ScienceQA-IMG asks image rows).
        rows.insert(0, {"question": "No image?", "choices": ["a", "b"], "answer": 0, "hint": ""})
        config = "ScienceQA-IMG"
    columns = {k: [r.get(k) for r in rows] for k in rows[0]}
    columns["image"] = [
        None if r["question"] == "No image?" else _img(i) for i, r in enumerate(rows)
    ]
    kinds = {
        "choices": Seq(Value("string")),
        "options": Seq(Value("string")),
        "capability": Seq(Value("string")),
        "answer": Value("int8") if name == "scienceqa-img" else Value("string"),
        "image": IMAGE,
    }
    feats = Features({k: kinds.get(k, Value("string")) for k in columns})
    folder = write_hub_snapshot(
        tmp_path / name, {split: Dataset.from_dict(columns, features=feats)}, config=config
    )
    return f"{name},path={folder}"


def _import(
    tmp_path: Path, table: Path, data: str, *extra: str
) -> tuple[Any, dict[int, list[str]]]:
    """Import `table` against `data`; the console's result and each file row's joined items."""
    store = tmp_path / "store.db"
    done = lmmprobe(
        "import", table, "--benchmark", data, "--model", "m", "--db", store, *extra,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    joined: dict[int, list[str]] = {}
    if store.exists():
        with sqlite3.connect(store) as db:
            for sample_id, meta in db.execute("SELECT sample_id, metadata FROM score_metadata"):
                row = int(json.loads(meta)["imported_row"])
                joined.setdefault(row, []).append(sample_id)
    return done, {k: sorted(v) for k, v in joined.items()}


def _by_index(table: Path) -> dict[int, str]:
    """The table's ``index`` by row number (the header is row 1), as the reader numbers rows."""
    from lmmprobe.predictions._stream import iter_table

    return {n: str(row["index"]) for n, row in iter_table(table)}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_vlmevalkit_table_joins_its_items_by_the_benchmarks_scheme(
    tmp_path: Path, name: str
) -> None:
    table = IDS / TABLES[name]
    done, joined = _import(tmp_path, table, _copy(tmp_path, name))
    assert done.returncode == 0, done.stderr
    index = _by_index(table)
    got = {index[row]: ids for row, ids in joined.items()}
    want = {k: v for k, v in EXPECTED[name].items() if v}
    assert got == want
    # Every row that joins nothing is named in one line: file, row, its id.
    unjoined = [k for k, v in EXPECTED[name].items() if not v]
    said = " ".join((done.stdout + done.stderr).split())
    for row, idx in index.items():
        if idx in unjoined:
            assert f"{table}: row {row}: id: {idx!r}" in said, said


def test_hallusionbench_names_the_row_whose_item_the_copy_lacks(tmp_path: Path) -> None:
    table = IDS / TABLES["hallusionbench"]
    done, _ = _import(tmp_path, table, _copy(tmp_path, "hallusionbench"))
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert f"{table}: row 6: id: 'VS_chart_1_9_0_0' (as 'VS_chart_9_0_0':" in said, said


def test_ai2d_rows_asking_one_question_with_one_set_of_options_are_named_not_guessed(
    tmp_path: Path,
) -> None:
    table = IDS / TABLES["ai2d"]
    done, joined = _import(tmp_path, table, _copy(tmp_path, "ai2d"))
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert f"{table}: row 2: id: '1203': its content" in said
    assert "names more than one sample" in said
    # AI2D_TEST's index 1203 is no position of the copy (3 items): never joined as one.
    assert all("ai2d/1203" not in ids for ids in joined.values())


def test_a_mme_table_without_image_path_names_each_row(tmp_path: Path) -> None:
    table = tmp_path / "Model_MME.tsv"
    lines = (IDS / TABLES["mme"]).read_text("utf-8").splitlines()
    table.write_text(
        "\n".join(line.replace('"image_path"\t', '"where"\t') for line in lines) + "\n", "utf-8"
    )
    done, _ = _import(tmp_path, table, _copy(tmp_path, "mme"))
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "not joined: the row has no image_path" in said, said


# ------------------------------------------------------------------------------ lmms-eval


def _lmms_log(tmp_path: Path, task: str, records: list[dict[str, Any]]) -> Path:
    """A ``--log_samples`` file as lmms-eval's ``save_results_samples`` writes it (no doc)."""
    path = tmp_path / f"20261130_000000_samples_{task}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_lmms_eval_doc_id_is_the_items_position_in_the_split(tmp_path: Path) -> None:
    # MME's items are CATEGORY/FILE/POSITION in lmmprobe; the log holds only the position and
    # the metric's question_id, which names the image, not the item.
    data = _copy(tmp_path, "mme")
    records = [
        {"doc_id": n, "target": COPIES["mme"][n]["answer"], "resps": [["Yes"]],
         "filtered_resps": ["Yes"], "input": "q",
         "mme_perception_score": {"question_id": COPIES["mme"][n]["question_id"],
                                  "category": COPIES["mme"][n]["category"], "score": 1.0}}
        for n in (3, 0, 2)
    ]  # fmt: skip
    done, joined = _import(tmp_path, _lmms_log(tmp_path, "mme", records), data)
    assert done.returncode == 0, done.stderr
    assert joined == {
        1: ["mme/artwork/10002.jpg/3"],
        2: ["mme/code_reasoning/0020.png/0"],
        3: ["mme/artwork/10002.jpg/2"],
    }


def test_an_lmms_eval_position_past_the_split_is_named(tmp_path: Path) -> None:
    data = _copy(tmp_path, "mmvet")
    records = [
        {"doc_id": n, "target": "x", "resps": [["x"]], "filtered_resps": ["x"]} for n in (0, 7)
    ]
    done, joined = _import(tmp_path, _lmms_log(tmp_path, "mmvet", records), data)
    assert done.returncode == 0, done.stderr
    assert joined == {1: ["mmvet/v1_0"]}
    said = " ".join((done.stdout + done.stderr).split())
    assert ": row 2: id: '7': position '7'" in said, said


def test_lmms_eval_positions_against_a_copy_of_another_split_are_refused(tmp_path: Path) -> None:
    data = _copy(tmp_path, "scienceqa-img") + ",split=validation"
    records = [{"doc_id": 0, "target": "x", "resps": [["x"]], "filtered_resps": ["x"]}]
    done, _ = _import(tmp_path, _lmms_log(tmp_path, "scienceqa_img", records), data)
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "its ids are positions in the 'test' split" in said, said
    assert "score it against scienceqa-img,split=test" in said


# ------------------------------------------------------------------------------ the table


def test_every_benchmark_by_name_has_its_ids_stated_in_the_docs() -> None:
    from lmmprobe.data.benchmarks import BENCHMARKS

    docs = (Path(__file__).parents[2] / "docs" / "benchmarks.md").read_text("utf-8")
    section = docs.split("## Ids of other tools' files", 1)[1]
    for name in ("ai2d", "chartqa", "docvqa", "gqa", "hallusionbench", "llava-wild",
                 "mathvista", "mmbench", "mme", "mmmu", "mmstar", "mmvet", "ocrbench",
                 "okvqa", "pope", "realworldqa", "scienceqa-img", "seedbench", "textvqa",
                 "vizwiz", "vqav2"):  # fmt: skip
        assert name in BENCHMARKS
        assert f"| {name} |" in section, name
        # SEED-Bench's doc_id counts video questions lmmprobe does not ask: its id joins.
        assert (("lmms-eval", name) in SCHEMES) == (name != "seedbench"), name


def test_a_scheme_reads_index_parts_and_each_element() -> None:
    hb = scheme_for("vlmevalkit", "hallusionbench")
    assert hb is not None
    fields = {"index": "VD_ocr_1_2_3_4", "l2-category": "VD_ocr"}
    assert list(row_values(hb, "VD_ocr_1_2_3_4", fields)) == ["VD_ocr_2_3_4"]
    pope = scheme_for("vlmevalkit", "pope")
    assert isinstance(pope, IdScheme)
    row = {"category": "random, popular", "image_path": "x/COCO_1.jpg", "question": "Is  it?"}
    assert list(row_values(pope, "0", row)) == ["random/COCO_1/is it?", "popular/COCO_1/is it?"]
    assert scheme_for("vlmevalkit", "mmbench") is None  # its index is MMBench's own


# ------------------------------------------------------------------------------ .xlsx mapped


def test_the_mapped_reader_reads_an_xlsx_through_the_same_bounds(tmp_path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["qid", "answer", "gt"])
    sheet.append(["q1", "cat", "cat"])
    sheet.append(["q2", "dog", "cow"])
    path = tmp_path / "answers.xlsx"
    book.save(path)
    done = lmmprobe(
        "score", path, "--reader", "mapped", "--field", "id=qid,prediction=answer,gold=gt",
        "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 2
    # A zip bomb is refused by the same check VLMEvalKit's tables get (data.files).
    import zipfile

    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/worksheets/sheet1.xml", "<a>" + " " * (40 << 20) + "</a>")
    done = lmmprobe("score", bomb, "--reader", "mapped", "--field", "id=qid,gold=gt")
    assert done.returncode != 0
    assert "zip bomb" in done.stderr, done.stderr


# ------------------------------------------------------------------------------ fuzz

_CELL = st.one_of(
    st.none(),
    st.floats(allow_nan=True),
    st.integers(),
    st.text(max_size=60),
    st.text(alphabet="_,/. \t\\", max_size=60),
)


@settings(max_examples=300, deadline=None)
@given(
    row=st.dictionaries(
        st.sampled_from(["index", "l2-category", "category", "image_path", "question", "answer",
                         "hint", "A", "B", "C", "doc_id"]),
        _CELL,
    ),
    row_id=st.one_of(st.none(), st.text(max_size=30)),
)  # fmt: skip
def test_any_row_gives_values_or_names_the_missing_field(
    row: dict[str, Any], row_id: str | None
) -> None:
    for scheme in SCHEMES.values():
        try:
            values = list(row_values(scheme, row_id, row))
        except MissingField as exc:
            assert exc.field
        else:
            assert all(isinstance(v, str) for v in values)


def test_a_long_adversarial_index_is_read_in_linear_time() -> None:
    hb = scheme_for("vlmevalkit", "hallusionbench")
    assert hb is not None
    index = "_" * 2_000_000
    (value,) = row_values(hb, index, {"index": index, "l2-category": "VD_x"})
    assert value == "VD_x___"


def test_a_gold_the_file_and_the_copy_disagree_on_is_named_with_both(tmp_path: Path) -> None:
    table = IDS / TABLES["hallusionbench"]
    same = lmmprobe(
        "score", table, "--benchmark", _copy(tmp_path / "same", "hallusionbench"),
        "--format", "json", HF_HUB_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert same.returncode == 0, same.stderr
    assert not [n for n in json.loads(same.stdout)["notes"] if "another gold" in n]
    # The copy's item VS_chart_2_0_1 answers no where the table's gold is Yes.
    COPIES["hallusionbench"][2]["gt_answer"] = "0"
    try:
        data = _copy(tmp_path / "edited", "hallusionbench")
    finally:
        COPIES["hallusionbench"][2]["gt_answer"] = "1"
    done = lmmprobe(
        "score", table, "--benchmark", data, "--format", "json", HF_HUB_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = [n for n in json.loads(done.stdout)["notes"] if "another gold" in n]
    assert len(notes) == 1 and "VS_chart_2_0_1 (Yes there, no here)" in notes[0], notes
