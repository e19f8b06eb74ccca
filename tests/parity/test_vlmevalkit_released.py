"""``score FILE --benchmark B --as-published`` on files VLMEvalKit released, against its score files.

``data/vlmevalkit_released/`` holds a VILA-13B work folder VLMEvalKit wrote in July 2024 and
that was committed to open-compass/VLMEvalKit (pull request #320, commit c03bc048; its README
names every source): whole prediction tables with their recorded verdicts, and beside each the
score file VLMEvalKit wrote from them. Nothing here was regenerated: the figures are the ones
VLMEvalKit itself wrote for that run. Each figure ``--as-published`` gives must be the score
file's, the same float bit for bit (its printed digits), read through the console script with
no local copy of any benchmark.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe
from tests.predictions.test_file_items import _offline

from lmmprobe.store import Store

HERE = Path(__file__).parent / "data" / "vlmevalkit_released"

# (table, --benchmark or None, VLMEvalKit's score file beside it)
CASES = {
    "mme": ("vila_13b_MME_auxmatch.xlsx", "mme", "vila_13b_MME_score.csv"),
    "pope": ("vila_13b_POPE_auxmatch.xlsx", "pope", "vila_13b_POPE_score.csv"),
    "hallusionbench": (
        "vila_13b_HallusionBench_auxmatch.xlsx",
        "hallusionbench",
        "vila_13b_HallusionBench_score.csv",
    ),
    "scienceqa": (
        "vila_13b_ScienceQA_TEST_openai_result.xlsx",
        "scienceqa-img",
        "vila_13b_ScienceQA_TEST_acc.csv",
    ),
    # Without --benchmark: the file tells its benchmark (with it:
    # test_an_ocrbench_table_scores_by_itself_under_its_benchmark).
    "ocrbench": ("vila_13b_OCRBench.xlsx", None, "vila_13b_OCRBench_score.json"),
}


def _score_file(name: str) -> tuple[dict[tuple[str, str], Any], list[str]]:
    """VLMEvalKit's score file as (row, column) → figure, and each figure as the file prints it."""
    path = HERE / name
    if path.suffix == ".json":
        doc = json.loads(path.read_text(encoding="utf-8"))
        return {(k, "score"): v for k, v in doc.items()}, [str(v) for v in doc.values()]
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    header, body = rows[0], rows[1:]
    texts = [cell for row in body for cell in (row if len(body) == 1 else row[1:])]
    if len(body) == 1 and header[0] != "split":  # MME_rating: one row of named figures
        return {(h, "score"): float(v) for h, v in zip(header, body[0], strict=True)}, texts
    return {
        (row[0], h): float(v) for row in body for h, v in zip(header[1:], row[1:], strict=True)
    }, texts


def _tables(published: dict[str, Any]) -> dict[tuple[str, str], Any]:
    out = {}
    for table in published["tables"]:
        for row in table["rows"]:
            (_, name), *rest = row.items()
            out.update({(str(name), c): v for c, v in rest})
    return out


