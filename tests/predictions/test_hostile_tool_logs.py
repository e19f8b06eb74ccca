"""Other tools' logs and tables under hostile input (issue 34, re-test 12): bounded, one line.

Each test's data is the re-test's reproduction scaled down (scripts under /tmp/h12 then): a
VLMEvalKit CircularEval pair whose group log is copied into every copy, or whose rolling number
is not VLMEvalKit's; a prediction table replaced while it is read; lmms-eval MMMU logs that
made the reader quadratic; an MMMU folder's long answer list; a ``--field`` naming nothing.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from tests.console import lmmprobe

from lmmprobe.data.base import DataError
from lmmprobe.predictions._rows import MAX_PREDICTION
from lmmprobe.predictions.imported import READERS, ImportedPrediction, ReadOptions

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
