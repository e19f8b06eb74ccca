"""A judged run's rows are read with their verdicts chunk by chunk (issue 35: flat memory).

`Store.iter_score_rows` (exports, ``model_scores``, the judge step and the results path read
it) used to build a dict of every verdict of the whole run, every model's, before its first
row. The store here is made by the console script (a run of two models, integer and text
sample ids, two repeats, judged by two judges against the fake OpenAI server); its rows are
read with chunks of a few rows, so that a sample's repeats and a model's rows straddle chunk
ends, and must equal the whole-run reading row for row, verdict for verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe_with_key

import lmmprobe.store.sqlite as store_sqlite
from lmmprobe.store import Store
from lmmprobe.testing.openai_server import FakeOpenAIServer

CHOICE_ASK = "Say which option the answer chose"

# Integer ids (10 sorts before 9 as stored text), text ids; answers the rules read and not.
IDS: list[int | str] = [9, 10, 100, "a", "b-2", "Z"]


def _data(path: Path) -> Path:
    rows = [
        {"id": sid, "images": [], "question": f"Which animal is q{sid}?",
         "choices": ["cat", "dog"], "answer": 0}
        for sid in IDS
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _table() -> list[tuple[str, str]]:
    # The judge's prompt quotes the answer, so it is matched first: "A" for the feline ones.
    answers = [(f"Which animal is q{sid}?", "(A)" if i % 3 == 0 else "the feline one")
               for i, sid in enumerate(IDS)]  # fmt: skip
    return [(CHOICE_ASK, "A"), *answers]


def _whole_run_rows(store: Store, run_id: str, model: str | None = None) -> list[dict[str, Any]]:
    """The rows as the whole-run reading gave them: every verdict of the run in one dict."""
    judged = store.get_judgements(run_id)
    out = []
    for rec in store._score_rows(run_id, model):
        found = judged.get((rec["model"], rec["sample_id"], rec["repeat"]))
        if found:
            rec["judgements"] = [j.model_dump() for j in found]
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def judged_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    tmp = tmp_path_factory.mktemp("judged")
    data, db, out = _data(tmp / "rows.jsonl"), tmp / "db", tmp / "o"
    with FakeOpenAIServer(reply_table=_table()) as server:
        url = server.base_url
        proc = lmmprobe_with_key(
            "run", "-m", f"openai:fake-a@{url}", "-m", f"openai:fake-b@{url}", "--data", data,
            "-q", "--db", db, "--out", out, "--repeats", "2", "--judge", f"openai:judge-a@{url}",
            "--judge", f"openai:judge-b@{url}", "--judge-when", "always",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    run_id = json.loads((out / "results.json").read_text())["run_id"]
    yield db, run_id


@pytest.mark.parametrize("chunk", [1, 3, 5, 500])
def test_streamed_rows_equal_the_whole_run_reading(
    judged_store: tuple[Path, str], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, run_id = judged_store
    with Store(db, read_only=True) as store:
        expected = _whole_run_rows(store, run_id)
        models = store.run_models(run_id)
        by_model = {m: _whole_run_rows(store, run_id, m) for m in models}
        monkeypatch.setattr(store_sqlite, "_CHUNK", chunk)

        def refuse(*_: object, **__: object) -> None:
            raise AssertionError("the rows' reader read every verdict of the run at once")

        monkeypatch.setattr(Store, "get_judgements", refuse)
        got = list(store.iter_score_rows(run_id))
        got_by_model = {m: list(store.iter_score_rows(run_id, model=m)) for m in models}
    assert len(models) == 2 and len(expected) == 2 * 2 * len(IDS)
    # Integer ids are stored as text, sorted as SQLite sorts text ("10" before "9").
    assert {r["sample_id"] for r in expected} == {str(i) for i in IDS}
    # Every row judged, by both judges (and a rule where the rules read the answer).
    assert all(len(r["judgements"]) >= 2 for r in expected)
    assert got == expected
    assert got_by_model == by_model


def test_export_carries_each_rows_verdicts(judged_store: tuple[Path, str]) -> None:
    db, run_id = judged_store
    proc = lmmprobe_with_key("export", run_id, "--db", db)
    assert proc.returncode == 0, proc.stderr
    exported = [json.loads(line) for line in proc.stdout.splitlines()]
    with Store(db, read_only=True) as store:
        expected = _whole_run_rows(store, run_id)
    keyed = {(r["model"], r["sample_id"], r["repeat"]): r["judgements"] for r in exported}
    assert keyed == {(r["model"], r["sample_id"], r["repeat"]): r["judgements"] for r in expected}


@pytest.mark.parametrize("chunk", [1, 3, 500])
def test_the_judges_verdict_column_read_from_the_store_equals_the_scores(
    judged_store: tuple[Path, str], chunk: int
) -> None:
    # Issue 36, item 5: the headline reads the judges' verdict on the answers the rules could
    # not read from the stored judgements, chunk by chunk; it must be what the rows' Scores
    # give (`chunk_of_scores`), whatever the chunks' ends.
    from lmmprobe.schema.rows import chunk_of_scores
    from lmmprobe.store.rows import read_chunks

    db, run_id = judged_store
    with Store(db, read_only=True) as store:
        for model in store.run_models(run_id):
            read = [
                v for c in read_chunks(store.conn, run_id, model, chunk_rows=chunk)
                for v in c.judge_correct
            ]  # fmt: skip
            scores = store.model_scores(run_id, model)
            assert read == chunk_of_scores(scores).judge_correct
            # Set only on answers the rules could not read, and on some of them.
            assert all(
                v is None for v, s in zip(read, scores, strict=True) if s.stage != "unparsed"
            )
            assert True in read
