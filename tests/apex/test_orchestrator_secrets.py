"""An APEx orchestrator whose URL holds a password never shows it (re-test 20 of issue 34, #3).

The orchestrator named itself by its spec as written (``openai:m@http://u:PASSWORD@host/v1``),
and a failed chat request's message started with that name: the password was printed on the
terminal ("orchestrator failed" and the final error line) and written to report.md and
report.json, whose spec fields were redacted but whose stop reason was not.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import ClassVar

from tests.console import lmmprobe, lmmprobe_with_key

from lmmprobe.testing.openai_server import FakeOpenAIServer

PASSWORD = "Orch3strat0rSecretPw"


def test_a_failing_orchestrators_password_is_never_shown_or_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeOpenAIServer(always="bad_request") as server:
        url = server.base_url.replace("://", f"://user:{PASSWORD}@", 1)
        done = lmmprobe_with_key(
            "apex", "which colour is hardest to name", "-m", "random",
            "--orchestrator", f"openai:orch@{url},max_retries=0", "--out", out,
            "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10",
            "--max-calls", "2", timeout=180,
        )  # fmt: skip
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text[-3000:]
    assert "the orchestrator failed (openai:orch@http://user:[redacted]@127.0.0.1" in text, text
    assert PASSWORD not in text, text
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "report.md" for p in written), written
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path


def test_a_key_the_orchestrator_quotes_in_its_plan_is_never_written(tmp_path: Path) -> None:
    # Re-test 22: a server echoing the request's key inside a valid plan had it written to
    # report.json (the open questions and the transcript) and report.md. One key shaped as
    # OpenAI's, one with no shape at all (only the configured key's scrubbing finds it).
    out = tmp_path / "out"
    for key in ("sk-orchEchoKey1234567890abcdef", "PlainOrchestratorSecret-5b1e0c9d7a"):
        reply = '{"open_questions": ["is it ' + key + '?", "what is Bearer ' + key + '"]}'
        with FakeOpenAIServer(replies=[reply] * 3) as server:
            done = lmmprobe(
                "apex", "which colour is hardest to name", "-m", "random",
                "--orchestrator", f"openai:orch@{server.base_url},max_retries=0", "--out", out,
                "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10",
                "--max-calls", "3", OPENAI_API_KEY=key, timeout=180,
            )  # fmt: skip
        text = done.stdout + done.stderr
        assert "Traceback" not in text, text[-3000:]
        assert key not in text, text
        written = [p for p in out.rglob("*") if p.is_file()]
        assert {"report.json", "report.md"} <= {p.name for p in written}, written
        for path in written:
            assert key.encode() not in path.read_bytes(), path
        assert "is it [redacted]?" in (out / "report.json").read_text()


class _Orchestrator(http.server.BaseHTTPRequestHandler):
    """A chat server keeping every request's body; its plans are opening questions only."""

    bodies: ClassVar[list[bytes]] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        content = json.dumps({"open_questions": ["which colour?"]})
        reply = {"choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}]}  # fmt: skip
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_models_url_password_is_never_sent_to_the_orchestrator_nor_shown(
    tmp_path: Path,
) -> None:
    # Re-test 22: the models' specs went to the orchestrator's server as written (its system
    # message and the report's state), a URL's password and ?api_key= with them: a hosted
    # orchestrator's provider received them. The conclusions from the numbers alone, shown
    # and written to report.json and report.md, named the models by the raw spec too.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Orchestrator)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "out"
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        model = f"openai:vlm@{url.replace('://', f'://user:{PASSWORD}@')}?api_key={PASSWORD}x"
        done = lmmprobe_with_key(
            "apex", "which colour is hardest to name", "-m", model, "-m", "random",
            "--orchestrator", f"openai:orch@{url},max_retries=0", "--out", out,
            "--images-per-answer", "2", "--image-size", "32", "--bootstrap", "10",
            "--max-calls", "2", timeout=180,
        )  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text[-3000:]
    assert len(_Orchestrator.bodies) == 2, text[-3000:]
    for body in _Orchestrator.bodies:
        assert PASSWORD.encode() not in body
    assert b"openai:vlm@http://user:[redacted]@127.0.0.1" in _Orchestrator.bodies[0]
    assert PASSWORD not in text, text
    assert "openai:vlm@http://user:[redacted]@127.0.0.1" in text
    for path in (p for p in out.rglob("*") if p.is_file()):
        assert PASSWORD.encode() not in path.read_bytes(), path
    assert "no experiment was run" in (out / "report.md").read_text()
