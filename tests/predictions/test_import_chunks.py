"""An import in chunks: joined through SQLite, stored and dropped, its figures from the store.

`import_file` reads, joins, scores and stores a file `CHUNK_ROWS` rows at a time and keeps
none of them; here the chunks are made a few rows long, so a small file crosses several, and
its figures must be those of the same file scored in memory (`score_file`).
"""

from __future__ import annotations

import gc
import json
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import numpy as np
import pytest

from lmmprobe.data import DataError, data_fingerprint, load_source
from lmmprobe.data import rows as rows_module
from lmmprobe.data.base import SampleStream
from lmmprobe.predictions import scoring
from lmmprobe.predictions._join import FileOrderRows, SampleIndex
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.importing import import_file, score_file
from lmmprobe.predictions.scoring import plan_import
from lmmprobe.schema import Sample, ScoreRows
from lmmprobe.store import Store

FIELDS = {"id": "qid", "prediction": "answer"}


def _files(tmp_path: Path, n: int = 11) -> tuple[Path, Path]:
    """A benchmark of `n` choice items named ``bench/qI`` and a file answering all but one of
    them by their short id, out of order, with one row that is no item of it."""
    data = tmp_path / "bench.jsonl"
    preds = tmp_path / "preds.jsonl"
    rows = []
    for i in range(n):
        choices = [f"option {i} {k}" for k in range(4)]
        rows.append({"id": f"bench/q{i}", "images": [], "question": f"Question {i}?",
                     "choices": choices, "answer": i % 4,
                     "metadata": {"part": ["a", "b"][i % 2], "level": i % 3}})  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = ["A", "B", "option {i} 2", "I think (C)", "no idea"]
    order = [7, 3, 10, 0, 5, 9, 1, 8, 2, 6]  # q4 unanswered
    lines = [{"qid": f"q{i}", "answer": said[i % 5].format(i=i)} for i in order]
    lines.insert(4, {"qid": "elsewhere", "answer": "A"})
    preds.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return data, preds


def _figures(results: Any) -> dict[str, Any]:
    (model,) = results.models.values()
    dumped: dict[str, Any] = model.model_dump(mode="json", exclude={"stats"})
    return dumped


@pytest.mark.parametrize("chunk", [3, 10_000])
def test_an_import_in_chunks_gives_the_figures_of_the_file_scored_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    data, preds = _files(tmp_path)
    monkeypatch.setattr(scoring, "CHUNK_ROWS", chunk)
    bench = f"jsonl:{data}"
    by = ["part", "level"]
    scored = score_file(preds, bench, field_map=FIELDS, by=by, model="m", bootstrap=200)
    run = import_file(preds, bench, model="m", db=str(tmp_path / "s.db"), field_map=FIELDS,
                      by=by, bootstrap=200)  # fmt: skip
    assert _figures(run.results) == _figures(scored.results)
    assert run.results.data == scored.results.data
    assert run.results.data.samples == 10 and run.results.data.invalid == 1
    got, want = run.results.manifest.model_dump(), scored.results.manifest.model_dump()
    assert got["data"] == want["data"]
    assert run.plan.counts() == scored.plan.counts() == {
        "golds": "benchmark", "rows": 10, "benchmark_samples": 11, "missing": 1, "unjoined": 1,
    }  # fmt: skip
    # Neither holds a row: both went through a store (score's a temporary one).
    assert run.scores == [] and scored.scores == []
    assert run.run_id is not None
    with Store(str(tmp_path / "s.db")) as store:
        assert len(store.model_scores(run.run_id, "m")) == 10


def test_a_second_answer_in_a_later_chunk_names_both_rows_and_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, preds = _files(tmp_path)
    with preds.open("a") as f:
        f.write(json.dumps({"qid": "bench/q3", "answer": "B"}) + "\n")  # q3 is at row 2
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 3)
    db = tmp_path / "s.db"
    with pytest.raises(DataError, match=r"row 12: id: 'bench/q3' again \(first at row 2\)"):
        import_file(preds, f"jsonl:{data}", model="m", db=str(db), field_map=FIELDS)
    with sqlite3.connect(db) as con:
        assert [r[0] for r in con.execute("SELECT status FROM runs")] == ["failed"]


