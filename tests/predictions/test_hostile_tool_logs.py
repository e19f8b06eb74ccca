"""Other tools' logs and tables under hostile input (issue 34, re-test 12): bounded, one line.

Each test's data is the re-test's reproduction scaled down (scripts under /tmp/h12 then): a
VLMEvalKit CircularEval pair whose group log is copied into every copy, or whose rolling number
is not VLMEvalKit's; a prediction table replaced while it is read; lmms-eval MMMU logs that
made the reader quadratic; an MMMU folder's long answer list; a ``--field`` naming nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.bounded import bounded
from tests.console import lmmprobe
from tests.predictions.test_score_audit_cli import _outputs, _snapshot

from lmmprobe.data.base import DataError
from lmmprobe.metrics.benchmark_choice import MMMU_MAX_GOLDS, mmmu_open_correct
from lmmprobe.predictions._rows import MAX_PREDICTION
from lmmprobe.predictions.imported import READERS, ImportedPrediction, ReadOptions
from lmmprobe.predictions.readers import lmms_eval
from lmmprobe.predictions.readers.lmms_eval import (
    UNTOLD_FIELD,
    mmmu_verdict,
)

RESULT = "M_MMBench_gpt-4o_result.tsv"


def _read(path: Path) -> list[ImportedPrediction]:
    return list(READERS.get("vlmevalkit").read(path, ReadOptions()))


def _circular_pair(folder: Path, log: str, copies: int) -> Path:
    """One CircularEval group with `log`, and its prediction table of `copies` copies."""
    folder.mkdir(exist_ok=True)
    result = folder / RESULT
    with result.open("w", encoding="utf-8") as f:
        f.write("index\tprediction\tanswer\tA\tB\thit\tlog\n")
        f.write('0\tA\tA\tx\ty\t1\t"' + log + '"\n')
    with (folder / "M_MMBench.tsv").open("w", encoding="utf-8") as f:
        f.write("index\tprediction\tanswer\tA\tB\n")
        f.writelines(f"{i * 1_000_000}\tA\tA\tx\ty\n" for i in range(copies))
    return result


def _one_line(done: object, *needles: str) -> None:
    stderr = getattr(done, "stderr", "")
    assert getattr(done, "returncode", 0) != 0, stderr
    assert "Traceback" not in stderr and "Error in sys.excepthook" not in stderr, stderr
    for needle in needles:
        assert needle in stderr, stderr


# ------------------------------------------------------ #4: a group's log in every copy


def test_a_circular_group_with_more_copies_than_options_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    # 60,000 copies of one group (2.5 MB) ran into a MemoryError: each copy carried the log.
    log = "".join(f"Rolling {i} Matched.\n" for i in range(27))
    result = _circular_pair(tmp_path, log, 27)
    done = lmmprobe("score", result, "--reader", "vlmevalkit", timeout=120)
    _one_line(done, "M_MMBench.tsv:row 28: index: 26000000: copy 27", "at most 26")


def test_a_groups_long_log_is_held_once_for_all_its_copies(tmp_path: Path) -> None:
    log = "Rolling 0 Matched.\n" + "x" * MAX_PREDICTION
    preds = _read(_circular_pair(tmp_path, log, 26))
    assert len(preds) == 26
    shown = preds[0].fields["group_log"]
    assert shown.startswith("Rolling 0 Matched.") and "cut here" in shown
    assert all(p.fields["group_log"] is shown for p in preds)
    assert preds[0].tool_decided_by == "rule"


# ------------------------------------- #3: a rolling number VLMEvalKit cannot have written


def _prefetch_pair(folder: Path, number: str, *, beside: bool = True) -> Path:
    folder.mkdir(exist_ok=True)
    result = folder / RESULT
    log = f"Failed in Prefetching Rolling {number}: Answer is B, Prediction is B, Pre-fetched is A."
    result.write_text(
        f"index\tprediction\tanswer\tA\tB\thit\tlog\n0\tA\tA\tx\ty\t1\t{log}\n", encoding="utf-8"
    )
    if beside:
        (folder / "M_MMBench.tsv").write_text(
            "index\tprediction\tanswer\tA\tB\n0\tA\tA\tx\ty\n1000000\tB\tB\ty\tx\n",
            encoding="utf-8",
        )
    return result


@pytest.mark.parametrize("number", ["\u00b2", "\u0663", "9" * 5000])
@pytest.mark.parametrize("beside", [True, False], ids=["with-table", "result-only"])
def test_a_rolling_number_vlmevalkit_cannot_write_is_one_line_naming_the_log(
    tmp_path: Path, number: str, beside: bool
) -> None:
    # "Rolling ²" (str.isdigit, then int() refused it) and 5,000 digits (int()'s limit) were
    # tracebacks.
    result = _prefetch_pair(tmp_path, number, beside=beside)
    for command in ("score", "import"):
        more = ("--db", str(tmp_path / "s.db")) if command == "import" else ()
        done = lmmprobe(command, result, "--reader", "vlmevalkit", *more, timeout=120)
        _one_line(done, f"{RESULT}:row 2: log:", "rolling number is not VLMEvalKit's")


def test_an_ascii_rolling_number_is_still_read(tmp_path: Path) -> None:
    preds = _read(_prefetch_pair(tmp_path, "1"))
    assert [p.tool_extraction for p in preds] == [None, "A"]


# ---------------------------------------- #11: a prediction table replaced while it is read


def _race_pair(folder: Path, groups: int) -> tuple[Path, Path]:
    """A pre-fetched CircularEval result, its table beside it, and a table with one more copy."""
    folder.mkdir(exist_ok=True)
    result = folder / RESULT
    with result.open("w", encoding="utf-8") as f:
        f.write("index\tprediction\tanswer\tA\tB\thit\tlog\n")
        f.writelines(f"{g}\tA\tA\tx\ty\t1\tSucceed During Pre-fetching\n" for g in range(groups))
    rows = [f"{g + k * 1_000_000}\tA\tA\tx\ty\n" for k in range(2) for g in range(groups)]
    (folder / "M_MMBench.tsv").write_text(
        "index\tprediction\tanswer\tA\tB\n" + "".join(rows), encoding="utf-8"
    )
    other = folder / "b.tsv"
    other.write_text(
        "index\tprediction\tanswer\tA\tB\n" + "".join(rows) + "2000000\tA\tA\tx\ty\n",
        encoding="utf-8",
    )
    return result, other


def test_a_table_replaced_after_it_was_hashed_is_named_not_scored_under_the_old_hash(
    tmp_path: Path,
) -> None:
    result, other = _race_pair(tmp_path, 3)
    reader = READERS.get("vlmevalkit")
    origin = reader.origin(result, ReadOptions())
    assert origin.detail["predictions"] == "M_MMBench.tsv"
    os.replace(other, tmp_path / "M_MMBench.tsv")
    with pytest.raises(DataError, match=r"M_MMBench\.tsv: changed while it was read"):
        list(reader.read(result, ReadOptions()))


def test_a_table_replaced_between_the_readers_passes_is_named(tmp_path: Path) -> None:
    # The second pass met an index the first had not seen: "ValueError: 2000000 is not in list".
    result, other = _race_pair(tmp_path, 3)
    rows = READERS.get("vlmevalkit").read(result, ReadOptions())
    next(rows)  # the first pass is done, the second begun
    os.replace(other, tmp_path / "M_MMBench.tsv")
    with pytest.raises(DataError, match=r"M_MMBench\.tsv: changed while it was read"):
        list(rows)


def test_a_table_swapped_over_and_over_while_scored_is_scored_or_named_never_a_traceback(
    tmp_path: Path,
) -> None:
    result, other = _race_pair(tmp_path, 2000)
    first = tmp_path / "a.tsv"
    shutil.copy(tmp_path / "M_MMBench.tsv", first)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for version in (first, other):
                shutil.copy(version, tmp_path / "t.tsv")
                os.replace(tmp_path / "t.tsv", tmp_path / "M_MMBench.tsv")
                time.sleep(0.005)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        for _ in range(3):
            done = lmmprobe("score", result, "--reader", "vlmevalkit", timeout=120)
            assert "Traceback" not in done.stderr, done.stderr
            if done.returncode != 0:
                _one_line(done, "M_MMBench.tsv: changed while it was read")
    finally:
        stop.set()
        swapper.join()


# ----------------------------------------- #1, #2: lmms-eval's MMMU entries in linear time


def _mmmu_row(i: int, name: str, answer: object, parsed: object) -> str:
    entry = {"id": f"s{i}", "question_type": "open", "answer": answer, "parsed_pred": parsed}
    return json.dumps(
        {"doc_id": i, "target": "yellow", "resps": [["yellow"]], "filtered_resps": ["yellow"],
         name: entry}
    ) + "\n"  # fmt: skip


def test_a_log_whose_rows_each_name_a_new_mmmu_metric_is_read_in_one_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each row's ambiguous entry under a new name scanned the whole log again: 4,000 rows 88 s.
    log = tmp_path / "q_samples_mmmu.jsonl"
    rows = 300
    log.write_text("".join(_mmmu_row(i, f"m{i}", "yellow", ["yellow"]) for i in range(rows)))
    read = 0
    real = lmms_eval.iter_jsonl

    def counted(path: Path) -> Iterator[tuple[int, Any]]:
        nonlocal read
        for item in real(path):
            read += 1
            yield item

    monkeypatch.setattr(lmms_eval, "iter_jsonl", counted)
    preds = list(READERS.get("lmms-eval").read(log, ReadOptions()))
    assert len(preds) == rows
    # "yellow" fits both layouts and the two readings differ: the log is scanned for a
    # telling entry of each name (none tells), and each verdict left unrecorded.
    assert all(p.tool_verdict is None and p.fields.get(UNTOLD_FIELD) for p in preds)
    assert read <= 2 * rows  # the rows, and one scan for every name (was rows * rows)


def test_an_ambiguous_log_of_new_metric_names_still_scores_through_the_console(
    tmp_path: Path,
) -> None:
    log = tmp_path / "q_samples_mmmu.jsonl"
    log.write_text("".join(_mmmu_row(i, f"m{i}", "yellow", ["yellow"]) for i in range(50)))
    done = lmmprobe("score", log, "--reader", "lmms-eval", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "50 predictions scored" in done.stdout + done.stderr


def test_an_mmmu_entry_with_more_golds_than_mmmu_has_is_an_error_row_and_the_rest_scored(
    tmp_path: Path,
) -> None:
    # 12,000 golds against 12,000 parsed texts (230 KB) ran past 120 s.
    many = [f"q{i}x" for i in range(MMMU_MAX_GOLDS + 1)]
    log = tmp_path / "g_samples_mmmu.jsonl"
    log.write_text(
        _mmmu_row(0, "mmmu_acc", many, [f"z{i}" for i in range(MMMU_MAX_GOLDS + 1)])
        + _mmmu_row(1, "mmmu_acc", "yellow", [["yellow"]])
    )
    done = lmmprobe("score", log, "--reader", "lmms-eval", "--format", "json", timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert f"g_samples_mmmu.jsonl:1: mmmu_acc.answer: {MMMU_MAX_GOLDS + 1} golds" in said
    assert "Traceback" not in said
    preds = list(READERS.get("lmms-eval").read(log, ReadOptions()))
    assert preds[0].refused is not None and preds[1].tool_verdict == 1.0


def test_an_lmms_eval_row_whose_doc_id_is_no_id_is_that_rows_problem(tmp_path: Path) -> None:
    # A doc_id of true, null or a list refused the whole import in one line; such a row has
    # no item to join, so it is left out and named, and the other rows are scored.
    rows = [{"doc_id": bad} for bad in (True, None, [3])] + [{"doc_id": 1}, {"doc_id": "2"}]
    log = tmp_path / "x_samples_mytask.jsonl"
    log.write_text(
        "".join(
            json.dumps({**row, "target": "red", "resps": [["red"]], "filtered_resps": ["red"]})
            + "\n"
            for row in rows
        )
    )
    for command in ("score", "import"):
        more = ("--db", tmp_path / "db") if command == "import" else ()
        done = lmmprobe(command, log, "--reader", "lmms-eval", *more, timeout=120)
        said = done.stdout + done.stderr
        assert done.returncode == 0 and "Traceback" not in said, said
        assert "2 predictions scored" in said and "skipped 3 entries" in said, said
        for line, got in ((1, "bool True"), (2, "NoneType None"), (3, "list [3]")):
            assert f"{log}:{line}: doc_id: expected text, got {got} (left out)" in said, said


def test_a_long_parsed_text_is_judged_in_linear_time() -> None:
    # A per-response text entry is iterated character by character, as lmms-eval does:
    # 1,000 golds x 1,000,000 characters took 118 s.
    golds = [f"q{i}x" for i in range(MMMU_MAX_GOLDS)]
    entry = {"question_type": "open", "answer": golds, "parsed_pred": ["1", "x" * 8_000_000]}
    assert bounded(mmmu_verdict, entry, "per-response", seconds=10) == 0.0
    entry["answer"] = [*golds[:-1], ""]  # "" is in every character
    assert bounded(mmmu_verdict, entry, "per-response", seconds=10) == 1.0


def _released_open_correct(gold: str | list[str], preds: Any) -> bool:
    """MMMU's ``eval_open`` loop as released (candidates x golds), for comparison."""
    golds: list[Any] = []
    for g in [gold] if isinstance(gold, str) else gold:
        g = g.strip()
        try:
            golds.append(round(float(g.replace(",", "")), 2))
        except ValueError:
            g = g.lower()
            golds.extend([" " + g, g + " "] if len(g) == 1 else [g])
    for p in preds:
        if isinstance(p, str):
            if any(isinstance(g, str) and g in p for g in golds):
                return True
        elif p in golds:
            return True
    return False


