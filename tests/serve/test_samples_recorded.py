"""Runs record the samples they ask, and the app serves their images from that record only."""

from __future__ import annotations

import base64
import io
import json
import os
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

import lmmprobe
from lmmprobe.data import load_source
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.store import Store

from .conftest import Row, client, png_b64, write_run


def test_a_real_demo_run_records_every_sample_it_asked(demo_db: tuple[Path, str]) -> None:
    db, run_id = demo_db
    conn = sqlite3.connect(db)
    stored = dict(
        conn.execute("SELECT sample_id, sample FROM samples WHERE run_id = ?", (run_id,)).fetchall()
    )
    conn.close()
    asked = load_source("demo", limit=24).samples
    assert sorted(stored) == sorted(s.id for s in asked)
    for s in asked:
        doc = json.loads(stored[s.id])
        assert doc["question"] == s.question and doc["answer"] == s.answer
        assert doc["images"] == [
            {"renderer": ref.renderer, "recipe": ref.recipe} for ref in s.images
        ]


def test_recipe_images_are_drawn_and_served_as_png(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    sample_id = c.get(f"/api/runs/{run_id}/samples?limit=25").json()["rows"][0]["sample_id"]
    got = c.get(f"/images/{run_id}/{sample_id}/0")
    assert got.status_code == 200 and got.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(got.content)) as im:
        assert im.size[0] > 16


@pytest.mark.parametrize(
    "path",
    [
        "/images/{run}/..%2F..%2F..%2Fetc%2Fpasswd/0",
        "/images/{run}/%2Fetc%2Fpasswd/0",
        "/images/{run}/{sample}/1",
        "/images/{run}/{sample}/-1",
        "/images/{run}/{sample}/x",
        "/images/nope/{sample}/0",
        "/images/{run}/{sample}/0?path=/etc/passwd",
    ],
)
def test_only_recorded_images_are_served(demo: tuple[TestClient, str], path: str) -> None:
    c, run_id = demo
    sample_id = c.get(f"/api/runs/{run_id}/samples").json()["rows"][0]["sample_id"]
    url = path.format(run=run_id, sample=sample_id)
    got = c.get(url)
    if url.endswith("/0?path=/etc/passwd"):  # a query cannot change which image is served
        assert got.headers["content-type"] == "image/png"
        return
    assert got.status_code == 404
    assert "root:" not in got.text


