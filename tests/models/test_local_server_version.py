"""The version a served model's server reports is recorded as a short label (re-test 22, #16).

`LocalServer.version` asks ``GET /version`` of the server lmmprobe started; what it returns
goes into the model's identity (results.json, the store, every report). A server answering a
megabyte there, or a key, had it recorded whole.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lmmprobe.models._local_server import MAX_VERSION_CHARS, LocalServer

KEY = "sk-" + "Q7x" * 14  # a key's shape: taken out wherever it stands


def _serving(version: object) -> Iterator[int]:
    body = json.dumps({"version": version}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def version_of(tmp_path: Path) -> Iterator[object]:
    """Call with a version to serve; returns what `LocalServer.version` records."""
    started: list[Iterator[int]] = []

    def record(version: object) -> str | None:
        serving = _serving(version)
        started.append(serving)
        port = next(serving)
        return LocalServer("vllm:m", ["true"], port, tmp_path / "log").version()

    yield record
    for serving in started:
        serving.close()


def test_a_plain_version_is_recorded_as_it_is(version_of) -> None:  # type: ignore[no-untyped-def]
    assert version_of("0.11.2") == "0.11.2"


def test_a_version_of_a_megabyte_is_recorded_cut(version_of) -> None:  # type: ignore[no-untyped-def]
    recorded = version_of("9" * 900_000)
    assert recorded is not None
    assert len(recorded) < MAX_VERSION_CHARS + 40
    assert recorded.endswith("... (900,000 characters)")


def test_a_key_in_the_version_is_never_recorded_even_across_the_cut(version_of) -> None:  # type: ignore[no-untyped-def]
    for version in (f"1.0 {KEY}", "x" * (MAX_VERSION_CHARS - 10) + " " + KEY):
        recorded = version_of(version)
        assert recorded is not None
        assert KEY[:12] not in recorded, recorded