_TEXTS = st.text(alphabet="ab1.5 -,", max_size=6)


@given(
    gold=st.one_of(_TEXTS, st.lists(_TEXTS, max_size=4)),
    preds=st.one_of(
        _TEXTS,
        st.lists(st.one_of(_TEXTS, st.floats(allow_nan=False), st.integers(-3, 3)), max_size=5),
    ),
)
@settings(max_examples=400, deadline=None)
def test_the_linear_open_verdict_is_mmmus_loop(gold: str | list[str], preds: Any) -> None:
    assert mmmu_open_correct(gold, preds) == _released_open_correct(gold, preds)


# --------------------------------------------- #6: an MMMU folder's long open answer list


def test_an_mmmu_answer_list_longer_than_mmmus_is_one_line_under_as_published(
    tmp_path: Path,
) -> None:
    # 40,000 answers against the 40,000 numbers of a response (700 KB) took 42 s: MMMU's
    # eval_open tests each candidate against each answer.
    folder = _outputs(tmp_path)
    math = folder / "Math" / "output.json"
    records = json.loads(math.read_text(encoding="utf-8"))
    many = MMMU_MAX_GOLDS + 1
    records[0]["answer"] = [f"w{i}" for i in range(many)]
    records[0]["response"] = " ".join(f"So it is w{i}." for i in range(many))
    math.write_text(json.dumps(records), encoding="utf-8")
    done = lmmprobe(
        "score", folder, "--benchmark", f"mmmu,path={_snapshot(tmp_path)}", "--as-published",
        HF_DATASETS_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", columns=400,
        timeout=300,
    )  # fmt: skip
    _one_line(done, f"(id validation_Math_1): answer: {many} answers, more than {MMMU_MAX_GOLDS}")


