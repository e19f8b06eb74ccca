"""A hostile OpenAI-compatible server, spoken to over a raw loopback socket (issue 34, re-test 7).

Each test's server answers every request with bytes no well-behaved HTTP server library would
send: a body trickled a byte a second, header lines or ``102 Processing`` one a second, an
error body that inflates without end, a reply nested 100,000 deep, a redirect to another host,
log-probabilities no model gives. The run must end, each in one stored error line.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.console import lmmprobe

pytest.importorskip("openai")

Answer = Callable[[socket.socket], None]


def _reply(content: str = "(A)", **choice: object) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                    **choice,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


def _read_request(conn: socket.socket) -> bytes | None:
    """One request's head (its body read and dropped); None when the client hung up."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = conn.recv(65536)
        if not got:
            return None
        data += got
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(body) < length:
        got = conn.recv(65536)
        if not got:
            break
        body += got
    return head


@contextmanager
def _server(answer: Answer) -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server answering every request with `answer`; yields its URL and the heads
    of the requests it got."""
    heads: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                while (head := _read_request(conn)) is not None:
                    heads.append(head)
                    answer(conn)
            except OSError:
                pass  # the client gave up on us: what the test wants

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", heads
    finally:
        listener.close()


def _rows(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    row = {"id": "q0", "images": [], "question": "Pick?", "choices": ["x", "y"], "answer": 0}
    path.write_text(json.dumps(row) + "\n")
    return path


def _run(
    tmp_path: Path, answer: Answer, options: str = "", *extra: str, address_space: int = 0
) -> tuple[str, str]:
    """Run one row against the hostile server; the stored error's type and message.

    `address_space`: a limit on the run's memory (bytes of address space), 0 for none.
    """
    db = tmp_path / "db.sqlite"

    def limit() -> None:
        if address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    exe = Path(sys.executable).parent / "lmmprobe"
    with _server(answer) as (url, _):
        done = subprocess.run(
            [exe, "run", "-m", f"openai:vlm@{url},max_attempts=1{options}",
             "--data", _rows(tmp_path), "--db", db, *extra],
            capture_output=True, text=True, timeout=60, preexec_fn=limit, check=False,
            env={**os.environ, "OPENAI_API_KEY": "test-key", "COLUMNS": "160"},
        )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    with sqlite3.connect(db) as c:
        ((kind, message),) = c.execute("SELECT error_type, error_message FROM responses")
    return kind, message


# ------------------------------------------------------------------ 1: a whole-attempt deadline


def _forever(conn: socket.socket, piece: bytes) -> None:
    for _ in range(120):  # two minutes: far past the test's time limit if the client waits
        conn.sendall(piece)
        time.sleep(0.5)


def _slow_body(conn: socket.socket) -> None:
    body = _reply()
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
        + body[:-2]
    )
    _forever(conn, b" ")


def _slow_chunks(conn: socket.socket) -> None:
    body = _reply()
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n%s\r\n" % (len(body) - 2, body[:-2])
    )
    _forever(conn, b"1\r\n \r\n")


def _slow_head(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    _forever(conn, b"X-A: b\r\n")


def _processing(conn: socket.socket) -> None:
    _forever(conn, b"HTTP/1.1 102 Processing\r\n\r\n")


@pytest.mark.parametrize("answer", [_slow_body, _slow_chunks, _slow_head, _processing])
def test_a_server_that_trickles_its_reply_times_out_the_attempt(
    tmp_path: Path, answer: Answer
) -> None:
    """`timeout` bounded each read: a byte, a header line or a 102 a second held it forever."""
    kind, message = _run(tmp_path, answer, ",timeout=3")
    assert kind == "timeout", message
    assert message.startswith("no answer within the timeout"), message


# ------------------------------------------------------------------ 2: error bodies, decoded


def _gzip_bomb(gib: int) -> bytes:
    """gzip(gzip(`gib` GiB of spaces)): a few kilobytes on the wire.

    The inner layer repeats one fully flushed deflate block (which refers to nothing before
    it), so it is built in a second, not compressed from gigabytes.
    """
    block = b" " * (16 << 20)
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    count, crc = gib * 64, 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    layer = (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        + piece * count
        + z.flush()
        + struct.pack("<II", crc, (count * len(block)) & 0xFFFFFFFF)
    )
    return gzip.compress(layer)


def test_an_http_errors_body_is_capped_after_decompression(tmp_path: Path) -> None:
    """The 64 KiB cap counted bytes as sent: a 500 of ~7 KB of gzip-in-gzip inflated to GBs."""
    bomb = _gzip_bomb(2)
    assert len(bomb) < 64 << 10

    def answer(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 500 Internal\r\nContent-Type: application/json\r\n"
            b"Content-Encoding: gzip, gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb) + bomb
        )

    # Under a 1 GB address-space limit the whole body cannot be held: it must not be tried.
    kind, message = _run(tmp_path, answer, ",timeout=60", address_space=2 << 30)
    assert kind == "transient", message
    assert message.startswith("HTTP 500: ") and len(message) < 400, message


# ------------------------------------------------------------------ 16: a reply nested too deep


def _json_answer(body: bytes) -> Answer:
    def answer(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % len(body)
            + body
        )

    return answer


def test_a_reply_nested_too_deep_is_a_malformed_reply(tmp_path: Path) -> None:
    """It was called an lmmprobe bug: "internal: RecursionError", not retried in the run."""
    kind, message = _run(tmp_path, _json_answer(b"[" * 100_000 + b"]" * 100_000))
    assert kind == "transient", message
    assert message.startswith("malformed response: ValueError: the reply is JSON nested"), message


# ------------------------------------------------------------------ 19: redirects


def test_a_redirect_is_not_followed_and_names_where_it_points(tmp_path: Path) -> None:
    """A 307 was followed to another host: the prompt and images were sent there."""
    with _server(_json_answer(_reply())) as (elsewhere, heads):

        def answer(conn: socket.socket) -> None:
            conn.sendall(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s/chat/completions\r\n"
                b"Content-Length: 0\r\n\r\n" % elsewhere.replace("127.0.0.1", "localhost").encode()
            )

        kind, message = _run(tmp_path, answer)
        assert heads == []  # the other host heard nothing
    assert kind == "bad_request", message
    assert message.startswith("HTTP 307: the server redirects to http://localhost:"), message
    assert "/v1/chat/completions, and lmmprobe follows no redirect" in message


# ------------------------------------------------------------------ 15: log-probabilities


@pytest.mark.parametrize(("a", "b"), [("1e999", "1e999"), ("-5", "50"), ("NaN", "-1")])
def test_a_log_probability_above_zero_or_nan_is_a_malformed_reply(
    tmp_path: Path, a: str, b: str
) -> None:
    """+inf was stored and scored (A correct), and B at +50 beat A at -5."""
    top = f'[{{"token": "A", "logprob": {a}}}, {{"token": "B", "logprob": {b}}}]'
    lp = f'{{"content": [{{"token": "A", "logprob": {a}, "top_logprobs": {top}}}]}}'
    body = _reply("A").replace(b'"finish_reason"', f'"logprobs": {lp}, "finish_reason"'.encode())
    kind, message = _run(tmp_path, _json_answer(body), "", "--method", "mark_logprob")
    assert kind == "transient", message
    assert message.startswith("malformed response: ValueError: the log-probability of"), message
    assert "which no probability has" in message


_MALFORMED_LOGPROBS = {
    "content not a list": ('{"content": "A"}', "logprobs.content is text, not a list"),
    "entry not an object": ('{"content": ["A"]}', "logprobs.content[0] is text, not an object"),
    "no token": ('{"content": [{"logprob": -1}]}', "logprobs.content[0].token is null, not text"),
    "token a number": ('{"content": [{"token": 7}]}', "logprobs.content[0].token is a number"),
    "top not a list": (
        '{"content": [{"token": "A", "logprob": -1, "top_logprobs": {"B": -2}}]}',
        "logprobs.content[0].top_logprobs is an object, not a list",
    ),
    "top entry text": (
        '{"content": [{"token": "A", "logprob": -1, "top_logprobs": ["B"]}]}',
        "logprobs.content[0].top_logprobs[0] is text, not an object",
    ),
    "logprob text": (
        '{"content": [{"token": "A", "logprob": "-0.5"}]}',
        "logprobs.content[0].logprob is text, not a number",
    ),
    "logprob past a float": (
        '{"content": [{"token": "A", "logprob": -1' + "0" * 400 + "}]}",
        "logprobs.content[0].logprob is a number past a float's range",
    ),
}


@pytest.mark.parametrize("case", list(_MALFORMED_LOGPROBS))
def test_malformed_log_probabilities_are_one_line_naming_the_field(
    tmp_path: Path, case: str
) -> None:
    """Re-test 20 #17: Python's wording ("KeyError: 'token'", "string indices must be
    integers"), and a logprob past a float's range an internal error (OverflowError)."""
    lp, said = _MALFORMED_LOGPROBS[case]
    body = _reply("A").replace(b'"finish_reason"', f'"logprobs": {lp}, "finish_reason"'.encode())
    kind, message = _run(tmp_path, _json_answer(body), "", "--method", "mark_logprob")
    assert kind == "transient", message
    assert message.startswith("malformed response: ValueError: the reply's "), message
    assert said in message and "\n" not in message, message
    for python in ("KeyError", "TypeError", "AttributeError", "indices", "OverflowError"):
        assert python not in message, message


