"""Store schema 5: the samples and battles tables, the migration from 4, `Store.put_samples`."""

from __future__ import annotations

import base64
import io
import json
import sqlite3
from pathlib import Path

import pytest
from PIL import Image

from lmmprobe.cli.runs import list_runs
from lmmprobe.schema import ImageRef, Request, Response, Sample, Score
from lmmprobe.store import Store, StoreDamagedError, queries
from lmmprobe.store.layout import SCHEMA_VERSION


def _sample(i: int) -> Sample:
    return Sample(id=f"s{i}", question=f"q{i} é", choices=["a", "b"], answer=i % 2)


def _ask(store: Store, model: str, samples: list[Sample]) -> None:
    reqs = [
        Request(key=f"{model}-{s.id}", sample_id=s.id, method="generate", messages=[], prompt="p")
        for s in samples
    ]
    store.put_responses(model, reqs, [Response(key=r.key, text="(A)") for r in reqs])


def _recorded(db: Path, run_id: str) -> dict[str, dict]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT sample_id, sample FROM samples WHERE run_id = ?", (run_id,))
    out = {sid: json.loads(doc) for sid, doc in rows}
    conn.close()
    return out


def test_new_store_has_samples_battles_and_the_viewer_index(tmp_db: Path) -> None:
    Store(tmp_db).close()
    conn = sqlite3.connect(tmp_db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"samples", "images", "battles", "scores_by_sample"} <= names
    assert SCHEMA_VERSION >= 5
    conn.execute(
        "INSERT INTO battles (created_at, rater, run_id, sample_id, repeat, model_a, model_b, "
        "key_a, key_b, vote) VALUES (1, 'r', 'run', 's', 0, 'a', 'b', 'ka', 'kb', 'tie')"
    )
    with pytest.raises(sqlite3.IntegrityError):  # a vote is one of four
        conn.execute(
            "INSERT INTO battles (created_at, rater, run_id, sample_id, repeat, model_a, "
            "model_b, key_a, key_b, vote) VALUES (1, 'r', 'run', 's', 1, 'a', 'b', 'k', 'k', 'x')"
        )
    with pytest.raises(sqlite3.IntegrityError):  # one vote per rater and battle
        conn.execute(
            "INSERT INTO battles (created_at, rater, run_id, sample_id, repeat, model_a, "
            "model_b, key_a, key_b, vote) VALUES (2, 'r', 'run', 's', 0, 'a', 'b', 'k', 'k', 'a')"
        )
    conn.close()


def test_version_4_store_is_migrated_and_keeps_its_rows(tmp_db: Path) -> None:
    with Store(tmp_db) as store:
        store.create_run("old", {"data": "x", "models": ["m"]}, str(tmp_db.parent / "old"))
        _ask(store, "m", [_sample(0)])
    conn = sqlite3.connect(tmp_db)
    drop = (
        "DROP INDEX scores_by_sample",
        "DROP TABLE samples",
        "DROP TABLE images",
        "DROP TABLE battles",
    )
    for statement in drop:
        conn.execute(statement)
    conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with Store(tmp_db) as store:
        assert store.get_responses(["m-s0"])["m-s0"].text == "(A)"
        assert store.get_run("old")["id"] == "old"
    conn = sqlite3.connect(tmp_db)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    conn.close()
    assert {"samples", "images", "battles", "scores_by_sample"} <= names
    assert version == (str(SCHEMA_VERSION),)


def test_samples_are_recorded_with_their_first_answers(tmp_db: Path) -> None:
    samples = [_sample(i) for i in range(4)]
    with Store(tmp_db) as store:
        store.create_run("r", {"data": "x", "models": ["m"]}, str(tmp_db.parent / "r"))
        store.put_samples("r", samples)
        assert _recorded(tmp_db, "r") == {}  # nothing written before an answer
        _ask(store, "m", samples[:2])
        assert sorted(_recorded(tmp_db, "r")) == ["s0", "s1"]
        # The rest came from the store (no new response): recorded with the run's scores.
        store.put_scores(
            "r",
            [
                Score(model="m", sample_id=s.id, repeat=0, key=f"m-{s.id}", stage="mark",
                      gold=s.answer, gold_text=s.gold_text)
                for s in samples
            ],
        )  # fmt: skip
    got = _recorded(tmp_db, "r")
    assert sorted(got) == ["s0", "s1", "s2", "s3"]
    assert got["s0"]["question"] == "q0 é" and got["s3"]["answer"] == 1


