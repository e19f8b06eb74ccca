"""A run larger than one chunk gives the results of the same run done as one chunk.

The runner and the judging step work through a run `CHUNK_SAMPLES` samples (rows) at a time:
plan, answer, score, store, drop. Here the chunk is made small (the module constants, as a
large run would meet them) and every figure, count and verdict of results.json is compared
with the same run done in one chunk: with repeats, two models, two judges (agreement figures),
requests two samples share across chunks, and a run interrupted mid-way and resumed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.choice_rows import CHOICE_ASK
from tests.console import lmmprobe
from tests.run.fakes import RecordingModel

import lmmprobe.judge.step as judge_step
import lmmprobe.run.runner as runner
from lmmprobe import evaluate
from lmmprobe.models.base import MODELS
from lmmprobe.schema import Request, Response
from lmmprobe.testing.openai_server import FakeOpenAIServer

N = 45
CHUNK = 10
SHARED = 40
"""Rows from this one on ask what earlier rows ask (same question and options): their
requests are answered in an earlier chunk and must be read back, not asked or counted again."""


def _rows(path: Path) -> Path:
    lines = []
    for i in range(N):
        item = i - SHARED if i >= SHARED else i  # q40.. ask what q0.. asked
        row = {"id": f"q{i:02d}", "images": [], "question": f"Which animal is item{item}?",
               "choices": ["cat", "dog"], "answer": i % 2, "metadata": {"subtask": f"s{i % 3}"}}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _answers() -> list[tuple[str, str]]:
    # Every third answer names no option: the rules cannot read it and the judges are asked.
    return [
        (f"Which animal is item{i}?", f"unsure about item{i}" if i % 3 == 0 else "(B)")
        for i in range(SHARED)
    ]


def _figures(path: Path, *, resumed: bool = False) -> dict[str, Any]:
    """results.json without what names the run (its id, folder, time) or was timed (latency),
    and, for a run resumed from the store, without the counts of what was asked now rather
    than read back."""
    res = json.loads((path / "results.json").read_text(encoding="utf-8"))
    for key in ("run_id", "finished_at", "store"):
        res.pop(key)
    res["manifest"].pop("created_at", None)
    res["manifest"].pop("rows_scored_at")  # a moment, not a figure
    for key in ("out", "db"):
        res["spec"].pop(key)
    for model in res["models"].values():
        model["stats"].pop("mean_latency_s")
    if resumed:
        for model in res["models"].values():
            model["stats"].pop("called")
            model["stats"].pop("cached")
            for calls in ((model.get("judge") or {}).get("calls") or {}).values():
                calls.pop("called")
                calls.pop("cached")
    figures: dict[str, Any] = res
    return figures


@pytest.fixture
def chunks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Runs and judging in chunks of `CHUNK` samples (rows) while the test sets it."""
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", CHUNK)
    monkeypatch.setattr(judge_step, "CHUNK_SAMPLES", CHUNK)
    yield