def test_jsonl_images_are_recorded_absolute_and_served_as_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    Image.new("RGB", (64, 48), (10, 200, 10)).save(data / "green.jpg", quality=90)
    rows = [
        {"id": "file", "images": ["green.jpg"], "question": "Colour?", "choices": ["red", "green"],
         "answer": 1},
    ]  # fmt: skip
    (data / "set.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.chdir(tmp_path)
    ev = lmmprobe.evaluate(db="runs/l.db", data="data/set.jsonl", models=["first"], out="out")
    conn = sqlite3.connect(tmp_path / "runs/l.db")
    docs = {
        sid: json.loads(doc)
        for sid, doc in conn.execute(
            "SELECT sample_id, sample FROM samples WHERE run_id = ?", (ev.run_id,)
        )
    }
    conn.close()
    (file_ref,) = docs["file"]["images"]
    assert os.path.isabs(file_ref["path"]) and Path(file_ref["path"]) == data / "green.jpg"
    monkeypatch.chdir("/")  # the app finds the file wherever it runs
    with client(tmp_path / "runs/l.db") as c:
        jpg = c.get(f"/images/{ev.run_id}/file/0")
        assert jpg.headers["content-type"] == "image/jpeg"
        assert jpg.content == (data / "green.jpg").read_bytes()
        (data / "green.jpg").unlink()  # moved away after the run: a 404 that says so
        gone = c.get(f"/images/{ev.run_id}/file/0")
        assert gone.status_code == 404 and "cannot be read now" in gone.text
        assert str(data) not in gone.text  # the reason stays in the server's log


def test_base64_and_in_memory_images_are_kept_as_bytes_and_served(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    picture = Image.new("RGB", (30, 20), (0, 0, 255))
    samples = [
        Sample(
            id="b64",
            images=[ImageRef.from_base64(png_b64())],
            question="q",
            choices=["a", "b"],
            answer=0,
        ),
        Sample(
            id="mem",
            images=[ImageRef.from_pil(picture)],
            question="q",
            choices=["a", "b"],
            answer=0,
        ),
    ]
    with Store(db) as store:
        write_run(store, "r", ["m"], samples, [Row("m", s, "(A)", 0, True) for s in samples])
    with client(db) as c:
        assert c.get("/images/r/b64/0").content == base64.b64decode(png_b64())
        mem = c.get("/images/r/mem/0")
        assert mem.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(mem.content)) as im:
            assert im.size == (30, 20) and im.convert("RGB").getpixel((3, 3)) == (0, 0, 255)


def test_apex_runs_record_their_samples_and_pages_show_them(tmp_path: Path) -> None:
    from lmmprobe.apex.evaluation import evaluate_models
    from lmmprobe.models.base import load_model

    samples = [
        Sample(id=f"x{i}", question=f"Is it rotated? ({i})", choices=["yes", "no"], answer=i % 2,
               images=[ImageRef.from_pil(Image.new("RGB", (12, 8), (i * 40, 0, 0)))])
        for i in range(3)
    ]  # fmt: skip
    db = tmp_path / "apex.db"
    with Store(db) as store:
        _, run_id = evaluate_models(
            samples, {"first": load_model("first")}, store=store, answers=["yes", "no"], seed=0,
            n_boot=0, label="apex:test", out_dir=tmp_path / "out", data_fingerprint="f",
        )  # fmt: skip
    with client(db) as c:
        page = c.get(f"/runs/{run_id}/samples/x1")
        assert page.status_code == 200
        assert "Is it rotated? (1)" in page.text and "holds no copy" not in page.text
        got = c.get(f"/images/{run_id}/x1/0")
        assert got.status_code == 200 and got.headers["content-type"] == "image/png"
        with Image.open(io.BytesIO(got.content)) as im:
            assert im.size == (12, 8)


def test_the_prompt_sent_shows_every_turn_of_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real run with a system prompt, the in-context example and dialogue history: the sample
    # page rebuilds each request, checks its key against the stored answer's, and shows it all.
    data = tmp_path / "data"
    data.mkdir()
    Image.new("RGB", (16, 16), (10, 200, 10)).save(data / "g.png")
    rows = [
        {"id": "h", "images": ["g.png"], "question": "And its colour?", "choices": ["red", "green"],
         "answer": 1, "history": [{"role": "user", "content": "Look at this."},
                                  {"role": "assistant", "content": "I see a square."}]},
    ]  # fmt: skip
    (data / "set.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.chdir(tmp_path)
    formulate = {"system_prompt": "SYSTEM <b>rules</b>", "in_context_example": True}
    ev = lmmprobe.evaluate(db="runs/p.db", data="data/set.jsonl", models=["first"], out="out",
                           formulate=formulate)  # fmt: skip
    with client(tmp_path / "runs/p.db") as c:
        (answer,) = c.get(f"/api/runs/{ev.run_id}/samples/h").json()["answers"]
        turns = answer["sent"]["turns"]
        assert turns is not None, answer["sent"]
        roles = [t["role"] for t in turns]
        assert roles[0] == "system" and roles[-1] == "user" and "assistant" in roles
        texts = [p.get("text", "") for t in turns for p in t["parts"]]
        assert texts[0] == "SYSTEM <b>rules</b>"
        assert "Look at this." in texts and "I see a square." in texts
        assert {"image": 0} in turns[-1]["parts"] and texts[-1] == answer["prompt"]
        page = c.get(f"/runs/{ev.run_id}/samples/h").text
        assert "SYSTEM &lt;b&gt;rules&lt;/b&gt;" in page and "[image 1]" in page
        # A request built otherwise than the run's spec says is not passed off as the one sent.
        conn = sqlite3.connect(tmp_path / "runs/p.db")
        conn.execute("UPDATE runs SET spec = json_set(spec, '$.formulate.system_prompt', 'X')")
        conn.commit()
        conn.close()
        (changed,) = c.get(f"/api/runs/{ev.run_id}/samples/h").json()["answers"]
        assert changed["sent"]["turns"] is None and "differs" in changed["sent"]["note"]


def test_demo_answers_show_the_request_rebuilt(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    sample_id = c.get(f"/api/runs/{run_id}/samples").json()["rows"][0]["sample_id"]
    answers = c.get(f"/api/runs/{run_id}/samples/{sample_id}").json()["answers"]
    assert len(answers) == 2
    for a in answers:
        assert a["sent"]["turns"] is not None, a["sent"]
        assert a["sent"]["turns"][-1]["parts"][-1]["text"] == a["prompt"]


def test_image_reads_share_one_budget_and_a_request_past_it_is_told_to_try_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 6 of issue 34, finding 17: the image cap bounded each request, not the server.
    # Now requests share one budget (the file cap): past it a request waits, then is a 503
    # "try again"; one request alone always goes on, whatever the others wait for.
    from lmmprobe.serve import images

    monkeypatch.setenv("LMMPROBE_MAX_IMAGE_PIXELS", "1000")  # the budget: 16,781,216 bytes
    (tmp_path / "data").mkdir()
    Image.new("RGB", (8, 8), (0, 160, 0)).save(tmp_path / "data" / "g.png")
    row = {"id": "s0", "images": ["g.png"], "question": "Colour?", "choices": ["a", "b"]}
    (tmp_path / "data" / "set.jsonl").write_text(json.dumps({**row, "answer": 0}) + "\n")
    monkeypatch.chdir(tmp_path)
    ev = lmmprobe.evaluate(db="l.db", data="data/set.jsonl", models=["first"], out="out")
    monkeypatch.setattr(images.READS, "wait_s", 0.2)
    other = images.Reservation(images.READS)
    other.take(images.max_image_file_bytes())  # another request holds the whole budget
    try:
        with client(tmp_path / "l.db") as c:
            busy = c.get(f"/images/{ev.run_id}/s0/0")
            assert busy.status_code == 503 and "try again" in busy.text
            assert busy.headers["retry-after"] == "5"
            monkeypatch.setattr(images.READS, "max_waiting", 0)  # no waiting room: 503 at once
            assert c.get(f"/images/{ev.run_id}/s0/0").status_code == 503
            other.release()
            shown = c.get(f"/images/{ev.run_id}/s0/0")
            assert shown.status_code == 200
            assert shown.content == (tmp_path / "data" / "g.png").read_bytes()
    finally:
        other.release()
    alone = images.Reservation(images.READS)
    alone.take(10 * images.max_image_file_bytes())  # alone: more than the budget goes on
    alone.take(1)
    alone.release()
    fresh = images.Reservation(images.READS)  # no waiting room: refused if anything were held
    fresh.take(images.max_image_file_bytes())
    fresh.release()


def test_a_stored_reply_past_what_a_run_keeps_is_shown_as_a_marker_not_read(
    demo_db: tuple[Path, str], tmp_path: Path
) -> None:
    # Re-test 8 #3: a crafted store's 50 MB answer texts were read whole. The viewer measures
    # them in SQL and shows a marker naming the length; the other answers are shown as stored.
    db, run_id = demo_db
    crafted = tmp_path / "db.sqlite"
    crafted.write_bytes(db.read_bytes())
    with sqlite3.connect(crafted) as conn:
        conn.execute(
            "UPDATE responses SET text = printf('%.*c', 2000000, 'x') WHERE key IN "
            "(SELECT key FROM scores WHERE run_id = ? AND model = 'first')",
            (run_id,),
        )
    with client(crafted) as c:
        sample_id = c.get(f"/api/runs/{run_id}/samples").json()["rows"][0]["sample_id"]
        got = c.get(f"/api/runs/{run_id}/samples/{sample_id}")
    assert got.status_code == 200, got.text[:2000]
    text = json.dumps(got.json())
    assert "x" * 1000 not in text
    assert "[a stored text of 2,000,000 characters, more than lmmprobe stores: not shown]" in text
    assert len(text) < 200_000


def test_every_stored_free_text_past_the_cap_is_shown_as_a_marker_not_read(
    demo_db: tuple[Path, str], tmp_path: Path
) -> None:
    # Re-test 10 #6: 50 MB in judgements.reason made one sample's page answer 50 MB. A server's
    # error message, a judge's reading and reason and a row's prediction text are held to the
    # cap as the answer text is: measured in SQL, a marker naming the length in their place.
    db, run_id = demo_db
    crafted = tmp_path / "db.sqlite"
    crafted.write_bytes(db.read_bytes())
    past = "printf('%.*c', 1048577, 'x')"
    with sqlite3.connect(crafted) as conn:
        sample_id, key = conn.execute(
            "SELECT sample_id, key FROM scores WHERE run_id = ? AND model = 'first' "
            "ORDER BY sample_id LIMIT 1",
            (run_id,),
        ).fetchone()
        conn.execute(
            f"UPDATE responses SET error_type = 'server_error', error_message = {past} "
            "WHERE key = ?",
            (key,),
        )
        conn.execute(
            f"UPDATE scores SET prediction_text = {past} WHERE run_id = ? AND key = ?",
            (run_id, key),
        )
        conn.execute(
            "INSERT INTO judgements (run_id, model, sample_id, repeat, judge, protocol, version, "
            "attempt, decided_by, key, value, reading, detail, reason, created_at) "
            "SELECT run_id, model, sample_id, repeat, 'openai:j', 'lmmprobe-open', '1', 0, "
            f"'unjudged', ?, NULL, {past}, '{{}}', {past}, 0.0 FROM scores "
            "WHERE run_id = ? AND key = ?",
            (key, run_id, key),
        )
    with client(crafted) as c:
        got = c.get(f"/api/runs/{run_id}/samples/{sample_id}")
        page = c.get(f"/api/runs/{run_id}/samples")
    assert got.status_code == 200, got.text[:2000]
    assert page.status_code == 200, page.text[:2000]
    text = json.dumps(got.json())
    assert "x" * 1000 not in text and "x" * 1000 not in page.text
    marker = "[a stored text of 1,048,577 characters, more than lmmprobe stores: not shown]"
    # The answer's error message and prediction text, the verdict's reading, reason and the
    # judge call's error message (the verdict's key is the failed answer's, as a failed call's).
    assert text.count(marker) >= 5, text[:3000]
    assert marker in page.text
    assert len(text) < 200_000
