"""A model server process lmmprobe starts for a run, and ends with the run or with lmmprobe.

`LocalServer.start` runs a server command (``vllm serve MODEL ...``) in a session of its own,
with its output in a log file, and waits until ``GET /v1/models`` answers on its loopback port.
The port was free when it was picked, but any local process may bind it first, while the server
loads: so the server is given a key of its own for the run (in its environment, never on its
command line), and it counts as started only once ``/v1/models`` refuses a request without the
key and answers one with it. Each probe has a deadline for the whole exchange and reads at most
`MAX_PROBE_BYTES` (a server that trickles a byte a second cannot hold the start past its
timeout);
`LocalServer.stop` ends it: SIGTERM to its process group, SIGKILL after a grace period.

Ending with lmmprobe: the server runs in its own session, so a Ctrl-C in the terminal reaches
lmmprobe alone, which stops the server on its way out (the runner's ``finally``). A lmmprobe that
dies without running its clean-up (SIGKILL, a crash of the interpreter) is covered by the
reaper lmmprobe also uses for a local Ray instance (``lmmprobe/_reaper.py``, a standard-library
script run by path, not imported): it waits on a pipe only this process holds and, when the
pipe closes, SIGKILLs every process carrying this server's mark in its environment
(`OWNER_VARIABLE`) and their descendants, so neither the server nor the engine processes it
forks are left holding a GPU.
"""

from __future__ import annotations

import atexit
import contextlib
import http.client
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from lmmprobe.models.api_keys import redact_command, redact_text, scrub_secrets, scrubbed_value

__all__ = [
    "LOOPBACK",
    "MAX_PROBE_BYTES",
    "MAX_VERSION_CHARS",
    "OWNER_VARIABLE",
    "LocalServer",
    "ServerStartError",
    "free_port",
    "get_json",
    "probe",
]

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
OWNER_VARIABLE = "LMMPROBE_SERVER_OWNER"
"""Set in the server's environment (inherited by what it starts): the reaper's mark."""
POLL_S = 0.25
"""How often a starting server is asked whether it answers."""
STOP_GRACE_S = 30.0
"""How long a stopping server may take to exit after SIGTERM before it is SIGKILLed."""
TAIL_LINES = 6
"""Lines of the server's log quoted in an error."""
PROBE_S = 2.0
"""The most one probe (connection, request, headers and body) may take."""
MAX_PROBE_BYTES = 1 << 20
"""The most bytes of a probe's body read: a model list or a version is a few hundred."""

MAX_VERSION_CHARS = 64
"""How much of the version a server reports is recorded (vLLM's are a dozen characters)."""

# The reaper sits in the run package (it also ends local Ray instances); it is a script run by
# path with the standard library only, so starting it imports nothing from a higher layer.
_REAPER = Path(__file__).resolve().parents[1] / "_reaper.py"


class ServerStartError(ValueError):
    """The server exited before it answered, or did not answer in time (one line, log tail)."""


def free_port() -> int:
    """A TCP port free on the loopback interface now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last non-blank lines of a log, joined with `` | `` into one line, secrets taken out.

    The excerpt goes into an error message (the terminal, a CI log): a server that prints its
    settings or environment as it dies would otherwise show the run's key, ``HF_TOKEN=...`` or a
    pasted ``sk-...`` there (re-test 13 #8). The log file itself is the server's own.
    """
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"(the log cannot be read: {exc})"
    kept = [" ".join(line.split()) for line in text.splitlines() if line.strip()][-lines:]
    return scrub_secrets(redact_text(" | ".join(kept))) if kept else "(the log is empty)"


