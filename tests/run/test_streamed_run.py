"""A run of more than one chunk holds one chunk of samples, not the run's (issue 35).

Its data is read once to be counted, checked and fingerprinted, each chunk kept as it is read,
then given again a chunk at a time for each model and the judges (`lmmprobe.data.StreamedLoad`;
read from the source again where the chunks cannot be kept). Here the chunk is made small (the module
constant, as a million-row run meets it) and the run is compared with the same run held whole:
the same requests and keys (a store written by a whole run answers it all), the same stored
samples and rows, the same rejected rows, and a strict run's error before anything is asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import PngWriter
from tests.live_objects import alive, objects_made_since
from tests.run.fakes import RecordingModel

import lmmprobe.run.runner as runner
from lmmprobe import evaluate
from lmmprobe.api import judge_stored
from lmmprobe.data import (
    SOURCES,
    DataError,
    SampleStream,
    StreamedLoad,
    iter_source,
    streaming,
)
from lmmprobe.judge.dry_run import plan_judges, plan_stored_judges
from lmmprobe.models.base import MODELS
from lmmprobe.run.dry_run import plan_run
from lmmprobe.schema import JudgeConfig, Request, Response, RunSpec, Sample

N = 45
CHUNK = 10
BAD = (7, 23)
"""Rows that are invalid (no question): rejected, counted, named, as a whole load does."""


def _rows(tmp: Path, write_png: PngWriter, *, bad: Sequence[int] = BAD) -> Path:
    """N single-choice rows, every fifth with an image file, two invalid, one shared question."""
    lines = []
    for i in range(N):
        images = []
        if i % 5 == 0:
            images = [str(write_png(tmp / f"im{i}.png", color=(i, 2 * i, 3 * i)))]
        row: dict[str, Any] = {
            "id": f"q{i:02d}", "images": images, "question": f"Which animal is item{i % 40}?",
            "choices": ["cat", "dog"], "answer": i % 2, "metadata": {"subtask": f"s{i % 3}"},
        }  # fmt: skip
        if i in bad:
            del row["question"]
        lines.append(json.dumps(row) + "\n")
    path = tmp / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


class _Counting(RecordingModel):
    """Answers by key, noting the most `Sample` objects alive at any of its calls."""

    backend = "countsamples"
    most = 0
    before = 0
    change: tuple[Path, str, str] | None = None
    """(file, old, new): replaced in the file on the first call (the data changes mid-run)."""

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        _Counting.most = max(_Counting.most, alive(Sample) - _Counting.before)
        if _Counting.change is not None:
            path, old, new = _Counting.change
            path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
            _Counting.change = None
        return super().generate(requests)

    @staticmethod
    def reset() -> None:
        """Count from now: the samples alive now (held by an earlier run's result) aside."""
        _Counting.before = alive(Sample)
        _Counting.most = 0


@pytest.fixture
def counting() -> Iterator[type[_Counting]]:
    MODELS.register(_Counting.backend)(
        # A judge (``countsamples:j``) names option A: a verdict the choice protocol reads.
        # Batches of 16: each call collects garbage and scans the objects made in the test.
        lambda target, options: _Counting(
            name=target or "c", batch=16, text="A" if target == "j" else None
        )
    )
    # Only the test's own objects are scanned: in a worker that has run much of the suite a
    # scan of every object took seconds, and the dry-run test below minutes.
    with objects_made_since():
        _Counting.reset()
        yield _Counting
    _Counting.change = None
    MODELS.unregister(_Counting.backend)


def _table(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as c:
        return c.execute(sql).fetchall()


def _stored(db: Path, run_id: str) -> dict[str, Any]:
    """What a run stored: its samples, score rows (in order) and the responses' keys."""
    return {
        "samples": _table(
            db, f"SELECT sample_id, question, sample, row_metadata FROM samples "
            f"WHERE run_id = '{run_id}' ORDER BY sample_id",
        ),
        "scores": _table(
            db, f"SELECT model, sample_id, repeat, key, prediction, correct, error_type "
            f"FROM scores WHERE run_id = '{run_id}' ORDER BY rowid",
        ),
        "keys": _table(db, "SELECT key, model FROM responses ORDER BY key"),
    }  # fmt: skip


def _results(out: Path) -> dict[str, Any]:
    res: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for key in ("run_id", "finished_at", "store"):
        res.pop(key)
    res["manifest"].pop("created_at", None)
    res["manifest"].pop("rows_scored_at")  # a moment, not a figure
    for key in ("out", "db"):
        res["spec"].pop(key)
    for model in res["models"].values():
        model["stats"].pop("mean_latency_s")
    return res


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "no-spill"])
def test_a_run_of_many_chunks_holds_a_chunk_of_samples_and_stores_what_a_whole_run_does(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
    kept: bool,
) -> None:
    """Its first read's chunks kept, or read again where they cannot be (no temporary folder)."""
    data = _rows(tmp_path, write_png)
    spec = dict(models=["countsamples:a", "countsamples:b"], data=str(data), repeats=2,
                by=["subtask"])  # fmt: skip
    whole = evaluate(**spec, db=str(tmp_path / "whole.db"), out=str(tmp_path / "whole"))
    held_whole = counting.most
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    if not kept:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    counting.reset()
    chunked = evaluate(**spec, db=str(tmp_path / "chunked.db"), out=str(tmp_path / "chunked"))
    # Every sample alive while the run held its data whole; a chunk's (and no more) now.
    assert held_whole >= N - len(BAD)
    assert counting.most <= CHUNK
    # The same figures, manifest (the data's fingerprint and count), rejected rows...
    assert _results(tmp_path / "chunked") == _results(tmp_path / "whole")
    assert chunked.outcome.record().invalid == len(BAD)
    assert [str(p) for p in chunked.outcome.load.problems] == [
        f"{data}:{i + 1}: question: missing required field" for i in BAD
    ]
    assert chunked.outcome.load.problems == whole.outcome.load.problems
    # ... and the same samples, rows and request keys stored.
    assert _stored(tmp_path / "chunked.db", chunked.run_id) == _stored(
        tmp_path / "whole.db", whole.run_id
    )