def test_a_refusal_of_megabytes_is_stored_as_one_bounded_message(tmp_path: Path) -> None:
    """Re-test 21: a 3 MB ``refusal`` was stored whole in the row's error message."""
    body = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": "I refuse. " + "r" * 3_000_000,
                    },
                }
            ],
        }
    ).encode()
    kind, message = _run(tmp_path, _json_answer(body))
    assert kind == "refusal", message
    assert message.startswith("the API refused: I refuse. rrr"), message[:100]
    assert len(message) < 1_100, len(message)
    assert "characters cut" in message


# ------------------------------------------------------------------ re-test 17: no HTTP at all


def _sends(raw: bytes) -> Answer:
    def answer(conn: socket.socket) -> None:
        conn.sendall(raw)

    return answer


_NOT_HTTP = {
    "status line": b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
    "no http": b"\x00\x01\x02 SSH-2.0-OpenSSH\r\n\r\n",
    "chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    "header line": b"HTTP/1.1 200 OK\r\nX-A: "
    + b"a" * 200_000
    + b"\r\nContent-Length: 2\r\n\r\n{}",
    "headers": b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 100_000 + b"Content-Length: 2\r\n\r\n{}",
    "lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
@pytest.mark.parametrize("reply", list(_NOT_HTTP))
def test_a_reply_that_is_no_http_is_a_connection_failure_on_either_transport(
    tmp_path: Path, reply: str, transport: str
) -> None:
    """On aiohttp (the default where installed) its parser's error escaped the client: each
    request an ``internal`` error (lmmprobe's fault, "ClientResponseError: 400, ..."), not
    retried nor counted towards the server being down, where httpx gives a connection failure."""
    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    kind, message = _run(tmp_path, _sends(_NOT_HTTP[reply]), f",transport={transport}")
    assert kind == "connection", message
    assert message.startswith("connection failed: "), message
    assert "400," not in message and len(message) < 400, message


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("sk-goodkey-1234567890\r", "a line end (character 22 of 22)"),
        ("sk-goodkey-1234567890\n", "a line end (character 22 of 22)"),
        ("sk-goodkey-12345678\x1b90", "a control character (character 20 of 22)"),
        ("sk-goodkey-1234567é90", "a non-ASCII character (character 19 of 21)"),
        ("sk-goodkey-1234567890 ", "a space at its end (character 22 of 22)"),
    ],
)
def test_a_key_no_http_header_carries_is_refused_before_any_request(
    tmp_path: Path, key: str, said: str
) -> None:
    """Re-test 17: a key read with its line end was sent with every request: each failed (httpx:
    a connection failure, aiohttp: "malformed response: ... header injection"), was retried six
    times, and the run stopped as if the server were down. One line naming the variable now."""
    exe = Path(sys.executable).parent / "lmmprobe"
    with _server(_json_answer(_reply())) as (url, heads):
        done = subprocess.run(
            [exe, "run", "-m", f"openai:vlm@{url}", "--data", _rows(tmp_path),
             "--db", tmp_path / "db"],
            capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "OPENAI_API_KEY": key, "COLUMNS": "160"},
        )  # fmt: skip
    assert heads == []
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"error: the API key in OPENAI_API_KEY holds {said}, which no HTTP header carries: "
        "every request would fail; set the variable to the key alone"
    )


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:99999/v1", "has port 99999, out of range: a port is 1-65535"),
        ("http://127.0.0.1:0/v1", "has port 0, which no server listens on: a port is 1-65535"),
        ("http://127.0.0.1:8o80/v1", "has port '8o80', not a number: a port is 1-65535"),
        ("http://:{port}/v1", "names no host (expected http://HOST[:PORT]/...)"),
        ("http:///v1", "names no host (expected http://HOST[:PORT]/...)"),
        ("127.0.0.1:{port}/v1", "must start with http:// or https://"),
    ],
    ids=["port 99999", "port 0", "port 8o80", "no host", "nothing", "no scheme"],
)
@pytest.mark.parametrize("role", ["model", "judge"])
def test_a_server_url_no_request_can_go_to_is_refused_when_the_spec_is_read(
    tmp_path: Path, url: str, said: str, transport: str, role: str
) -> None:
    """Re-test 18: ``openai:vlm@http://127.0.0.1:99999/v1`` was sent to: aiohttp failed every
    attempt as "connection failed", httpx logged ``backend raised ExceptionGroup`` and stored
    an error row. A port out of 1-65535, no host or no scheme is one line naming the spec."""
    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    with _server(_json_answer(_reply())) as (good, heads):
        url = url.format(port=good.rsplit(":", 1)[1].split("/")[0])
        spec = f"openai:vlm@{url},transport={transport}"
        judged = ["-m", "random", "--judge", spec, "--judge-when", "always"]
        done = lmmprobe(
            "run", *(["-m", spec] if role == "model" else judged), "--data", _rows(tmp_path),
            "--db", tmp_path / "db", timeout=60, OPENAI_API_KEY="test-key",
        )  # fmt: skip
    assert heads == []
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    # The judge's line names the --judge spec first (redacted as `shown_spec` shows it).
    assert line.startswith("error: --judge openai:" if role == "judge" else "error: openai spec")
    assert "\n" not in line and "ExceptionGroup" not in line
    assert line.endswith(f"openai spec 'vlm@{url}': the server URL {said}")