def _stored_rows(db: Path, run_id: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as c:
        return c.execute(
            "SELECT model, sample_id, repeat, key, prediction, correct, error_type FROM scores "
            "WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        ).fetchall()


def test_a_run_of_several_chunks_gives_the_one_chunk_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _rows(tmp_path / "rows.jsonl")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    table = [(f"@judge-b {CHOICE_ASK}", "B"), (CHOICE_ASK, "A"), *_answers()]
    done: dict[str, Any] = {}
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        for name, size in (("whole", runner.CHUNK_SAMPLES), ("chunked", CHUNK)):
            monkeypatch.setattr(runner, "CHUNK_SAMPLES", size)
            monkeypatch.setattr(judge_step, "CHUNK_SAMPLES", size)
            server.reset_stats()
            ev = evaluate(
                models=["first", f"openai:fake-vlm@{url}"], data=str(data),
                db=str(tmp_path / name / "s.db"), out=str(tmp_path / name), repeats=3,
                by=["subtask"], judge={"judges": [f"openai:judge-a@{url}", f"openai:judge-b@{url}"]},
            )  # fmt: skip
            done[name] = (ev, server.requests_total)
    (whole, whole_calls), (chunked, chunked_calls) = done["whole"], done["chunked"]
    assert _figures(tmp_path / "chunked") == _figures(tmp_path / "whole")
    # Each distinct request was sent once, whatever the chunk it first came up in.
    assert chunked_calls == whole_calls
    model_spec = f"openai:fake-vlm@{url}"
    model = chunked.results.models[model_spec]
    assert model.judge is not None and model.judge.agreement  # two judges: figures exist
    # q40.. ask what q00.. asked in the first chunk: read back, not asked or counted again.
    rows = _stored_rows(tmp_path / "chunked" / "s.db", chunked.run_id)
    first = {(r[0], r[1]): r[3] for r in rows if r[2] == 0}  # repeat 0: options unshuffled
    assert all(
        first[(m, f"q{i:02d}")] == first[(m, f"q{i - SHARED:02d}")]
        for m in ("first", model_spec)
        for i in range(SHARED, N)
    )
    assert model.stats.requests == len({r[3] for r in rows if r[0] == model_spec})
    # The same rows stored, in the same order.
    assert _stored_rows(tmp_path / "chunked" / "s.db", chunked.run_id) == _stored_rows(
        tmp_path / "whole" / "s.db", whole.run_id
    )


class _Bars:
    """A progress sink noting each bar it is asked to open (label, total, cached)."""

    def __init__(self, bars: list[tuple[str, int, int]]) -> None:
        self.bars = bars

    def start(self, model: str, total: int, cached: int) -> None:
        self.bars.append((model, total, cached))

    def advance(self, done: int, errors: int) -> None:
        pass

    def finish(self) -> None:
        pass


class _StopAfter(RecordingModel):
    """Answers by key, and stops the run (Ctrl-C) on the call after `STOP_AT` requests."""

    backend = "stopafter"
    STOP_AT: int | None = None

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        if self.STOP_AT is not None and len(self.calls) >= self.STOP_AT:
            raise KeyboardInterrupt
        return super().generate(requests)


@pytest.fixture
def stop_after() -> Iterator[type[_StopAfter]]:
    MODELS.register(_StopAfter.backend)(lambda target, options: _StopAfter(name="stop", batch=4))
    yield _StopAfter
    _StopAfter.STOP_AT = None
    MODELS.unregister(_StopAfter.backend)


def test_a_chunked_run_interrupted_mid_way_resumes_to_the_one_chunk_results(
    tmp_path: Path, chunks: None, stop_after: type[_StopAfter], monkeypatch: pytest.MonkeyPatch
) -> None:
    data, db = _rows(tmp_path / "rows.jsonl"), tmp_path / "run.db"
    spec = dict(models=["stopafter"], data=str(data), db=str(db), repeats=2, by=["subtask"])
    stop_after.STOP_AT = 50  # after two chunks at least (up to 20 requests a chunk)
    with pytest.raises(KeyboardInterrupt):
        evaluate(**spec, out=str(tmp_path / "stopped"))
    with sqlite3.connect(db) as c:
        (stopped_id, status) = c.execute("SELECT id, status FROM runs").fetchone()
        (answered,) = c.execute("SELECT COUNT(*) FROM responses").fetchone()
    assert status == "interrupted"
    # The chunks scored before Ctrl-C are stored, whole; every answer so far is.
    stored = len(_stored_rows(db, stopped_id))
    assert 0 < stored < N * 2 and stored % (CHUNK * 2) == 0
    assert stop_after.STOP_AT <= answered < stop_after.STOP_AT + 4  # batches of 4
    stop_after.STOP_AT = None
    bars: list[tuple[str, int, int]] = []
    resumed = evaluate(**spec, out=str(tmp_path / "resumed"), progress=_Bars(bars))
    # A bar per chunk, named by its samples; those answered before Ctrl-C read back.
    assert [b[0] for b in bars] == [
        f"stopafter (samples {a}-{min(a + CHUNK - 1, N)} of {N})" for a in range(1, N, CHUNK)
    ]
    assert sum(b[2] for b in bars) == answered
    assert resumed.outcome.models[0].stats()["cached"] == answered
    monkeypatch.setattr(runner, "CHUNK_SAMPLES", 10_000)
    whole = evaluate(**{**spec, "db": str(tmp_path / "whole.db")}, out=str(tmp_path / "whole"))
    assert _figures(tmp_path / "resumed", resumed=True) == _figures(
        tmp_path / "whole", resumed=True
    )
    assert (
        whole.results.models["stopafter"].stats.called
        == resumed.results.models["stopafter"].stats.requests
    )


def test_a_by_key_no_stored_row_has_is_named_from_the_stored_rows(tmp_path: Path) -> None:
    """``--by`` warns of a key no row has, from the run's stored rows (a run keeps no Scores)."""
    data = _rows(tmp_path / "rows.jsonl")
    done = lmmprobe(
        "run", "--model", "first", "--data", data, "--by", "subtask", "--by", "level",
        "--db", tmp_path / "db", "--out", tmp_path / "o", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert warned == [
        "warning: --by level: no row has the metadata key 'level', so every row is under "
        '"(missing)"; metadata keys here: subtask'
    ]


def test_a_by_value_written_missing_shares_the_group_of_rows_lacking_the_key(
    tmp_path: Path,
) -> None:
    """A row whose ``--by`` value is the text "(missing)" (alone or in a list) shares the group
    of the rows lacking the key: the run stopped with "rows said to come in sample-id order
    came out of that order" (re-test 21 review, h19b), the group's rows counted in two parts."""
    values: list[Any] = ["(missing)", None, ["(missing)", "x"], "x"]  # None: key left out
    lines = []
    for i in range(24):
        value = values[i % 4]
        meta = {} if value is None else {"level": value}
        row = {"id": f"q{i}", "images": [], "question": f"Which animal is item{i}?",
               "choices": ["cat", "dog"], "answer": i % 2, "metadata": meta}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    (tmp_path / "rows.jsonl").write_text("".join(lines), encoding="utf-8")
    done = lmmprobe(
        "run", "--model", "first", "--data", tmp_path / "rows.jsonl", "--by", "level",
        "--db", tmp_path / "db", "--out", tmp_path / "o", "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    res = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    groups = res["models"]["first"]["breakdown"]["level"]
    # Every row but the "x" ones: 6 "(missing)", 6 lacking the key, 6 with both in a list.
    assert groups["(missing)"]["accuracy"]["n"] == 18
    assert groups["x"]["accuracy"]["n"] == 12
