"""A 429 whose Retry-After is neither seconds nor a date is a rate limit (re-test 20 #9).

``Retry-After: 0x10`` (or an empty value, or words) made `email.utils.parsedate_to_datetime`
raise inside the reading of the error: the request was stored as an ``internal`` error
(lmmprobe's own fault), not asked again, and a traceback was printed under a "backend raised
ValueError" warning. It is now read as a rate limit that named no wait.
"""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
from tests.console import lmmprobe
from tests.models.test_openai_hostile import Answer, _reply, _rows, _server

pytest.importorskip("openai")


def _limited_once(retry_after: str) -> Answer:
    """A server answering its first request 429 with `retry_after`, the others "(A)"."""
    seen: list[int] = []

    def answer(conn: socket.socket) -> None:
        seen.append(1)
        if len(seen) == 1:
            body = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
            head = f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\n"
        else:
            body = _reply()
            head = "HTTP/1.1 200 OK\r\n"
        conn.sendall(
            head.encode("latin-1")
            + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            + body
        )

    return answer


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
@pytest.mark.parametrize("retry_after", ["", "0x10", "soon", "Wed, 99 Foo 2015 07:28:00 GMT"])
def test_an_unreadable_retry_after_is_a_rate_limit_asked_again(
    tmp_path: Path, retry_after: str, transport: str
) -> None:
    if transport == "aiohttp":
        pytest.importorskip("aiohttp")
    db = tmp_path / "db.sqlite"
    with _server(_limited_once(retry_after)) as (url, heads):
        done = lmmprobe("run", "-m", f"openai:vlm@{url},transport={transport}",
                        "--data", _rows(tmp_path), "--db", db, timeout=120,
                        OPENAI_API_KEY="test-key")  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Traceback" not in out and "internal" not in out, out
    assert len(heads) == 2  # asked again after the rate limit
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT error_type FROM responses").fetchall() == [(None,)]
