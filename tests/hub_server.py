"""The HTTP plumbing of the loopback Hugging Face Hub fakes the tests use.

`LoopbackHub` serves on 127.0.0.1 from a thread, records each ``METHOD path`` asked in
`requests`, and hands every GET, HEAD and POST to `answer`; a subclass says what the Hub's API
answers (a dataset repo for data loading in tests/data/benchmarks, a model repo for
``hf download`` in tests/models). Use as a context manager.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import unquote, urlparse

Answer = tuple[int, bytes, dict[str, str]]
"""Status, body and headers (Content-Type defaults to JSON)."""


class LoopbackHub(ABC):
    """A Hub stand-in on a free loopback port: `url` is what ``HF_ENDPOINT`` points at."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _route(self, head: bool = False) -> None:
                url = urlparse(self.path)
                hub.requests.append(f"{self.command} {url.path}")
                body = b""
                if self.command == "POST":
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                code, payload, headers = hub.answer(unquote(url.path), url.query, body)
                self.send_response(code)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if not head:
                    self.wfile.write(payload)

            def do_GET(self) -> None:
                self._route()

            def do_HEAD(self) -> None:
                self._route(head=True)

            def do_POST(self) -> None:
                self._route()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @abstractmethod
    def answer(self, path: str, query: str, body: bytes) -> Answer:
        """What the Hub answers to `path` (unquoted), its query string and a POST's body."""

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