def test_a_spec_without_a_server_never_goes_where_openai_base_url_points(tmp_path: Path) -> None:
    # Re-test 22: the openai client sends a spec without a URL (`openai:gpt-4o-mini`, the hosted
    # API) to the server $OPENAI_BASE_URL names; the run recorded base_url null, so answers from
    # another server were stored as the hosted model's, and later runs read them back as its.
    from lmmprobe.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        env = {"OPENAI_API_KEY": "sk-test-1234567890abcd", "OPENAI_BASE_URL": server.base_url}
        for command in (
            ["run", "-m", "openai:fake-vlm,max_attempts=1", "--data", "demo,n=2"],
            ["run", "-m", "random", "--data", "demo,n=2", "--judge", "openai:fake-vlm"],
        ):
            done = lmmprobe(*command, "--db", tmp_path / "db", "--out", tmp_path / "o", **env)
            assert done.returncode == 2, done.stdout + done.stderr
            assert "Traceback" not in done.stderr, done.stderr
            said = " ".join(done.stderr.split())
            assert "the environment variable OPENAI_BASE_URL is set" in said, said
            assert "(openai:fake-vlm@URL), or unset OPENAI_BASE_URL" in said, said
            assert server.base_url not in said
        assert server.requests_total == 0
        # Given in the spec, the server is the spec's, whatever the variable says.
        done = lmmprobe("run", "-m", f"openai:fake-vlm@{server.base_url}", "--data", "demo,n=2",
                        "--db", tmp_path / "db", "--out", tmp_path / "o",
                        **{**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.requests_total == 2
