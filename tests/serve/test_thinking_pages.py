"""Serve shows a reasoning model's thinking apart from its answer (issue 25, item 5).

The sample page shows the answer as it was read, the thinking collapsed beneath it and the raw
output as sent (collapsed too); a cut-off output says it stopped before its answer. An answer
without thinking is shown as before. The sample browser filters truncated rows.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.serve.conftest import Row, client, write_run

from lmmprobe.schema import Sample
from lmmprobe.store import Store

THINKING = "The answer is (A)? No: the shape has four sides."
SAMPLES = [
    Sample(id=f"s{i}", question=f"Which shape {i}?", choices=["circle", "square"], answer=1)
    for i in range(3)
]


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    rows = [
        Row("thinker", SAMPLES[0], f"<think>{THINKING}</think>\n\n(B)", 1, True),
        Row("thinker", SAMPLES[1], f"<think>{THINKING} Let me count again", None, False, "truncated"),
        Row("thinker", SAMPLES[2], "(B)", 1, True),
    ]  # fmt: skip
    with Store(db) as store:
        write_run(store, "r1", ["thinker"], SAMPLES, rows)
    return db


def _answer_card(page: str) -> str:
    found = re.search(r'<article class="card answer.*?</article>', page, re.S)
    assert found is not None
    return found.group(0)


def test_the_thinking_is_collapsed_apart_from_the_answer(tmp_path: Path) -> None:
    with client(_store(tmp_path)) as c:
        card = _answer_card(c.get("/runs/r1/samples/s0").text)
        cut = _answer_card(c.get("/runs/r1/samples/s1").text)
        plain = _answer_card(c.get("/runs/r1/samples/s2").text)
        truncated_rows = c.get("/runs/r1/samples?stage=truncated").text
    answer = re.search(r'<pre class="raw answer-read">(.*?)</pre>', card, re.S)
    assert answer is not None and answer.group(1) == "(B)"
    thinking = re.search(r'<details class="thinking">(.*?)</details>', card, re.S)
    assert thinking is not None and html.escape(THINKING) in thinking.group(1)
    assert html.escape(THINKING) not in card.split('<details class="thinking">')[0]
    assert '<details class="raw-output">' in card  # the raw text stays visible
    assert "stopped before its answer" in cut and "truncated" in cut
    assert "answer-read" not in cut
    assert '<details class="thinking">' not in plain and "<h4>Raw output</h4>" in plain
    assert "s1" in truncated_rows and "/samples/s0" not in truncated_rows


def test_a_cut_off_answer_names_the_limit_that_stopped_it(tmp_path: Path) -> None:
    # The page said "at the token limit (raise --max-new-tokens)" for every length stop, also
    # where the server stopped the output after 10 of the 32 tokens the run allowed.
    db = tmp_path / "s.db"
    cut = f"<think>{THINKING} Let me count again"
    rows = [
        Row("thinker", SAMPLES[0], cut, None, False, "truncated", None, "length", 10),
        Row("thinker", SAMPLES[1], cut, None, False, "truncated", None, "length", 32),
    ]  # fmt: skip
    with Store(db) as store:
        write_run(store, "r1", ["thinker"], SAMPLES[:2], rows, max_new_tokens=32)
    with client(db) as c:
        short = " ".join(_answer_card(c.get("/runs/r1/samples/s0").text).split())
        full = " ".join(_answer_card(c.get("/runs/r1/samples/s1").text).split())
    assert (
        "at a token limit after 10 of the 32 tokens the run allowed: the server's own limit "
        "stopped it, not --max-new-tokens"
    ) in short, short
    assert "raise --max-new-tokens" not in short
    assert "at the token limit (raise --max-new-tokens; this run: 32)" in full, full
