"""Text from data, models and metadata renders as text on every page, never as markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from lmmprobe.schema import Sample
from lmmprobe.store import Store

from .conftest import HOSTILE, Row, client, png_b64, write_run


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("hostile") / "h.db"
    samples = [
        Sample(
            id=f"s{i}-{bad}",
            question=f"Q {bad}",
            choices=[f"opt {bad}", "plain"],
            answer=0,
            images=[{"data_b64": png_b64()}],  # type: ignore[list-item]
            context=f"ctx {bad}",
            metadata={f"key {bad}": f"value {bad}", "task": bad},
        )
        for i, bad in enumerate(HOSTILE)
    ]
    models = [f"model {bad}" for bad in HOSTILE]
    rows = [Row(m, s, f"raw {HOSTILE[j]}", 0, True) for m in models for j, s in enumerate(samples)]
    with Store(db) as store:
        write_run(store, "h", models, samples, rows)
    return db


def _assert_text_only(page: str) -> None:
    assert "<script>alert(1)</script>" not in page
    assert "<img src=x onerror=alert(1)>" not in page
    assert '"><img' not in page
    assert "Q 49" not in page and "model 49" not in page  # {{7*7}} is never evaluated


@pytest.fixture
def c(hostile: Path) -> TestClient:
    with client(hostile) as cl:
        yield cl  # type: ignore[misc]


def test_runs_run_and_compare_pages_escape_model_names(c: TestClient) -> None:
    for url in ("/", "/runs/h", "/compare?run_a=h"):
        page = c.get(url).text
        _assert_text_only(page)
        assert str(escape("<script>alert(1)</script>")) in page


def test_sample_browser_escapes_questions_answers_and_metadata(c: TestClient) -> None:
    for query in ("", "?key=task", "?q=script"):
        page = c.get(f"/runs/h/samples{query}").text
        _assert_text_only(page)
    page = c.get("/runs/h/samples").text
    assert "Q &lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert str(escape('key "><img src=x onerror=alert(1)>')) in page  # a metadata key option
    # The metadata filter matches a hostile value exactly.
    got = c.get("/api/runs/h/samples", params={"key": "task", "value": HOSTILE[1]}).json()
    assert {r["sample_id"] for r in got["rows"]} == {f"s1-{HOSTILE[1]}"}


def test_sample_page_escapes_every_field(c: TestClient) -> None:
    from urllib.parse import quote

    for i, bad in enumerate(HOSTILE):
        page = c.get("/runs/h/samples/" + quote(f"s{i}-{bad}", safe="")).text
        _assert_text_only(page)
        esc = str(escape(bad))
        for shown in (f"Q {esc}", f"ctx {esc}", f"opt {esc}", f"raw {esc}", f"model {esc}"):
            assert shown in page, shown
        assert str(escape(f"key {bad}")) in page
        assert str(escape(f"value {bad}")) in page
    # The template marker shows literally.
    assert "Q {{7*7}}" in c.get("/runs/h/samples/" + quote("s2-{{7*7}}", safe="")).text
