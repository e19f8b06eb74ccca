"""APEx's LLM orchestrator against a hostile server (issue 34, re-test 11 #3, #4, #5).

The orchestrator's requests go through the `openai:` model backend's bounded path: a deadline
on the whole request, the reply read no further than a cap (on the wire and decoded), no
redirect followed; its options are checked when the spec is read; a rejected reply is kept in
the report's transcript only up to the cap.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import socket
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
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe, lmmprobe_with_key

from lmmprobe.apex.orchestrator_output import MAX_OUTPUT_CHARS
from lmmprobe.apex.orchestrators.llm import LLMOrchestrator, parse_spec
from lmmprobe.apex.protocol import OrchestratorError
from lmmprobe.testing import FakeOpenAIServer

pytest.importorskip("openai")

Answer = Callable[[socket.socket], None]

QUESTION = "Can models identify rotated images?"


def _reply(content: str) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}}
    return json.dumps({"choices": [{**choice, "finish_reason": "stop"}]}).encode()


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
    """A loopback server answering every request with `answer`: its URL and the heads got."""
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


def _forever(conn: socket.socket, piece: bytes) -> None:
    for _ in range(240):  # two minutes: far past the test's time bound if the client waits
        conn.sendall(piece)
        time.sleep(0.5)


def _slow_body(conn: socket.socket) -> None:
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
        + _reply("{}")[:-2]
    )
    _forever(conn, b" ")


def _slow_chunks(conn: socket.socket) -> None:
    body = _reply("{}")
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n%s\r\n" % (len(body) - 2, body[:-2])
    )
    _forever(conn, b"1\r\n \r\n")


def _slow_head(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    _forever(conn, b"X-A: b\r\n")


def _apex(out: Path, orchestrator: str, *extra: str) -> list[str]:
    return [
        "apex", QUESTION, "-m", "random", "--orchestrator", orchestrator, "--out", str(out),
        "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10", *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("answer", [_slow_body, _slow_chunks, _slow_head])
def test_a_stalled_orchestrator_server_ends_in_one_timeout_line(
    tmp_path: Path, answer: Answer
) -> None:
    """The SDK's timeout bounded each read: a byte or a header line a second hung apex."""
    out = tmp_path / "out"
    with _server(answer) as (url, heads):
        # A generous bound: the test fails on a hang, not on a slow machine.
        done = lmmprobe_with_key(
            *_apex(out, f"openai:orch@{url},timeout=2,max_retries=0", "--max-calls", "3"),
            timeout=180,
        )
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text[-3000:]
    assert "the chat request failed: timeout: no complete reply within 2 s" in text, text[-3000:]
    assert len(heads) == 1
    assert (out / "report.json").is_file()


def _bomb_reply(gib: int) -> bytes:
    """gzip(gzip(a reply, then `gib` GiB of blanks)): kilobytes on the wire, gigabytes decoded.

    The inner layer repeats one fully flushed deflate block (which refers to nothing before
    it), so it is built in a second, not compressed from gigabytes.
    """
    head = _reply("not a plan")[:-1]  # the closing brace comes after the blanks, never read
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    block = b" " * (16 << 20)
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    count, crc = gib * 64, zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    size = len(head) + count * len(block)
    layer = (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
        + start
        + piece * count
        + z.flush()
        + struct.pack("<II", crc, size & 0xFFFFFFFF)
    )
    return gzip.compress(layer)


def test_a_reply_that_inflates_to_gigabytes_is_read_only_to_the_cap(tmp_path: Path) -> None:
    """A 2 GiB decoded reply was inflated whole: "the chat request failed: MemoryError"."""
    bomb = _bomb_reply(2)
    assert len(bomb) < 1 << 20

    def answer(conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Encoding: gzip, gzip\r\nContent-Length: %d\r\n\r\n" % len(bomb) + bomb
        )

    def limit() -> None:  # the reply whole cannot be held under it: it must not be tried
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    out = tmp_path / "out"
    exe = Path(sys.executable).parent / "lmmprobe"
    with _server(answer) as (url, heads):
        done = subprocess.run(
            [exe, *_apex(out, f"openai:orch@{url},timeout=60,max_retries=0", "--max-calls", "2")],
            capture_output=True, text=True, timeout=300, preexec_fn=limit, check=False,
            env={**os.environ, "OPENAI_API_KEY": "test-key", "COLUMNS": "160"},
        )  # fmt: skip
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "chat request failed" not in text, text[-3000:]
    # Read as far as the cap, the reply is the orchestrator's text, rejected and healed.
    assert "init: rejected (the reply is not valid JSON" in text, text[-3000:]
    assert len(heads) == 2
    assert (out / "report.json").is_file()