def test_a_run_stopped_early_records_only_the_samples_it_asked(tmp_db: Path) -> None:
    with Store(tmp_db) as store:
        store.create_run("r", {"data": "x", "models": ["m"]}, str(tmp_db.parent / "r"))
        store.put_samples("r", [_sample(i) for i in range(5)])
        _ask(store, "m", [_sample(3)])
    assert list(_recorded(tmp_db, "r")) == ["s3"]


def test_image_references_are_recorded_as_a_viewer_can_serve_them(
    tmp_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Image.new("RGB", (4, 4)).save(tmp_path / "rel.png")
    sample = Sample(
        id="img",
        question="q",
        choices=["a", "b"],
        answer=0,
        images=[
            ImageRef.from_path("rel.png"),
            ImageRef.from_base64("aGVsbG8="),
            ImageRef(renderer="demo-shapes", recipe={"b": 1, "a": 2}),
            ImageRef.from_pil(Image.new("RGB", (3, 2), (255, 0, 0))),
        ],
    )
    with Store(tmp_db) as store:
        store.create_run("r", {"data": "x", "models": ["m"]}, str(tmp_path / "r"))
        store.put_samples("r", [sample])
        _ask(store, "m", [sample])
    images = _recorded(tmp_db, "r")["img"]["images"]
    # A file's content hash as its request's key hashed it (a viewer refuses a changed file).
    assert images[0] == {
        "path": str(tmp_path / "rel.png"),
        "sha256": sample.images[0].content_hash(),
    }
    assert images[1] == {"image": sample.images[1].content_hash()}
    assert images[2] == {"renderer": "demo-shapes", "recipe": {"a": 2, "b": 1}}
    assert images[3] == {"image": sample.images[3].content_hash()}
    kept = _kept_images(tmp_db)
    assert kept[images[1]["image"]] == b"hello"
    with Image.open(io.BytesIO(kept[images[3]["image"]])) as im:
        assert im.size == (3, 2) and im.format == "PNG"


def _kept_images(db: Path) -> dict[str, bytes]:
    conn = sqlite3.connect(db)
    out = {h: bytes(d) for h, d in conn.execute("SELECT hash, data FROM images")}
    conn.close()
    return out


def test_image_bytes_are_kept_once_however_many_runs_ask_them(tmp_db: Path) -> None:
    # Two runs of the same data (one in-memory picture, one base64) keep each picture once;
    # the samples table holds references and the question in a column of its own.
    picture = ImageRef.from_pil(Image.new("RGB", (64, 64), (0, 90, 0)))
    data = base64.b64encode(b"not really a png").decode()
    samples = [
        Sample(id=f"s{i}", question=f"q{i}", choices=["a", "b"], answer=0,
               images=[picture, ImageRef.from_base64(data)])
        for i in range(3)
    ]  # fmt: skip
    with Store(tmp_db) as store:
        for run in ("r1", "r2"):
            store.create_run(run, {"data": "x", "models": ["m"]}, str(tmp_db.parent / run))
            store.put_samples(run, samples)
            _ask(store, f"m-{run}", samples)
            store.update_run(run, status="done")
    assert len(_kept_images(tmp_db)) == 2
    conn = sqlite3.connect(tmp_db)
    rows = conn.execute("SELECT run_id, sample_id, question, length(sample) FROM samples")
    got = sorted(rows)
    conn.close()
    assert [r[:3] for r in got] == [(r, f"s{i}", f"q{i}") for r in ("r1", "r2") for i in range(3)]
    assert all(size < 500 for *_, size in got)  # no image bytes inline


def test_a_finished_run_leaves_nothing_pending(tmp_db: Path) -> None:
    # Samples of a run that ended before asking them are not written later under its id
    # when another run asks the same sample ids.
    with Store(tmp_db) as store:
        for run in ("old", "new"):
            store.create_run(run, {"data": "x", "models": ["m"]}, str(tmp_db.parent / run))
        store.put_samples("old", [_sample(0)])
        store.update_run("old", status="failed")
        store.put_samples("new", [_sample(0)])
        _ask(store, "m", [_sample(0)])
    assert _recorded(tmp_db, "old") == {}
    assert list(_recorded(tmp_db, "new")) == ["s0"]


_ACCURACY = {"value": 0.5, "low": 0.2, "high": 0.8, "n": 4}


def _older_runs(db: Path) -> None:
    """Runs as older lmmprobe versions (and hands) left them, in a version 4 store."""
    out = str(db.parent / "runs")
    with Store(db) as store:
        # Predictions imported before specs listed the models: the results name them.
        store.create_run("imported", {"data": "demo"}, out)
        metrics = {"accuracy": _ACCURACY}
        results = {"data": {"samples": 4}, "models": {"m": {"metrics": metrics}}}
        store.update_run("imported", status="complete", results=results)
        # Stopped before it had results: the sample count is the manifest's.
        spec = {"data": "demo", "models": ["a", "b"], "formulate": {"blind": True}}
        store.create_run("stopped", spec, out)
        store.update_run("stopped", status="interrupted", manifest={"data": {"samples": 7}})
        store.create_run("edited", {"data": "demo", "models": ["m"]}, out)
    conn = sqlite3.connect(db)
    # A results column edited by hand into something that is not JSON.
    conn.execute("UPDATE runs SET results = '{\"models\": ' WHERE id = 'edited'")
    for i, run_id in enumerate(("imported", "stopped", "edited")):
        conn.execute("UPDATE runs SET created_at = ? WHERE id = ?", (1_700_000_000 + i, run_id))
    for statement in (
        "DROP INDEX scores_by_sample",
        "DROP TABLE samples",
        "DROP TABLE images",
        "DROP TABLE battles",
    ):
        conn.execute(statement)
    conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def test_runs_of_a_version_4_store_read_alike_everywhere(tmp_db: Path) -> None:
    """`lmmprobe runs`, the viewer's listing and `Store` read older runs the same way.

    Models come from the spec, else the results; the sample count from the results, else the
    manifest; a column that is not JSON lists as missing figures, never as a crash.
    """
    _older_runs(tmp_db)
    with Store(tmp_db) as store:  # migrated on opening
        assert [r["id"] for r in store.list_runs()] == ["edited", "stopped", "imported"]
        summaries, total = list_runs(store)
    assert total == 3
    by_id = {s.id: s for s in summaries}
    assert (by_id["imported"].models, by_id["imported"].n) == (["m"], 4)
    assert by_id["imported"].accuracy == {"m": 0.5}
    assert (by_id["stopped"].models, by_id["stopped"].n) == (["a", "b"], 7)
    assert by_id["stopped"].setting == ["blind"]
    assert (by_id["edited"].models, by_id["edited"].n, by_id["edited"].accuracy) == (
        ["m"],
        None,
        {"m": None},
    )
    readers = queries.Readers(tmp_db)
    try:
        with readers.connection() as conn:
            rows = {r.id: r for r in queries.list_runs(conn)}
            found = queries.get_run(conn, "edited")
    finally:
        readers.close()
    assert {r: (rows[r].models, rows[r].n) for r in rows} == {
        s.id: (s.models, s.n) for s in summaries
    }
    assert rows["imported"].metrics == {"m": {"accuracy": _ACCURACY}}
    assert found is not None and found[1]["results"] == {}


def test_a_run_whose_column_is_not_json_is_refused_where_it_is_read_whole(tmp_db: Path) -> None:
    _older_runs(tmp_db)
    with Store(tmp_db) as store:
        assert store.get_run("stopped")["results"] is None  # empty, not damaged
        with pytest.raises(StoreDamagedError, match="run edited's results column does not hold"):
            store.get_run("edited")
