"""Every page and JSON endpoint of the runs / samples / compare part of ``lmmprobe serve``."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from lmmprobe.store import Store

from .conftest import Row, choice_sample, client, write_run


def test_runs_page_lists_the_run_with_its_models_and_accuracy(
    demo: tuple[TestClient, str],
) -> None:
    c, run_id = demo
    page = c.get("/")
    assert page.status_code == 200
    assert run_id in page.text and "complete" in page.text
    assert ">random<" in page.text and ">first<" in page.text
    runs = c.get("/api/runs").json()["runs"]
    (run,) = [r for r in runs if r["id"] == run_id]
    assert run["models"] == ["random", "first"] and run["n"] == 24 and run["status"] == "complete"
    acc = run["metrics"]["first"]["accuracy"]["value"]
    assert f"{acc:.3f}" in page.text


def test_run_page_shows_metrics_with_intervals_and_links(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    page = c.get(f"/runs/{run_id}")
    assert page.status_code == 200
    result = c.get(f"/api/runs/{run_id}").json()["results"]
    acc = result["models"]["random"]["metrics"]["accuracy"]
    assert f"{acc['value']:.3f} [{acc['low']:.2f}, {acc['high']:.2f}]" in page.text
    assert f'href="/runs/{run_id}/samples"' in page.text
    assert "/compare?" in page.text  # two models: a link comparing them


def test_sample_browser_pages_through_every_row_by_cursor(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    seen: list[tuple[str, str]] = []
    url = f"/api/runs/{run_id}/samples?limit=25"
    body = c.get(url).json()
    assert body["total"] == 48 and not body["capped"] and body["prev"] is None
    while True:
        seen += [(r["sample_id"], r["model"]) for r in body["rows"]]
        if body["next"] is None:
            break
        body = c.get(url + "&after=" + quote(body["next"])).json()
        assert body["prev"] is not None
    assert len(seen) == 48 == len(set(seen))
    assert seen == sorted(seen)
    # Back one page from the last one.
    back = c.get(url + "&before=" + quote(body["prev"])).json()
    assert [(r["sample_id"], r["model"]) for r in back["rows"]] == seen[:25]


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ("model=first", lambda r: r["model"] == "first"),
        ("verdict=correct", lambda r: r["correct"] is True),
        ("verdict=wrong", lambda r: r["correct"] is False),
        ("stage=format_hit", lambda r: r["format_hit"]),
        ("key=subtask&value=color", lambda r: r["metadata"]["subtask"] == "color"),
        ("key=subtask", lambda r: "subtask" in r["metadata"]),
        ("q=COLOR", lambda r: "color" in (r["question"] or "").lower()),
        ("model=random&verdict=wrong&key=subtask&value=shape", lambda r: r["model"] == "random"
         and r["correct"] is False and r["metadata"]["subtask"] == "shape"),
    ],
)  # fmt: skip
def test_each_filter_keeps_exactly_the_matching_rows(
    demo: tuple[TestClient, str], query: str, check: object
) -> None:
    c, run_id = demo
    everything = c.get(f"/api/runs/{run_id}/samples?limit=100").json()["rows"]
    got = c.get(f"/api/runs/{run_id}/samples?limit=100&{query}").json()
    expected = [r for r in everything if check(r)]  # type: ignore[operator]
    assert got["rows"] == expected and got["total"] == len(expected)
    assert expected, f"the demo has rows for {query}"
    page = c.get(f"/runs/{run_id}/samples?{query}")
    assert page.status_code == 200
    assert page.text.count("<tr>") - 1 == min(50, len(expected))  # rows + the header row


def test_unparsed_and_error_stages_filter_in_sql(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    samples = [choice_sample(i) for i in range(6)]
    rows = [
        Row("m", samples[0], "(A)", 0, samples[0].answer == 0),
        Row("m", samples[1], "no idea", None, False, stage="unparsed"),
        Row("m", samples[2], None, None, None, stage="error", error="timeout"),
        *[Row("m", s, "(B)", 1, s.answer == 1) for s in samples[3:]],
    ]
    with Store(db) as store:
        write_run(store, "r1", ["m"], samples, rows)
    with client(db) as c:
        unparsed = c.get("/api/runs/r1/samples?stage=unparsed").json()["rows"]
        errors = c.get("/api/runs/r1/samples?stage=error").json()["rows"]
        assert [r["sample_id"] for r in unparsed] == ["s001"]
        assert [(r["sample_id"], r["error_type"]) for r in errors] == [("s002", "timeout")]
        page = c.get("/runs/r1/samples?stage=error").text
        assert "timeout" in page and ">error<" in page


def test_bad_filter_values_are_refused_with_what_is_allowed(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    bad = c.get(f"/api/runs/{run_id}/samples?verdict=maybe")
    assert bad.status_code == 422 and "correct, wrong" in bad.json()["detail"]
    assert c.get(f"/api/runs/{run_id}/samples?after=garbage").status_code == 422
    # A cursor nested past Python's recursion limit is a bad cursor too, not a 500.
    deep = c.get(f"/api/runs/{run_id}/samples?before=" + "[" * 5_000)
    assert deep.status_code == 422 and "not a page cursor" in deep.json()["detail"]
    assert c.get(f"/api/runs/{run_id}/samples?limit=7").status_code == 422
    assert c.get(f"/runs/{run_id}/samples?stage=nope").status_code == 422


def test_sample_page_shows_images_prompt_and_every_models_answer(
    demo: tuple[TestClient, str], demo_db: tuple[Path, str]
) -> None:
    c, run_id = demo
    db, _ = demo_db
    conn = sqlite3.connect(db)
    sample_id, doc = conn.execute(
        "SELECT sample_id, sample FROM samples WHERE run_id = ? ORDER BY sample_id LIMIT 1 OFFSET 3",
        (run_id,),
    ).fetchone()
    answers = conn.execute(
        "SELECT s.model, r.prompt, r.text, s.prediction_text FROM scores s JOIN responses r "
        "ON r.key = s.key WHERE s.run_id = ? AND s.sample_id = ? ORDER BY s.model",
        (run_id, sample_id),
    ).fetchall()
    conn.close()
    sample = json.loads(doc)
    page = c.get(f"/runs/{run_id}/samples/{sample_id}")
    assert page.status_code == 200
    text = page.text
    assert sample["question"] in text
    assert f'src="/images/{run_id}/{sample_id}/0"' in text and 'class="zoomable"' in text
    gold = sample["choices"][sample["answer"]]
    assert re.search(rf'<li class="gold">{re.escape(gold)}', text)
    assert len(answers) == 2
    for model, prompt, raw, extracted in answers:
        assert f">{model}<" in text
        assert prompt.replace("'", "&#39;") in text
        assert f'<pre class="raw">{raw}</pre>' in text
        assert extracted in text
    body = c.get(f"/api/runs/{run_id}/samples/{sample_id}").json()
    assert body["images"] == [f"/images/{run_id}/{sample_id}/0"]
    assert {a["model"] for a in body["answers"]} == {"random", "first"}
    assert all(a["prompt"] and a["raw"] for a in body["answers"])


def test_unknown_run_or_sample_is_a_404_page(demo: tuple[TestClient, str]) -> None:
    c, run_id = demo
    assert c.get("/runs/nope").status_code == 404
    assert "no run" in c.get("/runs/nope").text
    assert c.get("/api/runs/nope").json() == {"detail": "no run 'nope' in this store"}
    assert c.get(f"/runs/{run_id}/samples/nope").status_code == 404
    assert c.get("/runs/nope/samples").status_code == 404


def test_sample_ids_with_slashes_and_spaces_work_end_to_end(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    sample = choice_sample(1).model_copy(update={"id": "coco/val 12?x=1"})
    with Store(db) as store:
        write_run(store, "r1", ["m"], [sample], [Row("m", sample, "(B)", 1, True)])
    with client(db) as c:
        page = c.get("/runs/r1/samples").text
        href = "/runs/r1/samples/" + quote("coco/val 12?x=1", safe="")
        assert f'href="{href}"' in page
        assert c.get(href).status_code == 200
        img = c.get("/images/r1/" + quote("coco/val 12?x=1", safe="") + "/0")
        assert img.status_code == 200 and img.headers["content-type"] == "image/png"


def test_a_store_of_schema_4_is_migrated_and_its_runs_shown_without_samples(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.db"
    sample = choice_sample(0)
    with Store(db) as store:
        write_run(store, "old", ["m"], [sample], [Row("m", sample, "(A)", 0, True)])
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM samples")  # as a run stored before schema 5 has none
    conn.commit()
    conn.close()
    with client(db) as c:
        page = c.get("/runs/old/samples/s000")
        assert page.status_code == 200
        assert "holds no copy of this sample for this run" in page.text
        assert "PROMPT Which colour is shape 0?" in page.text


def test_missing_store_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no store at .*lmmprobe run"):
        client(tmp_path / "none.db")