def test_many_number_answers_are_judged_in_linear_time() -> None:
    # The numbers MMMU compares by equality are looked up, not tested pair by pair.
    golds = [str(i) for i in range(200_000)]
    preds = [i + 0.5 for i in range(200_000)]
    assert bounded(mmmu_open_correct, golds, preds, seconds=10) is False
    assert bounded(mmmu_open_correct, golds, [*preds, 7.0], seconds=10) is True


# ------------------------------------------- #10: a --field mapping that names nothing

DUPLICATED = (
    '{"id": "1", "prediction": "A", "gold": "A"}\n'
    '{"id": "1", "prediction": "B", "gold": "A"}\n'
    '{"id": "2", "prediction": "B", "gold": "B"}\n'
)


def test_a_mapped_id_no_row_has_is_refused_not_ignored_with_the_duplicate_check(
    tmp_path: Path,
) -> None:
    # Scored "3 predictions ... against the golds the file gives", the duplicate counted twice.
    answers = tmp_path / "dup.jsonl"
    answers.write_text(DUPLICATED, encoding="utf-8")
    done = lmmprobe("score", answers, "--reader", "mapped", "--field", "id=qid", timeout=120)
    _one_line(done, "dup.jsonl:1: qid: missing: --field id=qid names a field this record lacks")
    plain = lmmprobe("score", answers, "--reader", "mapped", timeout=120)
    _one_line(plain, "id: '1' again")  # as it was: the duplicate named


def test_one_of_our_fields_mapped_twice_is_refused(tmp_path: Path) -> None:
    answers = tmp_path / "dup.jsonl"
    answers.write_text(DUPLICATED, encoding="utf-8")
    done = lmmprobe("score", answers, "--reader", "mapped", "--field", "id=a,id=b", timeout=120)
    _one_line(done, "--field id: mapped twice (id=a, id=b)")


def test_a_mapped_optional_field_no_row_has_is_named(tmp_path: Path) -> None:
    answers = tmp_path / "a.jsonl"
    answers.write_text(DUPLICATED.split("\n", 1)[1], encoding="utf-8")
    done = lmmprobe("score", answers, "--reader", "mapped", "--field", "verdict=hit", timeout=120)
    _one_line(done, "a.jsonl: --field verdict=hit: no row has this field")
    fine = lmmprobe("score", answers, "--reader", "mapped", "--field", "gold=gold", timeout=120)
    assert fine.returncode == 0, fine.stderr
