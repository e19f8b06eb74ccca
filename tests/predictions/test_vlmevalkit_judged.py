"""VLMEvalKit's judged result tables: its log read back as its readings, scored as its own.

The tables under ``fixtures/vlmevalkit/`` were written by VLMEvalKit's own ``mcq_circular_eval``
and ``mcq_vanilla_eval`` (open-compass/VLMEvalKit @ e8e78f0) with a scripted judge, a seeded
random option and exact matching, on a small MMBench-shaped set; ``expected.json`` holds what
its readers returned for each item and its ``report_acc`` figure (see ``generate.py`` there for
the command that made them).
"""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from datasets import Dataset, Features, Image, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import (  # noqa: F401 (a fixture)
    own_datasets_cache,
    tiny_png,
    write_hub_snapshot,
)

from lmmprobe.predictions.imported import READERS, ImportedPrediction, ReadOptions
from lmmprobe.predictions.readers._vlmevalkit_log import (
    EXACT_MATCHING_LOG,
    circular_log,
    vanilla_reading,
)

HERE = Path(__file__).parent / "fixtures" / "vlmevalkit"
EXPECTED: dict[str, Any] = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
TABLES: dict[str, Any] = EXPECTED["tables"]
CIRCULAR = "Model_MMBench_DEV_EN_openai_result.tsv"
VANILLA = "Model_MMBench_DEV_EN_openai_vanilla_all_result.xlsx"
EXACT_VANILLA = "Model_MMBench_DEV_EN_exact_matching_vanilla_all_result.xlsx"
EXACT_CIRCULAR = "Model_MMBench_DEV_EN_exact_matching_result.tsv"
ROWS: list[dict[str, Any]] = json.loads((HERE / "mmbench_rows.json").read_text(encoding="utf-8"))
GROUP = 1_000_000


def _read(path: Path) -> list[ImportedPrediction]:
    return list(READERS.get("vlmevalkit").read(path, ReadOptions()))


def _compare(name: str) -> tuple[Counter[str], list[str]]:
    """Each stated reading against what VLMEvalKit's readers returned for that item."""
    read = TABLES[name]["read"]
    seen: Counter[str] = Counter()
    differ = []
    for p in _read(HERE / name):
        if p.tool_decided_by is None:
            seen["not stated"] += 1
            continue
        truth = read[p.sample_id]
        same = truth["by"] == p.tool_decided_by and p.tool_extraction in (None, truth["opt"])
        seen["equal" if same else "differ"] += 1
        if not same:
            differ.append(f"{p.sample_id}: {p.tool_decided_by} {p.tool_extraction} vs {truth}")
    return seen, differ


def test_a_vanilla_log_gives_every_rows_reading() -> None:
    seen, differ = _compare(VANILLA)
    # 44/44 readings equal: 31 by its rules, 7 by its judge, 6 random options.
    assert seen == Counter(equal=44) and not differ
    by = Counter(p.tool_decided_by for p in _read(HERE / VANILLA))
    assert by == Counter(rule=31, judge=7, random=6)
    exact, differ = _compare(EXACT_VANILLA)
    assert exact == Counter(equal=44) and not differ  # 31 rule readings, 13 unread (Z)


def test_a_circular_log_gives_the_copies_it_speaks_of() -> None:
    seen, differ = _compare(CIRCULAR)
    # The group logs speak of 24 of the 44 copies; 23 readings equal. The one that differs
    # is a random option that hit the gold: VLMEvalKit's success line keeps no match log, so
    # it reads as the judge's (documented).
    assert seen == Counter({"equal": 23, "differ": 1, "not stated": 20})
    (only,) = differ
    assert "judge" in only and "'by': 'random'" in only
    # Exact matching's group log does not say which copy went unread: no copy has a reading.
    exact, differ = _compare(EXACT_CIRCULAR)
    assert exact == Counter({"equal": 12, "not stated": 32}) and not differ
    for p in _read(HERE / EXACT_CIRCULAR):
        if p.fields["group_log"] == EXACT_MATCHING_LOG:
            assert p.tool_decided_by is None and p.tool_verdict is None


