"""A reply whose content is a list of parts (issue 34, re-test 11 #8).

Mistral's reasoning models answer ``"content": [{"type": "thinking", "thinking": [{"type":
"text", "text": ...}]}, {"type": "text", "text": ...}]``. Such a reply was "malformed response:
TypeError: message content is list, not text", asked again ``max_attempts`` times (each paid)
and stored as an error. The text parts are the answer; the thinking parts are stored as its
thinking and never read for the answer; a part of any other type is an error not asked again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe

from lmmprobe.testing import FakeOpenAIServer

pytest.importorskip("openai")

MISTRAL_THINKING = {
    "type": "thinking",
    "thinking": [{"type": "text", "text": "Blue is tempting: (B). No, it is red."}],
    "closed": True,
}


def _rows(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "rows.jsonl"
    rows = [
        {"id": f"q{i}", "images": [], "question": f"Which colour ({i})?", "choices": ["red", "blue"],
         "answer": 0}
        for i in range(n)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(tmp_path: Path, replies: list[Any]) -> tuple[int, list[tuple[Any, ...]], str]:
    """Run len(replies) rows; (requests the server got, stored rows, stdout+stderr)."""
    db = tmp_path / "db.sqlite"
    with FakeOpenAIServer(replies=replies) as server:
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{server.base_url},max_attempts=3,backoff=0",
            "--data", _rows(tmp_path, len(replies)), "--db", db, "--out", tmp_path / "o",
            OPENAI_API_KEY="test-key", COLUMNS="300",
        )  # fmt: skip
        sent = server.requests_total
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output[-3000:]
    with sqlite3.connect(db) as c:
        stored = list(
            c.execute(
                "SELECT r.text, r.reasoning, r.error_type, r.error_message, s.correct "
                "FROM responses r JOIN scores s ON s.key = r.key ORDER BY s.sample_id"
            )
        )
    return sent, stored, output


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "(A) red"}],
        [MISTRAL_THINKING, {"type": "text", "text": "(A) "}, {"type": "text", "text": "red"}],
        [
            {"type": "reasoning", "reasoning": "Blue is tempting: (B). No, it is red."},
            {"type": "text", "text": "(A) red"},
        ],
    ],
    ids=["text", "mistral-thinking", "reasoning-part"],
)
def test_text_parts_are_the_answer_and_thinking_parts_the_thinking(
    tmp_path: Path, content: list[Any]
) -> None:
    sent, stored, output = _run(tmp_path, [{"content": content}])
    assert sent == 1, output  # answered once: not asked again
    ((text, reasoning, error, _, correct),) = stored
    assert error is None and text == "(A) red" and correct == 1, stored
    # The thinking names (B): kept apart, never read for the answer.
    if len(content) > 1:
        assert reasoning == "Blue is tempting: (B). No, it is red."
    else:
        assert reasoning is None


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ([{"type": "image_url", "image_url": {"url": "x"}}], "part 1 is of type 'image_url'"),
        ([{"type": "text", "text": "(A)"}, "red"], "part 2 is text"),
        ([{"type": "text", "text": 5}], "part 1 is of type 'text'"),
        ({"text": "(A)"}, "the reply's content is an object, not text"),
        (5, "the reply's content is a number, not text"),
    ],
    ids=["unknown-type", "not-an-object", "text-not-text", "object", "number"],
)
def test_content_of_another_shape_is_an_error_not_asked_again(
    tmp_path: Path, content: Any, said: str
) -> None:
    sent, stored, output = _run(tmp_path, [{"content": content}] * 3)
    assert sent == 3, output  # one request a row: the server would answer the same again
    for text, _, error, message, correct in stored:
        assert (text, error, correct) == (None, "bad_request", None), stored
        assert said in message and "not asked again" in message, message
        assert "TypeError" not in message