def _score(tmp_path: Path, table: str, benchmark: str | None) -> dict[str, Any]:
    args = ["--benchmark", benchmark] if benchmark else []
    done = lmmprobe(
        "score", HERE / table, *args, "--as-published", "--format", "json", **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


@pytest.mark.parametrize("case", sorted(CASES))
def test_as_published_is_the_score_file_written_beside_the_table(case: str, tmp_path: Path) -> None:
    table, benchmark, score_file = CASES[case]
    want, _ = _score_file(score_file)
    doc = _score(tmp_path, table, benchmark)
    assert "VLMEvalKit" in doc["as_published"]["definition"]
    got = _tables(doc["as_published"])
    if not set(want) <= set(got):  # a table laid out the other way round
        got = {(c, r): v for (r, c), v in got.items()}
    assert {k: got.get(k) for k in want} == want
    # The same types as the file: OCRBench's counts stay ints, the ratings floats.
    assert all(type(got[k]) is type(v) for k, v in want.items())


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_printed_table_carries_every_digit_of_the_score_file(case: str, tmp_path: Path) -> None:
    table, benchmark, score_file = CASES[case]
    _, texts = _score_file(score_file)
    args = ["--benchmark", benchmark] if benchmark else []
    done = lmmprobe(
        "score", HERE / table, *args, "--as-published", columns=200, **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    missing = [t for t in texts if t not in done.stdout]
    assert not missing, done.stdout


def test_the_strict_figures_stand_on_the_same_items(tmp_path: Path) -> None:
    """lmmprobe's own reading, with the official definitions, on the file's own items.

    MME and POPE: lmmprobe's rules read every answer as VLMEvalKit's recorded ``extracted``
    did, so the figures agree (to the last bits: the sums run in another order).
    HallusionBench: aAcc and qAcc agree, fAcc is 100 of 346 figures where VLMEvalKit's
    ``Hallusion_rating`` has 99. Two answers are read otherwise, one each way: VS_ocr_2_3_2_1
    ("No, the value of the square root of 2 is an irrational number, which means it cannot be
    ex...": VLMEvalKit's ``YOrN_Extraction`` reads "No", right; lmmprobe's reading, "unclear",
    wrong) and VS_ocr_1_11_1_1 ("The text in the figure is not made in Canada...": VLMEvalKit
    "Unknown", wrong; lmmprobe "no", right), which completes one more figure.
    """
    mme = _score(tmp_path, *CASES["mme"][:2])
    assert mme["rows"] == 2374 and mme["golds"] == "file"
    assert mme["metrics"]["mme_perception"]["value"] == pytest.approx(1436.8252300920367, abs=1e-9)
    assert mme["metrics"]["mme_cognition"]["value"] == pytest.approx(288.92857142857144, abs=1e-9)
    pope = _score(tmp_path, *CASES["pope"][:2])
    # POPE_rating counts a question once per split it belongs to: 5,127 rows, 9,000 items.
    assert pope["rows"] == 9000
    for name, figure in [
        ("pope_f1", 84.95773247140727),
        ("pope_accuracy", 86.55555555555556),
        ("pope_precision", 96.41647855530474),
        ("pope_recall", 75.93333333333334),
    ]:
        assert pope["metrics"][name]["value"] * 100 == pytest.approx(figure, abs=1e-9)
    hb = _score(tmp_path, *CASES["hallusionbench"][:2])
    metrics = {k: (v["value"], v["n"]) for k, v in hb["metrics"].items()}
    assert metrics["hallusionbench_aacc"] == (pytest.approx(0.580441640378549), 951)
    assert metrics["hallusionbench_qacc"] == (pytest.approx(128 / 455), 455)
    assert metrics["hallusionbench_facc"] == (pytest.approx(100 / 346), 346)


def test_the_audit_pairs_every_recorded_hit_of_a_choice_table(tmp_path: Path) -> None:
    """ScienceQA: VLMEvalKit's ``hit`` on all 2,017 rows against lmmprobe's reading: no gap."""
    table, benchmark, _ = CASES["scienceqa"]
    done = lmmprobe(
        "score", HERE / table, "--benchmark", benchmark, "--audit", **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "lmmprobe 79.08 vs vlmevalkit 79.08 on 2017 paired items: gap +0.00 points" in out


@pytest.mark.parametrize(
    ("case", "line", "parted"),
    [
        # The two answers the strict-figure test names, one each way.
        ("hallusionbench", "lmmprobe 58.04 vs vlmevalkit 58.04 on 951 paired items",
         ("VS_ocr_1_11_1_1", "VS_ocr_2_3_2_1")),
        ("mme", "lmmprobe 74.64 vs vlmevalkit 74.64 on 2374 paired items", ()),
        # A row per question, an item per split it lists: 9,000 pairs.
        ("pope", "lmmprobe 86.56 vs vlmevalkit 86.56 on 9000 paired items", ()),
    ],
)  # fmt: skip
def test_the_audit_pairs_the_recorded_yes_no_verdicts(
    case: str, line: str, parted: tuple[str, ...], tmp_path: Path
) -> None:
    """Each ``_auxmatch`` row's ``score`` is VLMEvalKit's verdict, paired with lmmprobe's."""
    table, benchmark, _ = CASES[case]
    assert benchmark is not None
    done = lmmprobe(
        "score", HERE / table, "--benchmark", benchmark, "--audit", **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert "no item has a verdict on both sides" not in out
    assert f"{line}: gap +0.00 points" in out, out
    for item in parted:  # each an answer extraction (each side read another answer)
        assert f"{item} (row" in out
    assert ("answer extraction (each side read another answer)" in out) == bool(parted)


def test_an_ocrbench_table_scores_by_itself_under_its_benchmark(tmp_path: Path) -> None:
    """Its 1,000 rows hold every item (question, category, answers): no copy is asked for.

    lmmprobe's own OCRBench score reads the same answers as ``OCRBench.evaluate``: 458.
    """
    want, _ = _score_file("vila_13b_OCRBench_score.json")
    doc = _score(tmp_path, "vila_13b_OCRBench.xlsx", "ocrbench")
    assert (doc["rows"], doc["items"]) == (1000, "file")
    got = _tables(doc["as_published"])
    assert {k: got.get(k) for k in want} == want
    assert doc["metrics"]["ocrbench_score"]["value"] == want[("Final Score", "score")] == 458


@pytest.mark.parametrize(
    ("table", "benchmark", "score_file", "parted"),
    [
        # 1434: the model echoed the four options before "Answer: D. 02-01-C5-007";
        # VLMEvalKit's can_infer of July 2024 read no single letter (Z), lmmprobe reads D.
        ("vila_13b_MMStar_openai_result.xlsx", "mmstar", "vila_13b_MMStar_acc.csv",
         {"1434": "extraction"}),
        # 731: the gold is the word "Uphill" (option A's text), never equal to a letter in
        # VLMEvalKit; lmmprobe reads the model's "A." as that option, right.
        ("vila_13b_RealWorldQA_openai_result.xlsx", "realworldqa", "vila_13b_RealWorldQA_acc.csv",
         {"731": "normalization"}),
        ("vila_13b_SEEDBench_IMG_openai_result.xlsx", "seedbench",
         "vila_13b_SEEDBench_IMG_acc.csv", {}),
    ],
)  # fmt: skip
def test_a_table_with_an_option_pandas_read_as_missing_scores(
    table: str, benchmark: str, score_file: str, parted: dict[str, str], tmp_path: Path
) -> None:
    """Rows with an option cell VLMEvalKit wrote empty (pandas read "None" as missing) score.

    MMStar 268, 273, 391 (its SEEDBench_IMG items) and RealWorldQA 105, 633 have an empty
    option cell before a filled one or under the gold letter; VLMEvalKit showed and matched the
    filled cells only. Every row is an item, the figure as published is the acc file's, and
    lmmprobe's strict figure stands on the same items, parting from it only where named.
    """
    want, _ = _score_file(score_file)
    done = lmmprobe(
        "score", HERE / table, "--benchmark", benchmark, "--as-published", "--audit",
        "--format", "json", **_offline(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    got = _tables(doc["as_published"])
    if not set(want) <= set(got):
        got = {(c, r): v for (r, c), v in got.items()}
    assert {k: got.get(k) for k in want} == want
    audit = doc["audit"]
    assert doc["rows"] == audit["n"] == audit["samples"]
    assert audit["accuracy_b"] == want[("none", "Overall")]
    assert {i["sample_id"]: i["cause"] for i in audit["items"]} == parted
    assert audit["accuracy_a"] == doc["metrics"]["accuracy"]["value"]


def test_without_a_benchmark_an_auxmatch_table_tells_its_own(tmp_path: Path) -> None:
    """POPE's headline is POPE's reading (86.6), not an exact match of each whole answer (3.9)."""
    done = lmmprobe(
        "score", HERE / "vila_13b_POPE_auxmatch.xlsx", "--format", "json", **_offline(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["rows"] == 9000 and doc["items"] == "file"
    assert doc["metrics"]["accuracy"]["value"] * 100 == pytest.approx(86.55555555555556)
    assert doc["metrics"]["pope_f1"]["value"] * 100 == pytest.approx(84.95773247140727)
    assert any(n.startswith("benchmark pope: told by the file's name") for n in doc["notes"])
    assert _tables(doc["as_published"])[("Overall", "Overall")] == 84.95773247140727


def test_a_prediction_table_finds_its_judged_table_and_score_file_beside_it(
    tmp_path: Path,
) -> None:
    """``score X_MME.xlsx``, ``score X_MME_score.csv``, ``score FOLDER --benchmark mme``: one table.

    Each reads ``vila_13b_MME_auxmatch.xlsx`` (the predictions with VLMEvalKit's verdicts),
    tells the benchmark, and gives the score file's figures as published.
    """
    want, _ = _score_file("vila_13b_MME_score.csv")
    for given, more in (
        ("vila_13b_MME.xlsx", ()),
        ("vila_13b_MME_score.csv", ()),
        (".", ("--benchmark", "mme")),
    ):
        done = lmmprobe(
            "score", HERE / given, *more, "--as-published", "--format", "json",
            **_offline(tmp_path),
        )  # fmt: skip
        assert done.returncode == 0, (given, done.stderr)
        doc = json.loads(done.stdout)
        assert Path(doc["origin"]["path"]).name == "vila_13b_MME_auxmatch.xlsx", given
        assert doc["notes"][0].startswith("read vila_13b_MME_auxmatch.xlsx: "), given
        got = _tables(doc["as_published"])
        assert {k: got.get(k) for k in want} == want, given


def test_a_work_folder_of_several_benchmarks_asks_which(tmp_path: Path) -> None:
    done = lmmprobe("score", HERE, **_offline(tmp_path))
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert f"{HERE}: a VLMEvalKit work folder with tables of" in said
    assert "hallusionbench, mme, mmstar, ocrbench, pope, realworldqa" in said
    assert "say which with --benchmark" in said


def test_import_takes_the_prediction_table_and_stores_its_judged_table(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    done = lmmprobe("import", HERE / "vila_13b_MME.xlsx", "--db", db, **_offline(tmp_path))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "note: read vila_13b_MME_auxmatch.xlsx" in said
    assert "note: benchmark mme: told by the file's name" in said
    with Store(db) as store:
        (run,) = store.list_runs()
        manifest = store.get_run(run["id"])["manifest"]
    assert Path(manifest["origin"]["path"]).name == "vila_13b_MME_auxmatch.xlsx"
    assert manifest["origin"]["rows"] == 2374