def test_the_prediction_table_beside_a_circular_result_gives_every_copy() -> None:
    preds = _read(HERE / CIRCULAR)
    assert len(preds) == len(ROWS)
    origin = READERS.get("vlmevalkit").origin(HERE / CIRCULAR, ReadOptions())
    assert origin.detail["predictions"] == "Model_MMBench_DEV_EN.xlsx"
    hits = TABLES[CIRCULAR]["hit"]
    for p in preds:
        assert p.fields["group_hit"] == hits[str(int(p.sample_id) % GROUP)]


def test_without_the_prediction_table_the_first_rows_carry_the_groups_hit(
    tmp_path: Path,
) -> None:
    table = shutil.copy(HERE / CIRCULAR, tmp_path / CIRCULAR)
    preds = _read(Path(table))
    assert [p.tool_verdict for p in preds] == [float(h) for h in TABLES[CIRCULAR]["hit"].values()]
    read = TABLES[CIRCULAR]["read"]
    for p in preds:
        if p.tool_decided_by in ("rule", "judge"):
            assert p.tool_extraction == read[p.sample_id]["opt"]


# --------------------------------------------------------------------------- scored


def _bench(tmp_path: Path) -> str:
    columns: dict[str, list[Any]] = {
        "index": [str(r["index"]) for r in ROWS],
        "question": [r["question"] for r in ROWS],
        "hint": ["nan"] * len(ROWS),
        "answer": [r["answer"] for r in ROWS],
        **{k: [r[k] for r in ROWS] for k in "ABCD"},
        "category": [r["category"] for r in ROWS],
        "image": [{"bytes": tiny_png((5 * i % 255, 80, 160)), "path": f"{i}.png"}
                  for i in range(len(ROWS))],
        "source": ["s"] * len(ROWS),
        "L2-category": [r["l2-category"] for r in ROWS],
        "comment": [None] * len(ROWS),
        "split": ["dev"] * len(ROWS),
    }  # fmt: skip
    feats = Features({k: Value("string") for k in columns if k != "image"} | {"image": Image()})
    folder = write_hub_snapshot(
        tmp_path / "mmb", {"dev": Dataset.from_dict(columns, features=feats)}, config="en"
    )
    return f"mmbench,path={folder}"


