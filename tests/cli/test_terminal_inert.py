"""Hostile text reaches the terminal and results.md inert (issue 23, item 5).

A server's error text, data values (sample ids, ``--by`` keys and values), model names and APEx
queries carry terminal control sequences: clear screen, cursor moves, OSC 8 links, OSC 52
clipboard writes, the one-byte C1 CSI, a carriage return that overwrites the line, and the
U+202E bidi override. Every test goes through the installed console script, and asserts that no
raw control byte reaches stdout, stderr or the files a person opens, and that the escaped form
(``\\x1b``) is there to see.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import threading
import tty
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image
from rich.text import Text

from lmmprobe.testing.openai_server import FakeOpenAIServer

CLEAR = "\x1b[2J\x1b[H"
"""Clear the screen, cursor home: what a hostile server sends before its fake verdict."""

PAYLOAD = (
    f"{CLEAR}FAKE: all answers correct"
    "\x1b[5A\x1b[2K"  # cursor up 5 lines, erase the line
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # OSC 8 hidden link
    "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: write the clipboard
    "\x9b31m"  # C1 CSI (one byte): red
    "\u202eevil\u2066x\u2069"  # bidi override and isolate
    "\rover"  # carriage return: overwrite the line
)

RAW = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)"
)
"""Any control character a terminal would obey (newline, tab and a CRLF line end excepted)."""


def _lmmprobe(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    env = {**os.environ, "COLUMNS": "200", "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [exe, *map(str, args)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def _assert_inert(text: str, where: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
    assert not found, f"raw control characters {found} reach {where}:\n{text}"


def _assert_output_inert(proc: subprocess.CompletedProcess[str]) -> None:
    _assert_inert(proc.stdout, "stdout")
    _assert_inert(proc.stderr, "stderr")
    assert "Traceback" not in proc.stdout + proc.stderr


class _ErrorServer:
    """An OpenAI-compatible endpoint that answers every chat completion 400 with `message`."""

    def __init__(self, message: str) -> None:
        error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
        body = json.dumps({"error": error}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> _ErrorServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def hostile_data(tmp_path: Path) -> Iterator[Path]:
    """Four rows whose id, ``--by`` key and group values carry the payload."""
    Image.new("RGB", (8, 8), "blue").save(tmp_path / "b.png")
    rows = [
        {"id": f"s{i}{PAYLOAD}", "images": ["b.png"], "question": "Color?",
         "choices": ["red", "blue"], "answer": 1, "metadata": {f"k{PAYLOAD}": f"g{i % 2}{PAYLOAD}"}}
        for i in range(4)
    ]  # fmt: skip
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    yield data


def test_server_error_text_is_shown_escaped(tmp_path: Path) -> None:
    with _ErrorServer(f"bad image {PAYLOAD}") as server:
        spec = f"openai:fake-vlm@{server.base_url}"
        proc = _lmmprobe(
            "run", "-m", spec, "--limit", "2", "-q", "--db", tmp_path / "db", "--out", tmp_path / "o"
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    _assert_output_inert(proc)
    assert r"HTTP 400: bad image \x1b[2J\x1b[HFAKE: all answers correct" in proc.stdout
    assert r"\x9b31m\u202eevil" in proc.stdout
    shown = _lmmprobe("show", "latest", "--db", tmp_path / "db")
    assert shown.returncode == 0, shown.stderr
    _assert_output_inert(shown)
    assert r"\x1b]52;c;cHduZWQ=\x07" in shown.stdout
    _assert_inert((tmp_path / "o" / "results.md").read_text(encoding="utf-8"), "results.md")


def test_ids_by_values_and_model_names_are_shown_escaped(
    tmp_path: Path, hostile_data: Path
) -> None:
    key = f"k{PAYLOAD}"
    with FakeOpenAIServer() as server:
        spec = f"openai:fake{CLEAR}vlm@{server.base_url}"
        proc = _lmmprobe(
            "run", "-m", spec, "-m", "first", "--data", hostile_data, "--by", key, "-q",
            "--db", tmp_path / "db", "--out", tmp_path / "o",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _assert_output_inert(proc)
    assert r"g0\x1b[2J\x1b[HFAKE" in proc.stdout  # a --by group
    assert r"fake\x1b[2J\x1b[Hvlm" in proc.stdout  # the model name
    md = (tmp_path / "o" / "results.md").read_text(encoding="utf-8")
    _assert_inert(md, "results.md")
    assert r"k\x1b\[2J\x1b\[HFAKE" in md and r"\u202eevil" in md  # Markdown-escaped "["
    # Sample ids: the per-answer differences between the two models name them.
    compare = _lmmprobe("compare", "latest", "--db", tmp_path / "db")
    _assert_output_inert(compare)
    runs = _lmmprobe("runs", "--db", tmp_path / "db")
    assert runs.returncode == 0, runs.stderr
    _assert_output_inert(runs)
    for fmt in ("jsonl", "csv"):
        export = _lmmprobe("export", "latest", "--format", fmt, "--db", tmp_path / "db")
        assert export.returncode == 0, export.stderr
        assert "s0" in export.stdout
        if fmt == "jsonl":  # the same values, written as JSON escapes
            _assert_inert(export.stdout, "export --format jsonl")
            ids = {json.loads(line)["sample_id"] for line in export.stdout.splitlines()}
            assert f"s0{PAYLOAD}" in ids


def _on_a_terminal(*args: str | Path) -> tuple[int, str]:
    """Run the console script with its stdout on a pseudo-terminal: exit status and output."""
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    leader, follower = pty.openpty()
    tty.setraw(follower)  # no newline translation: what arrives is what the program wrote
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the follower side closed: all read
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [exe, *map(str, args)], stdout=follower, stderr=subprocess.PIPE, env=env, timeout=300
    )
    os.close(follower)
    reader.join(timeout=30)
    os.close(leader)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_documents_on_a_terminal_are_escaped_and_piped_ones_kept(
    tmp_path: Path, hostile_data: Path
) -> None:
    proc = _lmmprobe(
        "run", "-m", "first", "--data", hostile_data, "-q", "--db", tmp_path / "db",
        "--out", tmp_path / "o",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    code, shown = _on_a_terminal("export", "latest", "--format", "csv", "--db", tmp_path / "db")
    assert code == 0
    _assert_inert(shown, "export --format csv on a terminal")
    assert r"s0\x1b[2J\x1b[HFAKE" in shown
    # Piped, the CSV is the data as stored, for the program that reads it.
    exe = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))
    assert exe is not None
    piped = subprocess.run(
        [exe, "export", "latest", "--format", "csv", "--db", str(tmp_path / "db")],
        capture_output=True,
        timeout=300,
    )
    assert f"s0{PAYLOAD}".encode() in piped.stdout  # bytes: no newline translation


def test_rich_styles_still_reach_a_terminal() -> None:
    from lmmprobe.cli._common import InertConsole

    console = InertConsole(force_terminal=True, color_system="standard", width=200)
    with console.capture() as cap:
        console.print(f"[bold red]error:[/] {PAYLOAD}", highlight=False)
    out = cap.get()
    assert "\x1b[1;31merror:" in out  # rich's own style: a real escape sequence
    assert r"\x1b[2J" in out and CLEAR not in out  # the payload's: shown, not sent
    # Text built elsewhere (a progress bar's description) is escaped as it is written out.
    with console.capture() as cap:
        console.print(Text(f"model{PAYLOAD}", style="bold"))
    out = cap.get()
    assert out.startswith("\x1b[1mmodel\\x1b[2J") and CLEAR not in out


def test_apex_query_and_report_are_escaped_and_a_failed_orchestrator_exits_1(
    tmp_path: Path,
) -> None:
    query = f"Can models identify rotated images?{CLEAR}\u202e"
    with FakeOpenAIServer(always="bad_request") as server:
        proc = _lmmprobe(
            "apex", query, "-m", "random", "--orchestrator", f"openai:orch@{server.base_url}",
            "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache",
        )  # fmt: skip
    _assert_output_inert(proc)
    assert r"rotated images?\x1b[2J\x1b[H\u202e" in proc.stdout
    # Item 9: no experiment ran: exit 1, one line saying why.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no experiment ran: the orchestrator failed" in errors[0]
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    _assert_inert(md, "report.md")
    assert r"\x1b[2J" in md


def test_log_lines_are_escaped() -> None:
    import logging

    from lmmprobe.cli.main import _InertFormatter

    record = logging.LogRecord(
        "lmmprobe.run.executor", logging.WARNING, __file__, 1, "backend raised %s", (PAYLOAD,), None
    )
    line = _InertFormatter("%(levelname)s %(name)s: %(message)s").format(record)
    _assert_inert(line, "a log line")
    assert line.startswith(r"WARNING lmmprobe.run.executor: backend raised \x1b[2J")