def _samples(*ids: str) -> list[Sample]:
    return [Sample(id=i, question=f"q {i}", answer=["x"], formulation="open_ended") for i in ids]


def test_the_index_joins_as_the_dict_did() -> None:
    samples = _samples("a/1", "b/1", "c/2", "2", "d/3")
    with SampleIndex() as index:
        index.add_benchmark(samples)
        assert index.total == 5
        found = index.find("a/1")
        assert found is not None and found == samples[0]
        assert index.find("1") is None  # two samples end in /1: which one cannot be told
        assert index.find("2") == samples[3]  # a full id wins over a short one
        assert index.find("3") == samples[4]
        assert index.claim(samples[4], 7) is None
        assert index.claim(samples[4], 9) == 7
        assert index.claim(samples[0], 8) is None
        assert index.answered_count() == 2
        # Answered samples in the benchmark's order, whatever order they were answered in.
        assert index.fingerprint() == data_fingerprint([samples[0], samples[4]])


def test_streamed_and_in_memory_plans_count_alike() -> None:
    preds = [ImportedPrediction(row=r, sample_id=i, prediction="x")
             for r, i in [(1, "3"), (2, "zzz"), (3, "a/1")]]  # fmt: skip
    kept = plan_import(preds, _samples("a/1", "c/2", "d/3"), model="m")
    chunks: list[int] = []
    streamed = plan_import(
        preds,
        _samples("a/1", "c/2", "d/3"),
        model="m",
        on_chunk=lambda rows: chunks.append(len(rows)),
    )
    assert chunks == [2] and streamed.rows == [] and streamed.samples == []
    assert streamed.counts() == kept.counts()
    assert streamed.fingerprint == data_fingerprint(kept.samples)
    assert streamed.answered == len(kept.samples) == 2


def test_stored_rows_come_back_in_the_files_order(tmp_path: Path) -> None:
    data, preds = _files(tmp_path)
    run = import_file(preds, f"jsonl:{data}", model="m", db=str(tmp_path / "s.db"),
                      field_map=FIELDS)  # fmt: skip
    assert run.run_id is not None
    with Store(str(tmp_path / "s.db")) as store:
        rows = FileOrderRows(store.rows(run.run_id, "m"))
        scores = rows.scores()
        ids = [sid for chunk in rows.chunks(["part"]) for sid in chunk.sample_id]
        assert ids == [s.sample_id for s in scores]
        assert ids[:3] == ["bench/q7", "bench/q3", "bench/q10"]
        want = [c.meta["part"] for c in ScoreRows(scores).chunks(["part"])]
        assert [c.meta["part"] for c in rows.chunks(["part"])] == want


