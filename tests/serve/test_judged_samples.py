"""serve's sample pages with judges: each judge's prompt and reply under the answer it judged,
and the browser's filters "judged by", "unjudged" and "judges disagree".

The store is made the way a user's is: ``lmmprobe run --judge A --judge B`` through the console
script, the model and judge A on one fake server and judge B on another, each scripted by
prompt. With ``LMMPROBE_SHOTS=DIR`` the browser test saves screenshots at 1400 and 960 px.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.judge.protocol import block_id
from lmmprobe.testing.openai_server import FakeOpenAIServer

from .conftest import client

MODEL = [
    ("Which animal is q1?", "(A)"),  # read by rules
    ("Which animal is q2?", "(B)"),  # read by rules
    ("Which animal is q3?", "I would say the feline one"),
    ("Which animal is q4?", "Probably the barking one"),
    ("Which animal is q5?", "hmm, the grumpy one"),
    ("Which animal is q6?", "zzz unclear"),
]
HOSTILE_REPLY = "<b>unsure</b> <script>alert(1)</script>"
JUDGE_A = [
    ('">\nI would say the feline one', "A"),
    ('">\nProbably the barking one', "B"),  # judge B says A: the judges disagree on q4
    ('">\nhmm, the grumpy one', HOSTILE_REPLY),  # unreadable: q5 unjudged by A
    ('">\nzzz unclear', "A"),
]
JUDGE_B = [(needle, "A") for needle, _ in JUDGE_A]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("judged")
    rows = [
        {"id": f"q{i}", "images": [], "question": q, "choices": ["cat", "dog"], "answer": 0}
        for i, (q, _) in enumerate(MODEL, 1)
    ]
    data = root / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = root / "judged.db"
    with (
        FakeOpenAIServer(reply_table=[*JUDGE_A, *MODEL]) as one,
        FakeOpenAIServer(reply_table=JUDGE_B) as two,
    ):
        judge_a, judge_b = f"openai:judge-a@{one.base_url}", f"openai:judge-b@{two.base_url}"
        done = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{one.base_url}", "--data", data, "-q", "--db", db,
            "--out", root / "out", "--judge", judge_a, "--judge", judge_b,
            OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    return {"db": db, "run": run_id, "a": judge_a, "b": judge_b}


def _ids(judged: dict[str, Any], **params: str) -> list[str]:
    with client(judged["db"]) as c:
        r = c.get(f"/api/runs/{judged['run']}/samples", params=params)
    assert r.status_code == 200, r.text
    return [row["sample_id"] for row in r.json()["rows"]]


def test_judge_filters(judged: dict[str, Any]) -> None:
    assert _ids(judged, judge=judged["a"]) == ["q3", "q4", "q6"]
    assert _ids(judged, judge=judged["b"]) == ["q3", "q4", "q5", "q6"]
    assert _ids(judged, judgement="unjudged") == ["q5"]
    assert _ids(judged, judgement="disagree") == ["q4"]
    assert _ids(judged, judge=judged["a"], judgement="disagree") == ["q4"]
    assert _ids(judged, judge="openai:nobody@http://127.0.0.1:9/v1") == []
    with client(judged["db"]) as c:
        bad = c.get(f"/api/runs/{judged['run']}/samples", params={"judgement": "maybe"})
        assert bad.status_code == 422 and "judgement" in bad.text
        page = c.get(f"/runs/{judged['run']}/samples", params={"judgement": "disagree"})
    assert page.status_code == 200
    assert 'value="disagree" selected' in page.text and "Judged by" in page.text
    assert "judge-a" in page.text and "judge-b" in page.text


def test_a_run_without_judges_shows_no_judge_filters(
    demo_db: tuple[Path, str],
) -> None:
    with client(demo_db[0]) as c:
        page = c.get(f"/runs/{demo_db[1]}/samples")
    assert page.status_code == 200 and "Judged by" not in page.text


def test_sample_page_shows_each_judges_prompt_and_reply_escaped(judged: dict[str, Any]) -> None:
    with client(judged["db"]) as c:
        page = c.get(f"/runs/{judged['run']}/samples/q5")
        api = c.get(f"/api/runs/{judged['run']}/samples/q5").json()
    assert page.status_code == 200
    html = page.text
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "unjudged" in html and "judged" in html and "lmmprobe-choice v2" in html
    # Judge B's verdict and both judges' prompts, which quote the model's answer.
    assert html.count("Judge prompt and reply") == 2
    assert html.count("&gt;\nhmm, the grumpy one\n&lt;/model_answer id=") >= 2
    (answer,) = api["answers"]
    verdicts = {v["judge"]: v for v in answer["judgements"]}
    assert verdicts[judged["a"]]["decided_by"] == "unjudged"
    assert verdicts[judged["a"]]["reply"] == HOSTILE_REPLY
    assert verdicts[judged["b"]]["reading"] == "A" and verdicts[judged["b"]]["reply"] == "A"
    ident = block_id("hmm, the grumpy one")
    assert (
        f'<model_answer id="{ident}">\nhmm, the grumpy one\n</model_answer id="{ident}">'
        in verdicts[judged["b"]]["prompt"]
    )
    # A rule-decided answer shows the rule's reading and no judge exchange.
    with client(judged["db"]) as c:
        ruled = c.get(f"/runs/{judged['run']}/samples/q1").text
    assert "decided by rule" in ruled and "Judge prompt and reply" not in ruled


def test_a_rule_unparsed_answer_the_judges_read_shows_its_judged_verdict(
    judged: dict[str, Any],
) -> None:
    with client(judged["db"]) as c:
        pages = {
            q: c.get(f"/runs/{judged['run']}/samples/{q}").text for q in ("q1", "q3", "q4", "q5")
        }
        api = {
            q: c.get(f"/api/runs/{judged['run']}/samples/{q}").json()
            for q in ("q1", "q3", "q4", "q5")
        }
        # The verdict filter keeps meaning the rules' verdict: q3, unparsed by rules (counted
        # wrong) and judged correct, is among the wrong answers, not the correct ones.
        wrong = c.get(f"/api/runs/{judged['run']}/samples", params={"verdict": "wrong"}).json()
        right = c.get(f"/api/runs/{judged['run']}/samples", params={"verdict": "correct"}).json()
    assert "q3" in [r["sample_id"] for r in wrong["rows"]]
    assert "q3" not in [r["sample_id"] for r in right["rows"]]
    # q3: both judges read A (the gold): the rules' "unparsed" stands beside "judged correct".
    (q3,) = api["q3"]["answers"]
    assert q3["stage"] == "unparsed"
    assert q3["judged"] == {"label": "correct", "value": 1.0, "decided_by": "judge", "judges": 2}
    assert "unparsed" in pages["q3"] and "judged correct" in pages["q3"]
    assert "decided by judge (2 judges, majority)" in pages["q3"]
    assert "the rules could not read this answer; the judges did" in pages["q3"]
    # q4: judge A reads B (wrong), judge B reads A (right): split evenly, no verdict.
    (q4,) = api["q4"]["answers"]
    assert q4["judged"]["label"] == "tie" and q4["judged"]["value"] is None
    assert "judges split" in pages["q4"]
    # q5: A unreadable, B reads A: one judge decides.
    (q5,) = api["q5"]["answers"]
    assert q5["judged"] == {"label": "correct", "value": 1.0, "decided_by": "judge", "judges": 1}
    # q1: the rules read it: its judged verdict is the rule's.
    (q1,) = api["q1"]["answers"]
    assert q1["judged"]["decided_by"] == "rule" and q1["judged"]["label"] == "correct"
    assert "judged correct" in pages["q1"] and "decided by rule" in pages["q1"]


def test_an_unjudged_run_has_no_judged_verdict(demo_db: tuple[Path, str]) -> None:
    with client(demo_db[0]) as c:
        runs = c.get(f"/api/runs/{demo_db[1]}/samples").json()
        sid = runs["rows"][0]["sample_id"]
        page = c.get(f"/runs/{demo_db[1]}/samples/{sid}").text
        api = c.get(f"/api/runs/{demo_db[1]}/samples/{sid}").json()
    assert all(a["judged"] is None for a in api["answers"])
    assert "Judged verdict" not in page and "rules:" not in page


@pytest.fixture
def served(judged: dict[str, Any]) -> Iterator[str]:
    uvicorn = pytest.importorskip("uvicorn")
    import socket

    from lmmprobe.serve.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(create_app(judged["db"]), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.slow
def test_judged_sample_page_in_a_browser(served: str, judged: dict[str, Any]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip(f"no Chromium at {chromium}")
    shots = os.environ.get("LMMPROBE_SHOTS")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        alerts: list[str] = []
        try:
            for width in (1400, 960):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
                page.goto(f"{served}/runs/{judged['run']}/samples/q3")
                assert page.locator(".jv-correct").first.is_visible()
                if shots:
                    page.screenshot(path=f"{shots}/judged-verdict-{width}.png", full_page=True)
                page.goto(f"{served}/runs/{judged['run']}/samples/q5")
                for summary in page.locator("summary", has_text="Judge prompt and reply").all():
                    summary.click()
                assert page.locator("text=alert(1)").first.is_visible()
                assert alerts == []
                if shots:
                    page.screenshot(path=f"{shots}/judged-sample-{width}.png", full_page=True)
                page.goto(f"{served}/runs/{judged['run']}/samples?judgement=disagree")
                assert page.locator("td.id a").all_inner_texts() == ["q4"]
                if shots:
                    page.screenshot(path=f"{shots}/judged-filter-{width}.png", full_page=True)
                page.close()
        finally:
            browser.close()