def test_a_store_written_by_a_whole_run_answers_a_run_of_many_chunks(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The request keys of samples read again by chunk are those of the samples held whole."""
    data = _rows(tmp_path, write_png)
    spec = dict(models=["countsamples:a"], data=str(data), repeats=2)
    db = tmp_path / "s.db"
    evaluate(**spec, db=str(db), out=str(tmp_path / "whole"))
    asked = _table(db, "SELECT COUNT(*) FROM responses")[0][0]
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    again = evaluate(**spec, db=str(db), out=str(tmp_path / "again"))
    stats = again.outcome.models[0].stats()
    assert (stats["called"], stats["cached"], stats["requests"]) == (0, asked, asked)
    assert _table(db, "SELECT COUNT(*) FROM responses")[0][0] == asked


def test_a_strict_run_of_many_chunks_stops_at_the_bad_row_before_asking_anything(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _rows(tmp_path, write_png, bad=(33,))  # in the fourth chunk
    spec = dict(models=["countsamples:a"], data=str(data), strict=True)
    with pytest.raises(DataError) as whole:
        evaluate(**spec, db=str(tmp_path / "whole.db"), out=str(tmp_path / "whole"))
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    db = tmp_path / "chunked.db"
    with pytest.raises(DataError) as chunked:
        evaluate(**spec, db=str(db), out=str(tmp_path / "chunked"))
    assert str(chunked.value) == str(whole.value) == f"{data}:34: question: missing required field"
    assert not db.exists() or _table(db, "SELECT COUNT(*) FROM runs") == [(0,)]
    assert counting.most == 0  # never asked


_QUESTIONS: list[str] = []
"""What the ``mutable`` source yields (a source without a file, whose rows a test changes)."""


def _mutable(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    def rows(stream: SampleStream) -> Iterator[Sample]:
        for i, q in enumerate(list(_QUESTIONS)):
            yield Sample(id=f"m{i:02d}", question=q, choices=["cat", "dog"], answer=0)

    return SampleStream("mutable", rows)


@pytest.mark.parametrize("kept", [True, False], ids=["kept", "no-spill"])
def test_data_changed_while_a_run_goes_on_is_asked_as_first_read_or_refused_naming_the_samples(
    tmp_path: Path, counting: type[_Counting], monkeypatch: pytest.MonkeyPatch, kept: bool
) -> None:
    """The run asks the samples its manifest fingerprinted, or refuses.

    The first read's chunks are kept (`lmmprobe.data.spill`): a change to the data after it
    is not seen, every model is asked the samples first read. Where they cannot be kept (no
    temporary folder, a full disk), the data is read again for each model, and a chunk that
    changed is refused, as every run did before the chunks were kept.
    """
    SOURCES.register("mutable")(streaming(_mutable))
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    if not kept:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    _QUESTIONS[:] = [f"Which animal is item{i}?" for i in range(N)]

    db = tmp_path / "s.db"
    spec = dict(models=["countsamples:a", "countsamples:b"], data="mutable", db=str(db),
                out=str(tmp_path / "o"))  # fmt: skip
    try:
        original = counting.generate

        # The first model's calls change a question of the third chunk (sample 25).
        def changing(self: _Counting, requests: Sequence[Request]) -> list[Response]:
            _QUESTIONS[24] = "Which bird is item24?"
            return original(self, requests)

        monkeypatch.setattr(_Counting, "generate", changing)
        if kept:
            done = evaluate(**spec)
        else:
            with pytest.raises(DataError) as err:
                evaluate(**spec)
    finally:
        SOURCES.unregister("mutable")
    if kept:
        assert done.outcome.status == "complete"
        assert _table(db, "SELECT model, COUNT(*) FROM scores GROUP BY model") == [
            ("countsamples:a", N),
            ("countsamples:b", N),
        ]
        assert _table(db, "SELECT question FROM samples WHERE sample_id = 'm24'") == [
            ("Which animal is item24?",)
        ]
        return
    # The first model read its chunks before the change went past them: the second model's
    # third chunk is the first read again that differs.
    assert str(err.value) == (
        "mutable changed while the run read it: samples 21-30 are not those it read first "
        "(of 45); run it again once the data stays as it is"
    )
    assert _table(db, "SELECT status FROM runs") == [("failed",)]
    # The second model's chunks asked before it are stored, whole; nothing of the changed one.
    assert _table(db, "SELECT model, COUNT(*) FROM scores GROUP BY model") == [
        ("countsamples:a", N),
        ("countsamples:b", 2 * CHUNK),
    ]


def _open_spills() -> int:
    """Removed files in the temporary folder this process holds open: kept chunks among them.

    `lmmprobe.data.spill` keeps a run's chunks in an anonymous file (`tempfile.TemporaryFile`:
    on Linux made without a name, shown as ``/tmp/#123 (deleted)``).
    """
    folder = os.path.realpath(tempfile.gettempdir())
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # closed since it was listed
            link = os.readlink(fd)
            count += link.startswith(folder + os.sep) and link.endswith(" (deleted)")
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files by /proc")
def test_a_judged_run_of_many_chunks_reads_its_data_once_and_closes_what_it_kept(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two models and a judge: the data file is read once, gone after that changes nothing."""
    data = _rows(tmp_path, write_png)
    spec = dict(
        models=["countsamples:a", "countsamples:b"], data=str(data), repeats=2,
        judge=JudgeConfig(judges=["countsamples:j"], when="always"),
    )  # fmt: skip
    evaluate(**spec, db=str(tmp_path / "whole.db"), out=str(tmp_path / "whole"))
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    original = counting.generate
    kept_while_asked: list[int] = []

    def removing(self: _Counting, requests: Sequence[Request]) -> list[Response]:
        # Once the run has asked its first batch, the data file is gone: it is never read again.
        data.unlink(missing_ok=True)
        kept_while_asked.append(_open_spills())
        return original(self, requests)

    monkeypatch.setattr(_Counting, "generate", removing)
    before = _open_spills()
    chunked = evaluate(**spec, db=str(tmp_path / "chunked.db"), out=str(tmp_path / "chunked"))
    assert not data.exists()
    assert _results(tmp_path / "chunked") == _results(tmp_path / "whole")
    assert chunked.judging is not None
    assert chunked.judging.results()["countsamples:a"]["decided"]["judge"] == 2 * (N - len(BAD))
    # The chunks were kept on disk while the run asked them, and let go when it was done.
    assert min(kept_while_asked) > before
    assert _open_spills() == before
    # The outcome's load stays usable: it reads its data again (gone now: said in one line).
    assert isinstance(chunked.outcome.load, StreamedLoad)
    with pytest.raises(DataError, match="not found"):
        list(chunked.outcome.load.chunks())


def test_a_dialogue_run_of_many_chunks_is_held_whole_and_gives_the_one_chunk_results(
    tmp_path: Path, counting: type[_Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = []
    for d in range(15):
        for rnd in range(3):
            rows.append(json.dumps({
                "id": f"d{d}r{rnd}", "images": [], "question": f"Round {rnd} of {d}?",
                "choices": ["yes", "no"], "answer": rnd % 2,
                "metadata": {"dialogue_id": f"d{d}", "round": rnd},
            }) + "\n")  # fmt: skip
    data = tmp_path / "dialogues.jsonl"
    data.write_text("".join(rows), encoding="utf-8")
    spec = dict(models=["countsamples:a"], data=str(data))
    whole = evaluate(**spec, db=str(tmp_path / "whole.db"), out=str(tmp_path / "whole"))
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    chunked = evaluate(**spec, db=str(tmp_path / "chunked.db"), out=str(tmp_path / "chunked"))
    assert _results(tmp_path / "chunked") == _results(tmp_path / "whole")
    assert _stored(tmp_path / "chunked.db", chunked.run_id) == _stored(
        tmp_path / "whole.db", whole.run_id
    )
    shutil.rmtree(tmp_path / "whole")


def _judgements(db: Path, run_id: str) -> list[tuple[Any, ...]]:
    return _table(
        db, "SELECT model, sample_id, repeat, judge, protocol, decided_by, key, value, reading, "
        f"reason FROM judgements WHERE run_id = '{run_id}' ORDER BY model, sample_id, repeat, "
        "judge, attempt",
    )  # fmt: skip


def test_judging_a_run_of_many_chunks_holds_a_chunk_of_samples_and_judges_as_a_whole_run(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The judging step reads the run's data again a chunk at a time, as the run asked it."""
    data = _rows(tmp_path, write_png)
    spec = dict(
        models=["countsamples:a", "countsamples:b"], data=str(data), repeats=2,
        judge=JudgeConfig(judges=["countsamples:j"], when="always"),
    )  # fmt: skip
    whole = evaluate(**spec, db=str(tmp_path / "whole.db"), out=str(tmp_path / "whole"))
    held_whole = counting.most
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    counting.reset()
    chunked = evaluate(**spec, db=str(tmp_path / "chunked.db"), out=str(tmp_path / "chunked"))
    # The judge's calls (counted as the models' are) saw a chunk of samples alive, no more.
    assert held_whole >= N - len(BAD)
    assert counting.most <= CHUNK
    assert isinstance(chunked.outcome.load, StreamedLoad)
    assert chunked.judging is not None and whole.judging is not None
    assert chunked.judging.results() == whole.judging.results()
    assert _results(tmp_path / "chunked") == _results(tmp_path / "whole")
    verdicts = _judgements(tmp_path / "chunked.db", chunked.run_id)
    assert len(verdicts) == 2 * 2 * (N - len(BAD))
    assert verdicts == _judgements(tmp_path / "whole.db", whole.run_id)


def test_judging_a_stored_run_of_many_chunks_holds_a_chunk_of_samples(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``lmmprobe judge RUN`` reads the recorded samples a page at a time, as judging needs."""
    data = _rows(tmp_path, write_png)
    db = tmp_path / "s.db"
    run = evaluate(models=["countsamples:a"], data=str(data), repeats=2, db=str(db),
                   out=str(tmp_path / "run"))  # fmt: skip
    config = JudgeConfig(judges=["countsamples:j"], when="always", sees_image=True)
    other = tmp_path / "other.db"
    shutil.copy(db, other)  # the same stored run, judged apart: no reply shared
    plan_whole = plan_stored_judges(run.run_id, config, db=db)
    counting.reset()
    whole = judge_stored(run.run_id, config, db=db, out=tmp_path / "whole")
    held_whole = counting.most
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    # Its dry run counts the same calls, read a chunk at a time.
    assert plan_stored_judges(run.run_id, config, db=other) == plan_whole
    counting.reset()
    chunked = judge_stored(run.run_id, config, db=other, out=tmp_path / "chunked")
    assert held_whole >= N - len(BAD)
    assert counting.most <= CHUNK
    assert chunked.judging is not None and whole.judging is not None
    assert chunked.judging.results() == whole.judging.results()
    assert whole.judging.results()["countsamples:a"]["decided"]["judge"] == 2 * (N - len(BAD))
    assert _judgements(other, chunked.run_id) == _judgements(db, whole.run_id)
    assert _stored(other, chunked.run_id)["samples"] == _stored(db, whole.run_id)["samples"]


_MOST_READING = [0]
"""The most `Sample`s alive while the ``countedrows`` source read a row."""


def _counted_rows(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """The JSONL rows of file `target`, noting the `Sample`s alive as each is read."""
    inner = iter_source(str(target), strict=strict, limit=limit)

    def rows(stream: SampleStream) -> Iterator[Sample]:
        for i, sample in enumerate(inner):
            if i % 5 == 4:  # every fifth row: the last of each half chunk is among them
                _MOST_READING[0] = max(_MOST_READING[0], alive(Sample))
            yield sample
        stream.invalid, stream.problems = inner.invalid, inner.problems

    return SampleStream(str(target), rows)


def test_a_dry_run_of_many_chunks_counts_what_a_whole_one_does_holding_a_chunk(
    tmp_path: Path,
    write_png: PngWriter,
    counting: type[_Counting],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run --dry-run`` (with a judge too) plans a chunk at a time: the same counts."""
    data = _rows(tmp_path, write_png)
    db = tmp_path / "s.db"
    # Half the answers stored: some requests are found, the others planned to be sent.
    evaluate(models=["countsamples:a"], data=str(data), repeats=1, db=str(db),
             out=str(tmp_path / "run"))  # fmt: skip
    SOURCES.register("countedrows")(streaming(_counted_rows))
    try:
        spec = RunSpec(
            models=["countsamples:a", "countsamples:b"], data=f"countedrows:{data}", repeats=2,
            db=str(db), judge=JudgeConfig(judges=["countsamples:j"], when="always"),
        )  # fmt: skip
        before = alive(Sample)
        _MOST_READING[0] = 0
        whole = (plan_run(spec), plan_judges(spec))
        held_whole = _MOST_READING[0] - before
        monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
        _MOST_READING[0] = 0
        chunked = (plan_run(spec), plan_judges(spec))
        held_chunked = _MOST_READING[0] - before
    finally:
        SOURCES.unregister("countedrows")
    assert held_whole > 3 * CHUNK  # every sample (counted every fifth row)
    # The chunk being read, and at most one sample of the chunk before (the last a loop
    # named): `enumerate` once kept the whole previous chunk alive while the next was read.
    assert held_chunked <= CHUNK + 1
    assert chunked == whole
    # Rows sharing a question share requests: 59 distinct, 39 answered by the first run.
    assert [(p.requests, p.stored) for p in whole[0]] == [(59, 39), (59, 0)]