def _stored(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What an import stored, without what differs from run to run (its id, times)."""
    with closing(sqlite3.connect(db)) as con:
        return {
            "samples": con.execute(
                "SELECT sample_id, question, sample, row_metadata FROM samples ORDER BY sample_id"
            ).fetchall(),
            "scores": [
                row[1:]
                for row in con.execute("SELECT * FROM scores ORDER BY model, sample_id, repeat")
            ],
            "responses": con.execute(
                "SELECT key, model, method, prompt, text, reasoning, error_type, error_message "
                "FROM responses ORDER BY key"
            ).fetchall(),
        }


def _messy_benchmark(data: Path) -> None:
    """The benchmark with rows its source rejects: an invalid one and a repeated id."""
    with data.open("a") as f:
        f.write(json.dumps({"id": "bench/bad", "images": [], "question": "?",
                            "choices": ["a", "b"], "answer": 9}) + "\n")  # fmt: skip
        f.write(json.dumps({"id": "bench/q2", "images": [], "question": "Again?",
                            "choices": ["a", "b"], "answer": 0}) + "\n")  # fmt: skip


def test_an_import_streaming_its_benchmark_stores_what_a_loaded_benchmark_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several chunks, and the benchmark's id set moved to SQLite after two ids.
    data, preds = _files(tmp_path)
    _messy_benchmark(data)
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 3)
    monkeypatch.setattr(rows_module, "IDS_IN_MEMORY", 2)
    bench = f"jsonl:{data}"
    kw: dict[str, Any] = {"model": "m", "field_map": FIELDS, "by": ["part"], "bootstrap": 200}
    streamed = import_file(preds, bench, db=str(tmp_path / "a.db"), **kw)
    with monkeypatch.context() as m:
        # As before: the benchmark loaded whole, its list indexed.
        m.setattr(scoring, "iter_source", lambda spec: SampleStream.loaded(load_source(spec)))
        loaded = import_file(preds, bench, db=str(tmp_path / "b.db"), **kw)
    assert _stored(tmp_path / "a.db") == _stored(tmp_path / "b.db")
    assert len(_stored(tmp_path / "a.db")["scores"]) == 10
    assert _figures(streamed.results) == _figures(loaded.results)
    assert streamed.results.data == loaded.results.data
    assert streamed.results.data.invalid == 3  # two rows of the benchmark, one of the file
    assert streamed.results.data.problems == [
        f"{data}:12: answer: index 9 is out of range for 2 choices",
        f"{data}:13: id: duplicate id 'bench/q2' (first at line 3)",
    ]
    got, want = streamed.results.manifest.model_dump(), loaded.results.manifest.model_dump()
    assert got["data"] == want["data"] and got["origin"] == want["origin"]
    assert streamed.plan.counts() == loaded.plan.counts()


def test_an_import_never_holds_the_benchmarks_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, preds = _files(tmp_path)

    def whole(*_: Any, **__: Any) -> Any:
        raise AssertionError("the benchmark was loaded whole")

    monkeypatch.setattr(scoring, "load_source", whole)
    monkeypatch.setattr(SampleStream, "result", whole)
    run = import_file(preds, f"jsonl:{data}", model="m", db=str(tmp_path / "s.db"),
                      field_map=FIELDS)  # fmt: skip
    assert run.plan.counts()["benchmark_samples"] == 11


COLOURS = ["red", "green", "blue", "yellow", "purple", "white"]


def _objects(root: object) -> int:
    """Python objects reachable from `root` (an array counts once, whatever its length)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | ModuleType | FunctionType | np.dtype):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


def test_an_imports_answer_sums_keep_no_id_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import's figures are computed over its rows in the file's order (`FileOrderRows`);
    the answer sums take the same rows again in sample-id order from the store (the gold
    classes numbered in the file's order first), so they keep no dict of every sample id:
    ten times the predictions, as many objects held. The figures stay the in-memory ones."""
    from lmmprobe.report import results as results_module

    made: list[Any] = []
    summarize = results_module.summarize_rows

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(summarize(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(results_module, "summarize_rows", spy)
    monkeypatch.setattr(scoring, "CHUNK_ROWS", 64)
    held = []
    for n in (60, 600):
        folder = tmp_path / str(n)
        folder.mkdir()
        rng = random.Random(n)
        # Gold texts from a few colours: classes are few (each is kept by its text).
        items = [{"id": f"q{i:04d}", "images": [], "question": f"Question {i}?",
                  "choices": rng.sample(COLOURS, 4), "answer": i % 4,
                  "metadata": {"part": "ab"[i % 2]}} for i in range(n)]  # fmt: skip
        (folder / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
        order = list(range(n))
        rng.shuffle(order)
        said = ["A", "B", "C", "no idea"]
        lines = [{"qid": f"q{i:04d}", "answer": rng.choice(said)} for i in order]
        (folder / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
        bench = f"jsonl:{folder / 'bench.jsonl'}"
        run = import_file(folder / "preds.jsonl", bench, model="m", db=str(folder / "s.db"),
                          field_map=FIELDS, by=["part"], bootstrap=200)  # fmt: skip
        whole, groups = made[-1]
        assert whole.answers.n_samples == n
        held.append(_objects((whole.answers, [g.answers for g in groups["part"].values()])))
        scored = score_file(folder / "preds.jsonl", bench, field_map=FIELDS, by=["part"],
                            model="m", bootstrap=200)  # fmt: skip
        assert _figures(run.results) == _figures(scored.results)
    assert held[1] - held[0] < 50, held  # a dict of the ids would be 540 more