def _score(tmp_path: Path, table: Path, *more: str) -> dict[str, Any]:
    done = lmmprobe(
        "score", table, "--benchmark", _bench(tmp_path), "--format", "json", *more,
        HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cli-datasets-cache"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def _groups() -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for r in ROWS:
        out.setdefault(r["index"] % GROUP, []).append(str(r["index"]))
    return out


pytestmark = pytest.mark.usefixtures("own_datasets_cache")


def test_score_of_a_circular_result_gives_vlmevalkits_figure_with_its_guesses_apart(
    tmp_path: Path,
) -> None:
    doc = _score(tmp_path, HERE / CIRCULAR)
    assert doc["reader"] == "vlmevalkit" and doc["rows"] == len(ROWS)
    got = doc["metrics"]["mmbench_circular"]
    read, hits = TABLES[CIRCULAR]["read"], TABLES[CIRCULAR]["hit"]
    answer = {str(r["index"]): r["answer"] for r in ROWS}
    # A group that failed on a random option fails (its random option is no reading: wrong);
    # the others keep their hit (a random option that hit the gold is logged as a match: it
    # reads as the judge's). So the figure is VLMEvalKit's own Overall (report_acc), which
    # counts its failed guesses wrong too.
    guessed = {
        g for g, ids in _groups().items()
        if any(read.get(i, {}).get("by") == "random" and read[i]["opt"] != answer[i] for i in ids)
    }  # fmt: skip
    assert guessed and got["n"] == len(hits)
    assert got["value"] == pytest.approx(sum(hits.values()) / len(hits))
    assert got["value"] == pytest.approx(TABLES[CIRCULAR]["overall"])
    # Over the questions no random option failed (the judged ones alone):
    kept = [h for g, h in hits.items() if int(g) not in guessed]
    only = doc["metrics"]["mmbench_circular_judged_only"]
    assert only["n"] == len(kept) and only["value"] == pytest.approx(sum(kept) / len(kept))
    assert doc["metrics"]["judge_coverage"]["value"] < 1.0


def test_score_of_a_vanilla_result_reads_each_row_as_vlmevalkit_read_it(tmp_path: Path) -> None:
    doc = _score(tmp_path, HERE / VANILLA)
    read = TABLES[VANILLA]["read"]
    answer = {str(r["index"]): r["answer"] for r in ROWS}
    passed, judged = [], []
    for ids in _groups().values():
        right = all(read[i]["by"] != "random" and read[i]["opt"] == answer[i] for i in ids)
        passed.append(right)  # a random option is no reading: wrong, its question fails
        if not any(read[i]["by"] == "random" for i in ids):
            judged.append(right)
    got = doc["metrics"]["mmbench_circular"]
    assert got["n"] == len(passed)
    assert got["value"] == pytest.approx(sum(passed) / len(passed))
    only = doc["metrics"]["mmbench_circular_judged_only"]
    assert only["n"] == len(judged) < len(passed)
    assert only["value"] == pytest.approx(sum(judged) / len(judged))
    guesses = sum(v["by"] == "random" for v in read.values())
    assert doc["metrics"]["judge_coverage"]["value"] == pytest.approx(1 - guesses / len(ROWS))


def test_the_recorded_judges_readings_decide_the_headline_where_the_rules_read_none(
    tmp_path: Path,
) -> None:
    # Issue 36, item 5: the answers VLMEvalKit's judge read (its logged `hit` verdicts) are
    # those lmmprobe's rules could not read; the headline accuracy counts them as the judge
    # did, named as judged, with the rules' reading beside it.
    doc = _score(tmp_path, HERE / VANILLA)
    read = TABLES[VANILLA]["read"]
    answer = {str(r["index"]): r["answer"] for r in ROWS}
    by_judge = [i for i, v in read.items() if v["by"] == "judge"]
    right = sum(read[i]["opt"] == answer[i] for i in by_judge)
    assert doc["judged_headline"] == {
        "judges": ["vlmevalkit:openai (recorded)"],
        "answers": len(by_judge),
        "correct": right,
        "metrics": ["accuracy", "balanced_accuracy"],
    }
    metrics = doc["metrics"]
    n = len(ROWS)
    assert metrics["accuracy"]["n"] == metrics["accuracy_rules_only"]["n"] == n
    assert metrics["accuracy"]["value"] * n == pytest.approx(
        metrics["accuracy_rules_only"]["value"] * n + right
    )


def test_audit_pairs_the_recorded_readings_and_counts_random_options_wrong(
    tmp_path: Path,
) -> None:
    # lmmprobe's side of the audit is the verdict mmbench_circular uses: VLMEvalKit's logged
    # reading (a recorded mmbench-choice judgement), and wrong where it drew a random option
    # (unjudged: no reading, counted wrong), so every row is paired and the lucky draws are
    # the gap's "random fallback".
    doc = _score(tmp_path, HERE / VANILLA, "--audit")
    audit = doc["audit"]
    causes = audit["causes"]
    # The table's golds are option letters: the same key as the local copy's option texts.
    assert not [n for n in doc["notes"] if "another gold" in n], doc["notes"]
    assert "gold" not in causes and "judge" not in causes
    assert sum(c["net_items"] for c in causes.values()) == pytest.approx(audit["gap_items"])
    guessed = {i for i, v in TABLES[VANILLA]["read"].items() if v["by"] == "random"}
    lucky = sum(h for i, h in TABLES[VANILLA]["hit"].items() if i in guessed)
    assert guessed and lucky and not audit["left_out"] and not audit["left_out_detail"]
    assert audit["n"] == len(ROWS)
    assert causes["random_fallback"]["items"] == lucky
    # VLMEvalKit's side is its whole figure (the mean of hit over every row).
    assert audit["accuracy_b"] == pytest.approx(TABLES[VANILLA]["overall"])


# --------------------------------------------------------------------------- hostile logs


@pytest.mark.parametrize("log", ["", "something else entirely", 3, None, "Rolling x Matched."])
def test_an_unreadable_log_keeps_hit_and_records_no_reading(tmp_path: Path, log: Any) -> None:
    rows = [
        {"index": 1, "question": "q", "A": "red", "B": "blue", "answer": "A",
         "prediction": "The answer is A", "hit": 1, "log": log},
        {"index": 2, "question": "q", "A": "red", "B": "blue", "answer": "B",
         "prediction": "A", "hit": 0, "log": "Match Log: A. "},
    ]  # fmt: skip
    for suffix in (".tsv", ".xlsx"):
        path = tmp_path / f"M_MMBench_DEV_EN_openai_result{suffix}"
        if suffix == ".xlsx":
            pd.DataFrame(rows).to_excel(path, index=False, engine="openpyxl")
        else:
            pd.DataFrame(rows).to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
        first, second = _read(path)
        assert (first.tool_verdict, first.tool_decided_by, first.tool_extraction) == (
            1.0,
            None,
            None,
        )
        assert (second.tool_verdict, second.tool_decided_by, second.tool_extraction) == (
            0.0, "rule", "A",
        )  # fmt: skip


def test_log_formats_one_by_one() -> None:
    options = {"A": "red", "B": "blue", "C": "green"}
    assert vanilla_reading("Match Log: blue. ", "blue", options).letter == "B"  # type: ignore[union-attr]
    judged = vanilla_reading("Match Log: The answer is C. ", "no idea", options)
    assert judged is not None and (judged.by, judged.letter) == ("judge", "C")
    drawn = vanilla_reading(
        "Match Log: Failed to predict, thus randomly generate one. . ", "x", options
    )
    assert drawn is not None and drawn.by == "random" and drawn.letter is None
    assert vanilla_reading("Match Log: I cannot tell. ", "x", options) is None
    group = circular_log(
        "Rolling 0 Matched.\nRolling 1: Answer is B, Prediction is hm, Pre-fetched is B.\n"
        "Failed in Rolling 2: Answer is C; Prediction is A; B; Pre-fetched is A; Match Log is "
        "I pick A.\n",
        [("A", "A"), ("hm", "B"), ("A; B", "C"), ("D", "D")],
    )
    assert group is not None
    assert [(r.by, r.letter, r.gold) for r in (group.reading(0), group.reading(1), group.reading(2))
            if r is not None] == [("rule", None, True), ("judge", "B", False), ("judge", "A", False)]  # fmt: skip
    assert group.reading(3) is None
    failed = circular_log(
        "Failed in Prefetching Rolling 1: Answer is A, Prediction is B, Pre-fetched is B. ",
        [("C", "C"), ("B", "A")],
    )
    assert failed is not None and failed.reading(0) is None
    assert failed.reading(1) == type(failed.reading(1))("rule", "B")


def test_import_stores_vlmevalkits_readings_as_judgements(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "cli-datasets-cache")}
    done = lmmprobe(
        "import", HERE / VANILLA, "--benchmark", _bench(tmp_path), "--model", "m", "--db", db,
        "--format", "json", **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    exported = lmmprobe("export", run_id, "--db", db, "--format", "jsonl", **env)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    read = TABLES[VANILLA]["read"]
    decided = Counter()
    for row in rows:
        (j,) = row["judgements"]
        truth = read[row["sample_id"].rsplit("/", 1)[-1]]
        decided[j["decided_by"]] += 1
        assert j["protocol"] == "mmbench-choice" and j["version"] == "recorded"
        if truth["by"] == "random":
            assert (j["decided_by"], j["reason"]) == ("unjudged", "recorded random option")
        else:
            assert (j["decided_by"], j["reading"]) == (truth["by"], truth["opt"])
            assert j["judge"] == (
                "vlmevalkit:openai (recorded)" if truth["by"] == "judge" else None
            )
    assert decided == Counter(rule=31, judge=7, unjudged=6)
    # The run's judges section counts the same paths and names VLMEvalKit's judge as recorded.
    judge = json.loads(done.stdout)["judge"]
    assert judge["judges"] == ["vlmevalkit:openai (recorded)"]
    assert judge["decided"] == {"rule": 31, "judge": 7, "unjudged": 6}
    assert judge["protocols"] == {"mmbench-choice": "recorded"} and judge["calls"] == {}


def test_a_circular_result_alone_says_its_hit_is_the_groups_and_audits_it_so(
    tmp_path: Path,
) -> None:
    # Without Model_MMBench_DEV_EN.xlsx beside it, the table's first rows carry their group's
    # hit: score says which table is missing, and the audit files every difference that hit
    # makes as a CircularEval group verdict, the causes still adding up to the gap.
    alone = tmp_path / "alone"
    alone.mkdir()
    table = Path(shutil.copy(HERE / CIRCULAR, alone / CIRCULAR))
    doc = _score(tmp_path, table, "--audit")
    (note,) = [n for n in doc["notes"] if "CircularEval result table" in n]
    assert "Model_MMBench_DEV_EN.xlsx" in note and "'hit'" in note
    assert doc["rows"] == len(TABLES[CIRCULAR]["hit"])
    audit = doc["audit"]
    assert "circular_group" in audit["causes"] and "unrecorded" not in audit["causes"]
    assert sum(c["net_items"] for c in audit["causes"].values()) == pytest.approx(
        audit["gap_items"]
    )
    assert all(it["cause"] == "circular_group" for it in audit["items"])
    # With the prediction table beside it, every copy is read: no such note.
    shutil.copy(HERE / "Model_MMBench_DEV_EN.xlsx", alone / "Model_MMBench_DEV_EN.xlsx")
    beside = _score(tmp_path, table)
    assert not [n for n in beside["notes"] if "CircularEval result table" in n]


# --------------------------------------------------------------------------- text like the log's


SEPARATORS = HERE / "separators"


def _copies(name: str) -> dict[str, tuple[str | None, str | None, float | None]]:
    preds = _read(SEPARATORS / name / "Model_MMBench_DEV_EN_openai_result.tsv")
    return {
        p.sample_id or "": (p.tool_decided_by, p.tool_extraction, p.tool_verdict) for p in preds
    }


def test_a_prediction_holding_the_logs_separators_is_read_as_vlmevalkit_read_it() -> None:
    # Copy 0 answered "Hmm; Pre-fetched is A; Match Log is A." (gold A): VLMEvalKit's judge
    # read B in group 10 and it drew B at random in group 7; both groups failed there.
    assert _copies("r1") == {
        "7": ("random", "B", 0.0),
        "10": ("judge", "B", 0.0),
        "1000007": (None, None, None),
        "1000010": (None, None, None),
        "2000007": (None, None, None),
    }


def test_a_judge_reply_holding_an_entry_is_its_match_log_not_another_copy() -> None:
    # The judge replied "B\nRolling 2 Matched.": copy 0 failed, copies 1 and 2 were never
    # evaluated.
    assert _copies("r2") == {
        "12": ("judge", "B", 0.0),
        "1000012": (None, None, None),
        "2000012": (None, None, None),
    }


def test_score_of_separator_like_answers_counts_them_as_vlmevalkit_did(tmp_path: Path) -> None:
    first = _score(
        tmp_path, SEPARATORS / "r1" / "Model_MMBench_DEV_EN_openai_result.tsv", "--audit"
    )
    # Its judge's one reading was wrong; the random draw is wrong on lmmprobe's side.
    assert first["metrics"]["judge_score"]["value"] == 0.0
    assert first["audit"]["accuracy_a"] == 0.0
    assert first["audit"]["guessed"] == 1 and "only_b" not in first["audit"]["left_out"]
    second = _score(tmp_path, SEPARATORS / "r2" / "Model_MMBench_DEV_EN_openai_result.tsv")
    assert second["metrics"]["judge_score"]["value"] == 0.0
    assert second["judge"]["decided"] == {"rule": 0, "judge": 1, "unjudged": 0}


def test_a_table_scored_without_a_benchmark_names_the_tools_reading(tmp_path: Path) -> None:
    # No benchmark (the file's name tells none), so no judge protocol of its own: the recorded
    # readings are VLMEvalKit's, and the terminal says so once (it said "recorded recorded").
    unnamed = tmp_path / "Model_Custom_openai_result.tsv"
    unnamed.write_bytes((HERE / "Model_MMBench_DEV_EN_openai_result.tsv").read_bytes())
    done = lmmprobe("score", unnamed, "--reader", "vlmevalkit", HF_HUB_OFFLINE="1")
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    # (Under no benchmark the reader gives other rows than under MMBench: other counts.)
    assert "answers judged (vlmevalkit-reading recorded): 8 by rule, 3 by judge, 1 unjudged" in (
        said
    ), said
    assert "recorded recorded" not in said and "told by the file's name" not in said
    # Its name telling MMBench, the table is read as MMBench is: the judge protocol's name.
    done = lmmprobe(
        "score", HERE / "Model_MMBench_DEV_EN_openai_result.tsv", "--reader", "vlmevalkit",
        HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "answers judged (mmbench-choice recorded): 16 by rule, 5 by judge, 3 unjudged" in said
    assert "note: benchmark mmbench: told by the file's name" in said


def _as_pandas_writes(cell: str, tmp_path: Path) -> str:
    """``str()`` of `cell` as VLMEvalKit's ``load`` gives it: pandas' ``read_csv`` of a tsv
    and its ``read_excel`` of an xlsx (which agree), so what its log wrote for that answer."""
    tsv = tmp_path / "t.tsv"
    tsv.write_text(f"index\tprediction\n0\t{cell}\n", encoding="utf-8")
    xlsx = tmp_path / "t.xlsx"
    pd.DataFrame({"index": [0], "prediction": [cell]}).to_excel(xlsx, index=False)
    read = {str(pd.read_csv(tsv, sep="\t")["prediction"][0]),
            str(pd.read_excel(xlsx)["prediction"][0])}  # fmt: skip
    (said,) = read
    return said


@pytest.mark.parametrize("cell", ["NA", " NA", "NA ", " N/A ", "nan", " nan", "None", " None", " "])
def test_an_answer_near_a_missing_value_text_is_matched_as_pandas_gave_it_to_vlmevalkit(
    tmp_path: Path, cell: str
) -> None:
    """Re-test 17: the log reader kept its own copy of pandas' missing-value texts and tested
    the answer stripped, where pandas does not strip (" NA" stays " NA"): a log writing
    ``nan`` for the answer " NA", which VLMEvalKit cannot have written, was read."""
    said = _as_pandas_writes(cell, tmp_path)

    def log(prediction: str) -> str:
        return f"Failed in Prefetching Rolling 0: Answer is A, Prediction is {prediction}, Pre-fetched is B. "

    group = circular_log(log(said), [(cell, "A")])
    assert group is not None and group.reading(0) is not None
    assert group.reading(0).letter == "B"  # type: ignore[union-attr]
    if said == cell != "nan":
        # pandas kept the text: VLMEvalKit never wrote "nan" for it. (An answer pandas does
        # read as missing may be logged either way: the model's own text where the
        # evaluation had it in memory.)
        group = circular_log(log("nan"), [(cell, "A")])
        assert group is not None and group.reading(0) is None
