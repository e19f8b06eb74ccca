"""``score`` streams a file as ``import`` does: memory does not grow with its rows.

Re-test 12 #5: ``score`` of a mapped file held a pydantic Score per row (a 9 MB file of 300,000
rows ran out of 2 GB, while ``import`` of it took 179 MB). `score_file` now reads, joins,
scores and stores the file a chunk at a time in a temporary store and computes the figures
from the stored rows. #8: an export naming absurdly many models is refused in one line.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.live_objects import alive, objects_made_since

from lmmprobe.data import DataError, json_stream
from lmmprobe.predictions import export, score_prediction_file, scoring
from lmmprobe.predictions.export import MAX_MODELS, score_export
from lmmprobe.predictions.importing import score_file
from lmmprobe.schema import Score
from lmmprobe.schema import rows as schema_rows

FIELDS = {"id": "i", "prediction": "p", "gold": "g"}


def _mapped(path: Path, n: int) -> Path:
    """The re-test's file: a JSON array of ``{"i": "N", "p": "A", "g": "A"}``."""
    path.write_text("[" + ",".join(f'{{"i":"{i}","p":"A","g":"A"}}' for i in range(n)) + "]")
    return path


def _live(path: Path) -> int:
    """The most Scores alive at one time while `score_file` reads `path`.

    Counted among the objects made since the count began (`objects_made_since`): Scores
    other tests of this worker left alive are not this run's.
    """
    most = 0

    def count(rows: object, scores: object) -> None:
        nonlocal most
        most = max(most, alive(Score))

    with objects_made_since():
        run = score_file(path, None, field_map=FIELDS, bootstrap=0, on_rows=count)
    assert run.results.models["imported"].metrics["accuracy"].value == 1.0
    return most


def _peak(path: Path) -> int:
    """Peak traced bytes of `score_file` on `path`.

    Measured in a pass of its own: a count of live objects lists the heap, and that list
    would be traced too (megabytes in a worker that has run much of the suite).
    """
    score_file(path.with_name("warm.json"), None, field_map=FIELDS, bootstrap=0)
    gc.collect()
    tracemalloc.start()
    try:
        score_file(path, None, field_map=FIELDS, bootstrap=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def test_score_holds_one_chunk_of_rows_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every buffer `score` fills is of a fixed size: the chunk it joins and stores (10,000
    # rows), the chunk it reads back for the figures (8,192 rows) and the JSON reader's block
    # (1 MiB). Made small here, 400 and 4,000 rows both span many of each, so what memory
    # still grew with the rows would show; at their real sizes a 4,000-row file fits in one of
    # each, and its peak grew from 400 rows only because those buffers were filling up.
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 200)
    monkeypatch.setattr(schema_rows, "CHUNK_ROWS", 200)
    monkeypatch.setattr(json_stream, "CHUNK", 8192)
    _mapped(tmp_path / "warm.json", 50)  # what the first call imports is not what rows cost
    small, big = _mapped(tmp_path / "s.json", 400), _mapped(tmp_path / "b.json", 4_000)
    # Scores alive while a chunk is stored: one chunk's, whatever the file's size.
    assert _live(small) <= 200 and _live(big) <= 200
    # Ten times the rows, the same memory. Held as Scores it was ~7.8 KB a row (about 7x
    # from 400 to 4,000 rows); streamed, about 2.2 and 2.4 MB here (2.5 MB at 40,000 rows):
    # what is left per sample is its answer sums' few bytes.
    small_peak, big_peak = _peak(small), _peak(big)
    assert big_peak < 1.25 * small_peak, (small_peak, big_peak)


def test_score_of_a_mapped_file_prints_its_figures_and_stores_nothing(tmp_path: Path) -> None:
    path = _mapped(tmp_path / "a.json", 50)
    scored = lmmprobe("score", path, "--reader", "mapped", "--field", "id=i,prediction=p,gold=g")
    assert scored.returncode == 0, scored.stderr
    assert "50 predictions scored against the golds the file gives" in scored.stdout
    assert "stored as run" not in scored.stdout


def _export_row(model: str, sample: str) -> dict[str, object]:
    return {"model": model, "sample_id": sample, "repeat": 0, "key": sample, "stage": "match",
            "correct": True, "gold": ["A"], "gold_text": "A"}  # fmt: skip


def test_an_export_naming_more_models_than_any_run_is_refused_in_one_line() -> None:
    rows = [_export_row(f"m{i}", f"s{i}") for i in range(MAX_MODELS + 5)]
    with pytest.raises(
        DataError, match=rf"row {MAX_MODELS + 1} \(model 'm{MAX_MODELS}'.*more than"
    ):
        score_export(rows)
    assert set(score_export(rows[:3], n_boot=0)) == {"m0", "m1", "m2"}


def _export_file(path: Path, n: int, models: int = 1) -> Path:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps(_export_row(f"m{i % models}", f"s{i}")) + "\n")
    return path


def _export_peak(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        result = score_prediction_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result["models"]["m0"]["accuracy"]["value"] == 1.0
    return peak


def test_score_of_an_export_reduces_its_rows_as_it_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # #8: every row was held as a dict and then as a Score (~9 KB a row).
    monkeypatch.setattr(export, "CHUNK_ROWS", 100)
    small = _export_peak(_export_file(tmp_path / "s.jsonl", 1_000))
    big = _export_peak(_export_file(tmp_path / "b.jsonl", 10_000))
    # What grows is each sample's sums (a few hundred bytes), not its row.
    assert big - small < 9_000 * 1_500, (small, big)


def test_score_refuses_an_export_of_more_models_than_any_run_in_one_line(tmp_path: Path) -> None:
    path = _export_file(tmp_path / "models.jsonl", MAX_MODELS + 5, models=MAX_MODELS + 5)
    done = lmmprobe("score", path)
    assert done.returncode != 0
    assert f"more than {MAX_MODELS:,} models in one file" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr + done.stdout