def probe(url: str, key: str | None = None, timeout: float = PROBE_S) -> tuple[int | None, Any]:
    """``GET url`` (``http://`` only): its status and its JSON body (None when it is not JSON).

    The whole exchange ends within `timeout` seconds, however slowly the server sends its
    headers or body (a socket timeout alone bounds each read, not their sum), and at most
    `MAX_PROBE_BYTES` of the body are read (a longer one reads as None). Straight to the
    address: an ``http_proxy`` in the environment never sees these requests.

    Args:
        url: The address.
        key: Sent as ``Authorization: Bearer KEY``; None sends none.
        timeout: Seconds the whole exchange may take.

    Returns:
        (status, body); (None, None) when nothing answered in time.

    """
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or LOOPBACK, parts.port, timeout=timeout)
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    got: list[tuple[int | None, Any]] = []

    def ask() -> None:
        try:
            conn.request("GET", parts.path or "/", headers=headers)
            reply = conn.getresponse()
            body = b""
            while len(body) <= MAX_PROBE_BYTES:
                chunk = reply.read1(65536)
                if not chunk:
                    break
                body += chunk
            try:
                data = json.loads(body) if len(body) <= MAX_PROBE_BYTES else None
            except (ValueError, RecursionError):
                data = None
            got.append((reply.status, data))
        except (OSError, http.client.HTTPException):  # refused, reset, timed out, garbled
            got.append((None, None))

    worker = threading.Thread(target=ask, name="lmmprobe-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():  # still trickling: the socket is shut, which ends its read at once
        with contextlib.suppress(OSError, AttributeError):
            conn.sock.shutdown(socket.SHUT_RDWR)
        worker.join(1.0)
    conn.close()
    return got[0] if got else (None, None)


def get_json(url: str, key: str | None = None, timeout: float = PROBE_S) -> Any:
    """The JSON body of ``GET url`` (`probe`), or None when nothing (or no JSON) answers 200."""
    status, body = probe(url, key, timeout)
    return body if status == 200 else None


class LocalServer:
    """One server process on a loopback port (see the module docstring).

    Args:
        what: How messages name it (``vllm:org/model``).
        argv: The command line, port included.
        port: The loopback port it listens on.
        log_path: Where its output goes (created with its folder).
        key: The server's key for the run, given to it in `env` by the caller: the server
            counts as started only once it refuses a request without the key and answers one
            with it. None: whatever answers counts (a command that takes no key).
        env: Variables added to the server's environment (the key's, never on its command line).

    """

    def __init__(
        self,
        what: str,
        argv: Sequence[str],
        port: int,
        log_path: Path,
        *,
        key: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.what = what
        self.key = key
        self.env = dict(env or {})
        self.argv = list(argv)
        self.port = port
        self.log_path = log_path
        self.base_url = f"http://{LOOPBACK}:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._reaper: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self, timeout: float) -> Any:
        """Start the server and wait until ``GET /v1/models`` answers.

        Args:
            timeout: Seconds to wait for the first answer.

        Returns:
            The body of ``/v1/models``.

        Raises:
            ServerStartError: The command cannot run, the server exited first, or it did not
                answer within `timeout`; the message quotes the end of its log.

        """
        marker = secrets.token_hex(16)
        self._reaper = _start_reaper(marker)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        # A secret on the command line is refused before it gets here (`models.served`); a
        # caller of this class may not have checked, so the line written is redacted too.
        self._log.write(f"$ {' '.join(redact_command(self.argv))}\n".encode())
        self._log.flush()
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env, OWNER_VARIABLE: marker},
                # Its own session and process group: a Ctrl-C meant for lmmprobe does not reach
                # it, and `stop` can signal it and everything it forked at once.
                start_new_session=True,
            )
        except OSError as exc:
            self.stop()
            raise ServerStartError(
                f"{self.what}: cannot run the server command {self.argv[0]!r}: {exc}"
            ) from exc
        atexit.register(self.stop)  # a Python caller who never calls stop() still ends it
        try:
            return self._wait(timeout)
        except BaseException:  # a Ctrl-C while waiting too: nothing is left running
            self.stop()
            raise

    def _wait(self, timeout: float) -> Any:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ServerStartError(
                    f"{self.what}: the server exited with status {code} before it answered; "
                    f"its log ({self.log_path}) ends: {log_tail(self.log_path)}"
                )
            url = f"{self.base_url}/v1/models"
            status, body = probe(url, self.key)
            if status == 200 and body is not None:
                if self.key is None:
                    return body
                # A server that answers without the run's key is not the one started here (a
                # process that took the port while it loaded), or one that ignores the key.
                bare, _ = probe(url)
                if bare in (401, 403):
                    return body
                if bare == 200:
                    raise ServerStartError(
                        f"{self.what}: {url} answers without the key lmmprobe gave the server "
                        "it started, so what answers there is not known to be that server (another "
                        "process may hold the port, or the command takes no key from "
                        "VLLM_API_KEY / LMMPROBE_SERVER_KEY); nothing was sent to it. Its log "
                        f"({self.log_path}) ends: {log_tail(self.log_path)}"
                    )
            if time.monotonic() >= deadline:
                raise ServerStartError(
                    f"{self.what}: the server did not answer on {self.base_url}/v1/models "
                    f"within {timeout:g} s (raise startup_timeout= if it is still loading); "
                    f"its log ({self.log_path}) ends: {log_tail(self.log_path)}"
                )
            time.sleep(POLL_S)

    def version(self) -> str | None:
        """The version the server reports (vLLM: ``/version``; SGLang: ``/get_server_info``)."""
        for route in ("/version", "/get_server_info"):
            body = get_json(f"{self.base_url}{route}", self.key)
            if isinstance(body, dict) and body.get("version") is not None:
                # Recorded in the model's identity (results.json, the store, every report): a
                # label, cut and scrubbed as a finish reason is, not a megabyte of whatever the
                # server sent (re-test 22, #16).
                return scrubbed_value(str(body["version"]), MAX_VERSION_CHARS)
        return None

    def exit_note(self) -> str | None:
        """One line on why the server is gone, when it exited by itself (None while it runs)."""
        if self.proc is None or self.proc.poll() is None:
            return None  # running, or stopped by us
        return (
            f"the {self.what} server exited with status {self.proc.returncode} during the run; "
            f"its log ({self.log_path}) ends: {log_tail(self.log_path)}"
        )

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL) and what it started; safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is not None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop within %g s: killed", self.what, STOP_GRACE_S)
            # Whatever of its group outlived it (engine workers) goes with it.
            _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper.stdin is not None:
            reaper.stdin.close()  # end of file: the reaper kills any marked straggler, exits
            with contextlib.suppress(subprocess.TimeoutExpired):
                reaper.wait(timeout=15)
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _start_reaper(marker: str) -> subprocess.Popen[bytes] | None:
    """The reaper, waiting on a pipe only this process holds (None where /proc is missing)."""
    if not Path("/proc").is_dir() or not _REAPER.is_file():
        return None
    return subprocess.Popen(
        [sys.executable, "-I", str(_REAPER), marker, str(os.getpid()), OWNER_VARIABLE],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Its own session: a Ctrl-C or a kill of lmmprobe's process group leaves it to sweep.
        start_new_session=True,
    )