def test_a_rejected_long_reply_is_kept_in_the_transcript_only_to_the_cap(tmp_path: Path) -> None:
    """Kept whole, three 50 MB replies took the report's writing past memory: no report."""
    long = "x" * 3_000_000
    out = tmp_path / "out"
    with FakeOpenAIServer(replies=[long, long]) as server:
        done = lmmprobe_with_key(
            *_apex(out, f"openai:orch@{server.base_url}", "--max-calls", "2"), timeout=180
        )
    text = done.stdout + done.stderr
    assert "init: rejected (the reply has 3000000 characters; at most 100000)" in text, text
    report = json.loads((out / "report.json").read_text())
    kept = [t["content"] for t in report["transcript"] if t["role"] == "assistant"]
    note = " ...(cut: the reply has 3,000,000 characters; the first 100,000 are kept)"
    # Each reply cut to the cap; a heal request repeats the earlier one, cut to 4,000.
    assert [k for k in kept if len(k) > 5000] == ["x" * MAX_OUTPUT_CHARS + note] * 2
    assert all(len(k) <= MAX_OUTPUT_CHARS + len(note) for k in kept)
    assert (out / "report.json").stat().st_size < 2_000_000


def test_a_reply_nested_past_the_recursion_limit_is_rejected_and_healed(tmp_path: Path) -> None:
    """Re-test 13 #7: 49,000 ``[`` (under the length cap) was a RecursionError traceback."""
    deep = "[" * 49_000 + "]" * 49_000
    # and one the decoder reads but `scan` and pydantic would recurse through
    inside = '{"open_questions": ' + "[" * 150 + "]" * 150 + "}"
    out = tmp_path / "out"
    with FakeOpenAIServer(replies=[deep, inside]) as server:
        done = lmmprobe_with_key(
            *_apex(out, f"openai:orch@{server.base_url}", "--max-calls", "2"), timeout=180
        )
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "RecursionError" not in text, text[-3000:]
    assert text.count("rejected (the reply is JSON nested more than 100 levels deep") == 2, text
    assert (out / "report.json").is_file()


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("timeout=nan", "option timeout='nan' must be a number of seconds above 0"),
        ("timeout=1e999", "option timeout='1e999' must be a number of seconds above 0"),
        ("max_tokens=-5", "option max_tokens='-5' must be a number of tokens, at least 1"),
        ("max_retries=1000000", "option max_retries='1000000' must be a whole number, 0 or more"),
    ],
)
def test_orchestrator_options_out_of_range_are_refused_at_parse(
    tmp_path: Path, option: str, says: str
) -> None:
    """They were taken as given: a NaN timeout failed each request, a million retries hung."""
    out = tmp_path / "out"
    done = lmmprobe(*_apex(out, f"openai:o@http://127.0.0.1:9/v1,{option}"), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert not out.exists()


def test_a_redirect_from_the_orchestrator_server_is_not_followed(tmp_path: Path) -> None:
    """A 307 to another origin was followed: the other server got the whole prompt."""
    out = tmp_path / "out"
    with FakeOpenAIServer(replies=["{}"] * 4) as elsewhere:
        target = f"{elsewhere.base_url}/chat/completions"

        def answer(conn: socket.socket) -> None:
            conn.sendall(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n"
                % target.encode()
            )

        with _server(answer) as (url, heads):
            done = lmmprobe_with_key(
                *_apex(out, f"openai:orch@{url},max_retries=0", "--max-calls", "2"), timeout=180
            )
        assert elsewhere.requests_total == 0
    text = done.stdout + done.stderr
    assert "the chat request failed: bad_request: HTTP 307: the server redirects to" in text
    assert "lmmprobe follows no redirect" in text
    assert len(heads) == 1 and (out / "report.json").is_file()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
_SHAPED = st.fixed_dictionaries(
    {"choices": st.lists(st.fixed_dictionaries(
        {"message": st.dictionaries(st.sampled_from(["content", "tool_calls", "role"]), _JSON)},
        optional={"finish_reason": _JSON},
    ), max_size=2)}
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(data=_JSON | _SHAPED, cut=st.booleans())
def test_any_json_a_server_sends_is_text_or_one_orchestrator_error(data: object, cut: bool) -> None:
    orchestrator = LLMOrchestrator(parse_spec("m@http://127.0.0.1:9/v1"))
    try:
        text = orchestrator.reply_text(data, cut=cut)
    except OrchestratorError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(text, str)
