"""A server's reply is read up to a bound, its text cut there (issue 34, re-test 6 #20).

The reply was read and stored whole: one row whose answer was "(A) " and 400 MB of ``x`` took
1.3 GB and stored a 419,430,404-character text that every later ``show``, ``export`` and page
read again. Now the body is read up to `MAX_REPLY_BYTES`, the text and the thinking kept up to
`MAX_REPLY_CHARS` characters each (the cap imported predictions are read with), a cut reply
stored with ``finish_reason=length`` as a token limit would leave it, and a warning says so.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.choice_rows import CHOICE_ASK, choice_rows, unsure_answers
from tests.console import lmmprobe, lmmprobe_with_key

pytest.importorskip("openai")

from lmmprobe.models.openai_api import MAX_REPLY_BYTES, _body_json
from lmmprobe.schema import MAX_REPLY_CHARS
from lmmprobe.testing import FakeOpenAIServer


def _rows(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "images": [],
                    "question": f"Pick {i}?",
                    "choices": ["x", "y"],
                    "answer": 0,
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


def _stored(db: Path) -> list[tuple[int | None, int | None, str | None, str | None]]:
    with sqlite3.connect(db) as c:
        return list(
            c.execute(
                "SELECT length(text), length(reasoning), finish_reason, error_type FROM responses"
            )
        )


def _run(tmp_path: Path, replies: list[str | dict[str, str]], rows: int = 1) -> tuple[str, Path]:
    db = tmp_path / "db.sqlite"
    with FakeOpenAIServer(replies=replies) as server:
        done = lmmprobe_with_key(
            "run", "-m", f"openai:vlm@{server.base_url},max_concurrency=1",
            "--data", _rows(tmp_path, rows), "--db", db, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr, db


def test_a_reply_over_the_bytes_read_is_cut_and_stored_as_stopped_at_the_limit(
    tmp_path: Path,
) -> None:
    huge = "(A) " + "x" * (3 * MAX_REPLY_BYTES)  # 48 MiB
    stderr, db = _run(tmp_path, [huge, huge], rows=2)
    assert _stored(db) == [(MAX_REPLY_CHARS, None, "length", None)] * 2
    # The first cut is named once; the count comes at the end.
    assert stderr.count("longer than lmmprobe reads (over 16,777,216 bytes)") == 1, stderr
    assert "2 replies were longer than lmmprobe reads and were cut" in stderr
    with sqlite3.connect(db) as c:
        (text,) = c.execute("SELECT text FROM responses LIMIT 1").fetchone()
    assert text == huge[:MAX_REPLY_CHARS]


def test_a_text_over_the_characters_kept_is_cut_there(tmp_path: Path) -> None:
    long = "(B) " + "y" * (MAX_REPLY_CHARS + 10)  # within the bytes read, over the characters
    stderr, db = _run(tmp_path, [long])
    assert _stored(db) == [(MAX_REPLY_CHARS, None, "length", None)]
    assert "a text over 1,048,576 characters" in stderr


def test_thinking_cut_by_the_bytes_read_keeps_the_answer_before_it(tmp_path: Path) -> None:
    reply = {"content": "(A)", "reasoning_content": "t" * (2 * MAX_REPLY_BYTES)}
    _, db = _run(tmp_path, [reply])
    assert _stored(db) == [(3, MAX_REPLY_CHARS, "length", None)]


def test_a_reply_within_the_bounds_is_stored_as_sent(tmp_path: Path) -> None:
    reply = "(A) " + "z" * (MAX_REPLY_CHARS - 4)
    stderr, db = _run(tmp_path, [reply])
    assert _stored(db) == [(MAX_REPLY_CHARS, None, "stop", None)]
    assert "longer than lmmprobe reads" not in stderr


class _HugeError(http.server.BaseHTTPRequestHandler):
    """Answers every POST with an HTTP 500 whose body is `BODY` bytes long; counts what it
    could send before the client hung up."""

    BODY = 200 << 20
    sent: ClassVar[list[int]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(self.BODY))
        self.end_headers()
        chunk = b'{"error": {"message": "' + b"e" * ((1 << 20) - 23)
        sent = 0
        try:
            while sent < self.BODY:
                self.wfile.write(chunk[: self.BODY - sent])
                sent += min(len(chunk), self.BODY - sent)
        except OSError:
            pass  # the client closed the connection: the rest is never read
        self.sent.append(sent)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_http_errors_body_is_read_no_further_than_a_bound(tmp_path: Path) -> None:
    """The client reads an error's body whole to quote it: a 500 of 200 MB was held whole."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HugeError)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    db = tmp_path / "db.sqlite"
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        done = lmmprobe_with_key(
            "run", "-m", f"openai:vlm@{url},max_attempts=1", "--data", _rows(tmp_path, 1),
            "--db", db, timeout=120,
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    with sqlite3.connect(db) as c:
        ((kind, message),) = c.execute("SELECT error_type, error_message FROM responses")
    assert kind == "transient" and message.startswith("HTTP 500: ") and len(message) < 400
    (sent,) = _HugeError.sent
    assert sent < 64 << 20  # what the loopback's buffers took, not the 200 MB


@settings(max_examples=300, deadline=None)
@given(
    content=st.text(max_size=200),
    reasoning=st.one_of(st.none(), st.text(max_size=50)),
    ascii_only=st.booleans(),
    cut=st.floats(min_value=0.0, max_value=1.0),
)
def test_a_cut_body_reads_as_a_prefix_of_its_answer_or_not_at_all(
    content: str, reasoning: str | None, ascii_only: bool, cut: float
) -> None:
    """Wherever the bytes read end (inside an escape, a UTF-8 sequence, a key), what is read
    of the answer is a start of the answer sent, or the body is refused as not JSON."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    body = json.dumps(
        {"id": "x", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]},
        ensure_ascii=ascii_only,
    ).encode("utf-8", "surrogatepass")
    try:
        data = _body_json(body[: int(len(body) * cut)], True)
    except ValueError:
        return
    try:
        got = data["choices"][0]["message"]["content"]
    except (LookupError, TypeError):  # cut before the answer: the backend's malformed reply
        return
    assert isinstance(got, str) and content.startswith(got)


def test_a_reply_whose_kept_part_is_blanks_is_a_cut_output_not_asked_again(
    tmp_path: Path,
) -> None:
    """Re-test 9 #5: 1,100,000 blanks then the answer. lmmprobe's cut left only blanks, which
    was reported as the server's empty reply (``finish_reason=stop``), retried within the run
    and asked again, paid again, on every resume. It is a reply cut where lmmprobe stops
    reading: stored as stopped at the token limit, scored truncated, not asked again."""
    blanks = " " * (MAX_REPLY_CHARS + 51_424) + "(A) red"
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, 1)
    model = "openai:vlm@{},max_concurrency=1,max_attempts=3,backoff=0.1,max_backoff=0.2"
    said = []
    with FakeOpenAIServer(replies=[blanks] * 4) as server:
        for _ in range(2):  # the second run resumes the first
            done = lmmprobe_with_key(
                "run", "-m", model.format(server.base_url), "--data", rows, "--db", db,
                timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            assert server.requests_total == 1
            said.append(done.stdout + done.stderr)
    assert "empty_response" not in said[0] and "finish_reason=stop" not in said[0]
    assert "a text over 1,048,576 characters" in said[0]
    assert _stored(db) == [(0, None, "length", None)]  # the blanks kept are no answer
    with sqlite3.connect(db) as c:
        (stage,) = c.execute("SELECT stage FROM scores").fetchone()
    assert stage == "truncated"


def test_a_judge_reply_whose_kept_part_is_blanks_is_cut_not_asked_again(tmp_path: Path) -> None:
    """The judge path (re-test 9 #5): a judge reply of blanks past the limit, then a verdict,
    was "every one of 1 call(s) failed: empty_response" and asked again on every run."""
    data, answers = choice_rows(tmp_path / "rows.jsonl", 1), unsure_answers(1)
    blanks = " " * (MAX_REPLY_CHARS + 10) + "A"
    db = tmp_path / "db.sqlite"
    said = []
    with FakeOpenAIServer(reply_table=[(CHOICE_ASK, blanks), *answers]) as server:
        url = server.base_url
        for _ in range(2):  # the second run resumes the first: nothing is asked again
            done = lmmprobe_with_key(
                "run", "-m", f"openai:fake-vlm@{url}", "--data", data, "--db", db,
                "--out", tmp_path / "o", "--judge", f"openai:judge@{url},max_attempts=3",
            )  # fmt: skip
            said.append(done.stdout + done.stderr)
            assert server.requests_total == 2, said[-1][-3000:]  # one answer, one judge call
    assert "empty_response" not in said[0], said[0][-3000:]
    with sqlite3.connect(db) as c:
        rows = list(c.execute("SELECT length(text), finish_reason, error_type FROM responses"))
    assert (0, "length", None) in rows


@pytest.mark.parametrize("padding_as", ["field", "blanks"])
def test_a_reply_whose_bytes_read_hold_no_text_is_cut_not_retried_nor_asked_again(
    tmp_path: Path, padding_as: str
) -> None:
    """A body whose first `MAX_REPLY_BYTES` hold no answer at all (a 20 MiB field before
    ``choices``, or 20 MiB of blanks before the JSON) was a "malformed response", retried within
    the run (paid up to max_attempts times) and asked again on every resume. A reply too long
    to read is the server's doing and comes back alike: it is cut where lmmprobe stops reading,
    as a reply of blanks past the limit is, stored as cut off before its answer (truncated)."""
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, 1)
    model = "openai:vlm@{},max_concurrency=1,max_attempts=3,backoff=0.1,max_backoff=0.2"
    said = []
    with FakeOpenAIServer(replies=["(A) red"] * 4, padding=20 << 20, padding_as=padding_as) as s:
        for _ in range(2):  # the second run resumes the first
            done = lmmprobe_with_key(
                "run", "-m", model.format(s.base_url), "--data", rows, "--db", db, timeout=120
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            assert s.requests_total == 1
            said.append(done.stdout + done.stderr)
    assert "malformed" not in said[0] and "transient" not in said[0], said[0][-3000:]
    assert "its first 16,777,216 bytes hold no answer text" in said[0], said[0][-3000:]
    assert _stored(db) == [(0, None, "length", None)]
    with sqlite3.connect(db) as c:
        (stage,) = c.execute("SELECT stage FROM scores").fetchone()
    assert stage == "truncated"


def test_a_mark_logprob_reply_whose_kept_part_is_blanks_is_cut_not_asked_again(
    tmp_path: Path,
) -> None:
    """Under ``--method mark_logprob`` the reply of blanks past the limit (re-test 9 #5) was
    still an ``empty_response``: asked again on every resume. Its first answer token never
    came: stored as cut off before its answer (truncated), as under ``generate``."""
    blanks = " " * (MAX_REPLY_CHARS + 10) + "(A) red"
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, 1)
    model = "openai:vlm@{},max_concurrency=1,max_attempts=3,backoff=0.1,max_backoff=0.2"
    said = []
    with FakeOpenAIServer(replies=[blanks] * 4) as server:
        for _ in range(2):  # the second run resumes the first
            done = lmmprobe_with_key(
                "run", "-m", model.format(server.base_url), "--data", rows, "--db", db,
                "--method", "mark_logprob", timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-3000:]
            assert server.requests_total == 1
            said.append(done.stdout + done.stderr)
    assert "empty_response" not in said[0], said[0][-3000:]
    assert _stored(db) == [(0, None, "length", None)]
    with sqlite3.connect(db) as c:
        (stage,) = c.execute("SELECT stage FROM scores").fetchone()
    assert stage == "truncated"


@settings(max_examples=200, deadline=None)
@given(
    padding=st.sampled_from(["field", "blanks", "none"]),
    content=st.text(max_size=60),
    cut=st.floats(min_value=0.0, max_value=1.0),
    logprobs=st.booleans(),
)
def test_a_cut_body_is_an_answer_cut_or_a_cut_output_never_a_reply_to_ask_again(
    padding: str, content: str, cut: float, logprobs: bool
) -> None:
    """Wherever a body longer than what is read ends (in a padding field, in blanks before the
    JSON, in the answer, in its log-probabilities), the backend reads it as the start of an
    answer or an output cut before it: stopped at the limit, never an error to ask again."""
    from lmmprobe.data import load_source
    from lmmprobe.formulate import formulate
    from lmmprobe.models import load_model
    from lmmprobe.models.openai_api import OpenAIChatModel

    model = load_model("openai:vlm@http://127.0.0.1:9/v1")
    assert isinstance(model, OpenAIChatModel)
    request = formulate(load_source("demo,n=1").samples[0])
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": content}}
    if logprobs:
        entry = {"token": "A", "logprob": -0.1, "top_logprobs": [{"token": "A", "logprob": -0.1}]}
        choice["logprobs"] = {"content": [entry]}
    body: dict[str, Any] = {"id": "x", "choices": [{**choice, "finish_reason": "stop"}]}
    if padding == "field":
        body = {"x_padding": "x" * 40, **body}
    raw = json.dumps(body).encode()
    raw = b" " * 40 + raw if padding == "blanks" else raw
    got = model._reply(request, raw[: int(len(raw) * cut)], True, logprobs, 0.0)
    assert got.error is None and got.finish_reason == "length"
    assert got.text is not None and content.startswith(got.text)


# Re-test 22: no key shape, so only the configured key's own scrubbing can find it.
_CUT_SECRET = "CutThroughSecret7f3a9c2e1d"


class _KeyAtTheByteCut(http.server.BaseHTTPRequestHandler):
    """Answers with a body whose `MAX_REPLY_BYTES`-th byte falls 12 characters into the key."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        head = (
            b'{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": '
            b'"assistant", "content": "(A) red", "padding": "'
        )
        thinking = b'", "reasoning_content": "I think '
        filler = b"p" * (MAX_REPLY_BYTES - 12 - len(head) - len(thinking))
        body = head + filler + thinking + _CUT_SECRET.encode() + b' and more"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client stops reading at its bound
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_cut_through_a_key_keeps_no_part_of_it(tmp_path: Path) -> None:
    """A key cut through by lmmprobe's bounds left its first characters, which no scrub found
    afterwards (it is no whole key): 64 characters of a finish reason, a refusal's message cut
    in its middle, a text at `MAX_REPLY_CHARS`, a body at `MAX_REPLY_BYTES` (re-test 22)."""
    start = _CUT_SECRET[:8]
    replies: list[str | dict[str, str]] = [
        {"content": "(A) red", "finish_reason": "x" * 50 + " " + _CUT_SECRET},
        {"refusal": "y" * 740 + " " + _CUT_SECRET + " tail" * 100},
        "(A) " + "z" * (MAX_REPLY_CHARS - 12 - 5) + " " + _CUT_SECRET,
    ]
    db = tmp_path / "db.sqlite"
    rows = _rows(tmp_path, 3)
    model = "openai:vlm@{},max_concurrency=1,max_attempts=1"
    with FakeOpenAIServer(replies=replies) as server:
        done = lmmprobe(
            "run", "-m", model.format(server.base_url), "--data", rows, "--db", db,
            "--out", tmp_path / "out", OPENAI_API_KEY=_CUT_SECRET, timeout=120,
        )  # fmt: skip
    first = lmmprobe("export", "latest", "--db", db, "--format", "csv", "--out", tmp_path / "a.csv")
    raw = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _KeyAtTheByteCut)
    threading.Thread(target=raw.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{raw.server_address[1]}/v1"
        cut = lmmprobe(
            "run", "-m", model.format(url), "--data", _rows(tmp_path, 1), "--db", db,
            OPENAI_API_KEY=_CUT_SECRET, timeout=120,
        )  # fmt: skip
    finally:
        raw.shutdown()
        raw.server_close()
    said = [done.stdout, done.stderr, cut.stdout, cut.stderr]
    assert "Traceback" not in done.stderr + cut.stderr, said
    second = lmmprobe(
        "export", "latest", "--db", db, "--format", "csv", "--out", tmp_path / "b.csv"
    )
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    for text in said:
        assert start not in text
    for path in (p for p in tmp_path.rglob("*") if p.is_file()):
        assert start.encode() not in path.read_bytes(), path
    with sqlite3.connect(db) as c:
        stored = list(
            c.execute("SELECT text, reasoning, finish_reason, error_message FROM responses")
        )
    assert [[(v or "")[-30:] for v in row] for row in stored] == [
        ["(A) red", "", "x" * 19 + " [redacted]", ""],
        ["", "", "", " tail" * 6],  # the refusal: its cut went through "[redacted]"
        ["z" * 19 + " [redacted]", "", "length", ""],
        ["(A) red", "I think [redacted]", "length", ""],
    ]
